import FlagpoleStore
import Testing

/// Key, session and CSRF comparisons read every byte, wherever a guess first goes wrong, so
/// their timing can't be used to find a secret byte by byte. Counting the bytes read makes
/// that a deterministic check rather than a timing measurement.
@Suite("Constant-time comparison")
struct ConstantTimeTests {
    final class Counter {
        var reads = 0
    }

    /// Bytes that count how many of them are read.
    struct CountedBytes: Collection {
        let bytes: [UInt8]
        let counter: Counter

        var startIndex: Int { bytes.startIndex }
        var endIndex: Int { bytes.endIndex }
        func index(after index: Int) -> Int { index + 1 }
        subscript(position: Int) -> UInt8 {
            counter.reads += 1
            return bytes[position]
        }
    }

    static let secret: [UInt8] = (0..<32).map { UInt8($0 * 7 % 256) }

    @Test(
        "A guess wrong at its first byte, its last byte or nowhere reads all 64 bytes", arguments: [nil, 0, 1, 16, 31])
    func everyByteIsRead(wrongAt position: Int?) {
        var guess = Self.secret
        if let position { guess[position] ^= 0xFF }
        let counter = Counter()
        let equal = ConstantTime.isEqual(
            CountedBytes(bytes: Self.secret, counter: counter), CountedBytes(bytes: guess, counter: counter))
        #expect(equal == (position == nil))
        #expect(counter.reads == 64)
    }

    @Test("Different lengths are unequal (lengths are not secret: digests and tokens have fixed sizes)")
    func lengths() {
        #expect(!ConstantTime.isEqual([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(ConstantTime.isEqual([] as [UInt8], [] as [UInt8]))
    }
}
