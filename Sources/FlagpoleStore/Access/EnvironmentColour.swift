/// The colour an environment is shown in, `#rrggbb`: six hexadecimal digits, kept in lowercase
/// so that one colour has one spelling.
public struct EnvironmentColour: Hashable, Sendable, CustomStringConvertible {
    /// `#rrggbb`, lowercase.
    public let rawValue: String

    /// Trusts `rawValue`; for values read back from the store (its CHECK allows only this form).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Reads `#rrggbb` in either case.
    ///
    /// - throws: `TenancyError.invalidColour` when `text` is not `#` and six hexadecimal digits.
    public init(validating text: String) throws(TenancyError) {
        let lowercased = text.lowercased()
        let isHexDigit = { (byte: UInt8) in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        }
        guard lowercased.utf8.count == 7, lowercased.hasPrefix("#"), lowercased.utf8.dropFirst().allSatisfy(isHexDigit)
        else { throw TenancyError.invalidColour(text) }
        rawValue = lowercased
    }

    /// Red, green and blue, each 0 to 255.
    public var components: (red: Int, green: Int, blue: Int) {
        let value = Int(rawValue.dropFirst(), radix: 16) ?? 0
        return (value >> 16 & 0xFF, value >> 8 & 0xFF, value & 0xFF)
    }

    /// `#rrggbb`.
    public var description: String { rawValue }
}
