import Foundation

/// A point in time written as text, as the command line's `--since`, `--until` and `--at` and the
/// API's `since`, `until` and `at` query parameters take it.
///
/// ISO 8601 with a time zone, with or without fractional seconds (`2026-11-22T09:30:00Z`,
/// `2026-11-22T10:30:00+01:00`, `2026-11-22T09:30:00.250Z`), or a date alone (`2026-11-22`,
/// midnight UTC).
public enum TimeText {
    /// Examples of the accepted forms, for error messages.
    public static let examples = "2026-11-22T09:30:00Z or 2026-11-22"

    /// The time `text` names, or `nil` when it is none of the accepted forms.
    public static func date(from text: String) -> Date? {
        for format in formats {
            if let date = try? format.parse(text) { return date }
        }
        return nil
    }

    /// The accepted forms, tried in order: the full forms before the date alone.
    private static let formats: [Date.ISO8601FormatStyle] = [
        Date.ISO8601FormatStyle(),
        Date.ISO8601FormatStyle(includingFractionalSeconds: true),
        Date.ISO8601FormatStyle().year().month().day(),
    ]
}
