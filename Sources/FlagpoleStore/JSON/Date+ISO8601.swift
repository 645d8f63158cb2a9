import Foundation

extension Date {
    /// ISO 8601 in UTC, as every JSON output and listing writes times.
    public var iso8601: String {
        formatted(.iso8601)
    }

    /// ISO 8601 in UTC with milliseconds, as the per-user history keeps time: a time printed
    /// there can be passed back to --since, --until or --at without losing events.
    public var iso8601Milliseconds: String {
        formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
