import FlagpoleCore
import Foundation

/// How long each step of a ramp holds before the next (docs/RAMPS.md).
public enum RampHold: Hashable, Sendable, CustomStringConvertible {
    /// A length of time after the step was applied: `24h`.
    case duration(seconds: Int)
    /// The first such moment at least an hour after the step was applied: every day, or
    /// Monday to Friday, at a time of a time zone (`weekdays at 10:00 Europe/Berlin`).
    /// The zone is an IANA identifier, as written (`TimeZone` would name `UTC` `GMT`).
    case calendar(weekdaysOnly: Bool, hour: Int, minute: Int, zone: String)

    /// The shortest hold of a calendar hold: a step applied at 09:59 waits for tomorrow's 10:00.
    public static let shortestCalendarHold: TimeInterval = 3600

    /// The hold `text` writes: a duration (`24h`, `1d12h`) or `daily|weekdays at HH:MM ZONE`.
    ///
    /// - throws: `RampError.invalidHold`, `RampError.holdOutOfRange`.
    public init(parsing text: String) throws(RampError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let seconds = DurationText.seconds(from: text) {
            self = .duration(seconds: seconds)
            try check()
            return
        }
        guard let match = text.wholeMatch(of: /(daily|weekdays) at ([0-9]{1,2}):([0-9]{2}) ([A-Za-z_\/+\-0-9]+)/),
            let hour = Int(match.2), let minute = Int(match.3), hour < 24, minute < 60,
            TimeZone(identifier: String(match.4)) != nil
        else { throw RampError.invalidHold(text) }
        self = .calendar(weekdaysOnly: match.1 == "weekdays", hour: hour, minute: minute, zone: String(match.4))
    }

    /// Refuses a duration under a second or over 90 days.
    ///
    /// - throws: `RampError.holdOutOfRange`.
    public func check() throws(RampError) {
        if case .duration(let seconds) = self, !(1...RampError.longestHold).contains(seconds) {
            throw RampError.holdOutOfRange(seconds: seconds)
        }
    }

    /// Whether it holds until a time of day rather than for a length of time.
    public var isCalendar: Bool {
        if case .calendar = self { return true }
        return false
    }

    /// How a step is held, in a sentence: `1d`, or `until weekdays at 10:00 Europe/Berlin`.
    public var phrase: String { isCalendar ? "until \(description)" : description }

    public var description: String {
        switch self {
        case .duration(let seconds): DurationText.text(seconds: seconds)
        case .calendar(let weekdaysOnly, let hour, let minute, let zone):
            "\(weekdaysOnly ? "weekdays" : "daily") at \(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute) \(zone)"
        }
    }

    /// When a step applied (or due) at `date` is over.
    public func end(after date: Date) -> Date {
        switch self {
        case .duration(let seconds):
            return date.addingTimeInterval(TimeInterval(seconds))
        case .calendar(let weekdaysOnly, let hour, let minute, let zone):
            var calendar = Calendar(identifier: .gregorian)
            // Checked when the hold was read; a zone a later tzdata dropped counts as UTC.
            calendar.timeZone = TimeZone(identifier: zone) ?? .gmt
            let moment = DateComponents(hour: hour, minute: minute, second: 0)
            // A time a clock change skips (02:30 the night clocks go forward) is the next that exists.
            let next = { (after: Date) in
                calendar.nextDate(after: after, matching: moment, matchingPolicy: .nextTime)
                    ?? after.addingTimeInterval(86_400)
            }
            var end = next(date.addingTimeInterval(Self.shortestCalendarHold - 0.001))
            // Sunday is 1, Saturday 7.
            while weekdaysOnly, [1, 7].contains(calendar.component(.weekday, from: end)) { end = next(end) }
            return end
        }
    }
}
