import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Ramp holds")
struct RampHoldTests {
    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test("A hold is a duration, or a time of day daily or on weekdays in a zone; written back as read")
    func parses() throws {
        #expect(try RampHold(parsing: "24h") == .duration(seconds: 86_400))
        #expect(try RampHold(parsing: "1d12h").description == "1d12h")
        let berlin = try RampHold(parsing: "weekdays at 10:00 Europe/Berlin")
        #expect(berlin.description == "weekdays at 10:00 Europe/Berlin" && berlin.isCalendar)
        #expect(try RampHold(parsing: " daily at 9:05 UTC ").description == "daily at 09:05 UTC")
        for text in [
            "sometimes", "weekdays at 25:00 UTC", "daily at 10:60 UTC", "weekdays at 10:00 Mars/Olympus",
            "weekly at 10:00 UTC", "",
        ] {
            #expect(throws: RampError.invalidHold(text.trimmingCharacters(in: .whitespaces))) {
                try RampHold(parsing: text)
            }
        }
        #expect(throws: RampError.holdOutOfRange(seconds: 0)) { try RampHold(parsing: "0s") }
        #expect(throws: RampError.holdOutOfRange(seconds: 91 * 86_400)) { try RampHold(parsing: "91d") }
    }

    @Test("Weekdays at 10:00 Berlin: Friday's step holds until Monday, one applied just before ten waits a day")
    func weekdays() throws {
        let hold = try RampHold(parsing: "weekdays at 10:00 Europe/Berlin")
        // Friday 27 November 2026, 15:00 in Berlin (UTC+1) → Monday 30th, 10:00.
        #expect(hold.end(after: Self.utc("2026-11-27T14:00:00Z")) == Self.utc("2026-11-30T09:00:00Z"))
        // Monday 08:59 → the same day's 10:00 is over an hour away.
        #expect(hold.end(after: Self.utc("2026-11-30T07:59:00Z")) == Self.utc("2026-11-30T09:00:00Z"))
        // Monday 09:30 → within the hour: Tuesday.
        #expect(hold.end(after: Self.utc("2026-11-30T08:30:00Z")) == Self.utc("2026-12-01T09:00:00Z"))
    }

    @Test("Across the clocks' change a daily hold keeps the local time, and a skipped time is the next that exists")
    func daylightSaving() throws {
        let daily = try RampHold(parsing: "daily at 10:00 Europe/Berlin")
        // Berlin goes from UTC+1 to UTC+2 on 28 March 2027: 10:00 local is 09:00Z, then 08:00Z.
        #expect(daily.end(after: Self.utc("2027-03-27T09:00:00Z")) == Self.utc("2027-03-28T08:00:00Z"))
        let skipped = try RampHold(parsing: "daily at 02:30 Europe/Berlin")
        let end = skipped.end(after: Self.utc("2027-03-27T01:30:00Z"))
        #expect(end > Self.utc("2027-03-28T00:59:59Z") && end <= Self.utc("2027-03-28T01:30:00Z"), "\(end)")
    }
}
