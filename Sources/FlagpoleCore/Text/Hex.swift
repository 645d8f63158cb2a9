/// Lowercase hexadecimal text of bytes: SHA-256 sums, ETags, API keys, salts and tokens.
public enum Hex {
    /// `bytes` as lowercase hex digits, two per byte, most significant digit first.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        if let hex = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) {
            return hex
        }
        return Array(bytes).withUnsafeBytes(encode)
    }

    /// The bytes of `buffer` as lowercase hex digits, written straight into the string's storage:
    /// users' own documents are hashed, and their sums written out, on every fetch.
    public static func encode(_ buffer: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 2 * buffer.count) { hex in
            for (index, byte) in buffer.enumerated() {
                hex[2 * index] = digit(byte >> 4)
                hex[2 * index + 1] = digit(byte & 0x0F)
            }
            return 2 * buffer.count
        }
    }

    /// The bytes `text` spells in hex digits (either case), `nil` when it has an odd length or
    /// a character that is not a hex digit.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The ASCII digit of a value below 16: `0`–`9`, then `a`–`f`.
    @inline(__always)
    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }
}

extension Sequence<UInt8> {
    /// The bytes as lowercase hex digits, two per byte (`[0x0f, 0xa0]` is `"0fa0"`).
    public var hexEncoded: String { Hex.encode(self) }
}
