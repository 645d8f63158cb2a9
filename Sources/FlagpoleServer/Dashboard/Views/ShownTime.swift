import Foundation

/// A moment as every dashboard page shows it: ISO 8601 for `<time datetime>`, and a readable UTC
/// text ("2026-11-27 17:11 UTC") until the page's script writes it in the viewer's zone, so that
/// every time on every page reads one way.
struct ShownTime: Sendable {
    var iso: String
    var text: String

    init(_ date: Date) {
        iso = date.formatted(.iso8601)
        text = date.readableUTC
    }

    /// How long from `start` to `end`, in the largest unit that keeps a number above 1:
    /// "less than a minute",
    /// "40 minutes", "5 hours", "3 days".
    static func duration(from start: Date, to end: Date) -> String {
        let seconds = max(0, end.timeIntervalSince(start))
        guard seconds >= 60 else { return "less than a minute" }
        let (count, unit): (Int, String) =
            switch seconds {
            case ..<3_600: (Int(seconds / 60), "minute")
            case ..<172_800: (Int(seconds / 3_600), "hour")
            default: (Int(seconds / 86_400), "day")
            }
        return "\(count) \(unit)\(count == 1 ? "" : "s")"
    }
}
