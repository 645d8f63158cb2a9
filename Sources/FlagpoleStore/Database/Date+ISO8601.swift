import Foundation

extension Date {
    /// ISO 8601 in UTC, as every JSON output and listing writes times.
    public var iso8601: String {
        formatted(.iso8601)
    }

    /// "2026-11-27 17:11 UTC": how sentences for people say a time (the dashboard's pages, then
    /// written in the viewer's zone; a ramp's summary).
    public var readableUTC: String {
        formatted(Self.readable) + " UTC"
    }

    private static let readable = Date.VerbatimFormatStyle(
        format:
            "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits)",
        timeZone: TimeZone(identifier: "UTC")!, calendar: Calendar(identifier: .gregorian))

    /// ISO 8601 in UTC with milliseconds, as the per-user history keeps time: a time printed
    /// there can be passed back to --since, --until or --at without losing events.
    public var iso8601Milliseconds: String {
        formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
