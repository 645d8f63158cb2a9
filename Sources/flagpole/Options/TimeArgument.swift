import ArgumentParser
import Foundation

/// A point in time given on the command line: ISO 8601 in UTC or with an offset
/// (`2026-11-22T09:30:00Z`, with or without fractional seconds), or a date alone (`2026-11-22`,
/// midnight UTC).
enum TimeArgument {
    /// - throws: `ValidationError` naming the accepted forms.
    static func parse(_ text: String, option: String) throws -> Date {
        let strategies: [Date.ISO8601FormatStyle] = [
            .iso8601,
            Date.ISO8601FormatStyle(includingFractionalSeconds: true),
            Date.ISO8601FormatStyle().year().month().day(),
        ]
        for strategy in strategies {
            if let date = try? Date(text, strategy: strategy) { return date }
        }
        throw ValidationError(
            "\(option) \"\(text)\" is not a time: use ISO 8601, e.g. 2026-11-22T09:30:00Z or 2026-11-22.")
    }
}
