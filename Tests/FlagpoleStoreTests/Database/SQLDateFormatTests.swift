import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Stored dates")
struct SQLDateFormatTests {
    @Test("Dates read back as written, to the millisecond, across centuries, leap days and the epoch")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let fixed = [
            "1970-01-01 00:00:00.000", "2000-02-29 23:59:59.999", "1969-12-31 23:59:59.001", "2400-03-01 12:00:00.500",
        ]
        let random = (0..<2_000).map { _ in
            SQLDateFormat.string(
                from: Date(
                    timeIntervalSince1970: Double(
                        Int64.random(in: -5_000_000_000_000...15_000_000_000_000, using: &generator)) / 1_000))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        for text in fixed + random {
            let parsed = try #require(SQLDateFormat.date(from: text), "\(text)")
            #expect(parsed == formatter.date(from: text), "\(text)")
            #expect(SQLDateFormat.string(from: parsed) == text)
        }
        #expect(SQLDateFormat.date(from: "2026-11-25 17:00:00")?.timeIntervalSince1970 == 1_795_626_000)
        for bad in ["", "2026-11-25", "2026-13-01 00:00:00", "2026-11-25T17:00:00", "2026-11-25 17:00:00,000"] {
            #expect(SQLDateFormat.date(from: bad) == nil, "\(bad)")
        }
    }
}
