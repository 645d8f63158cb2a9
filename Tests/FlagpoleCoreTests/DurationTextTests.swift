import FlagpoleCore
import Testing

@Suite("Durations as text")
struct DurationTextTests {
    @Test("Whole numbers with units, largest first, read as seconds and written back the same way")
    func readsAndWrites() {
        let cases: [(String, Int)] = [
            ("1d", 86_400), ("30m", 1_800), ("1d12h", 129_600), ("45s", 45), ("1h30m5s", 5_405),
        ]
        for (text, seconds) in cases {
            #expect(DurationText.seconds(from: text) == seconds, "\(text)")
            #expect(DurationText.text(seconds: seconds) == text)
        }
        #expect(DurationText.seconds(from: "24h") == 86_400)
        #expect(DurationText.text(seconds: 90) == "1m30s")
        #expect(DurationText.seconds(from: "0s") == 0)
    }

    @Test("Anything else is no duration: no unit, a unit twice or out of order, signs, decimals, spaces, overflow")
    func refuses() {
        for text in ["", "24", "h", "1h1d", "1h1h", "-1h", "1.5h", "1 h", "24H", "1w", "9999999999d", "1h "] {
            #expect(DurationText.seconds(from: text) == nil, "\(text)")
        }
    }
}
