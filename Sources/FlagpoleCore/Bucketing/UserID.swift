/// The id of an app user, as the app's backend knows it (an account id, an install id, …).
///
/// An id is an opaque byte string: two ids are one user exactly when their UTF-8 bytes are
/// equal, as SQLite compares them and as the point hashes them. Swift's `String` equality would
/// make `"caf\u{E9}"` and `"cafe\u{301}"` one user although they have two points and two rows,
/// so equality, hashing and order here are the bytes', never the `String`'s.
public struct UserID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Longer ids are almost always a file read in the wrong format.
    public static let maximumLength = 256

    /// The id as given: compared, hashed and ordered by its UTF-8 bytes.
    public let rawValue: String

    /// Trusts `rawValue`; for values read back from the store.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Checks `text`: 1 to 256 bytes of UTF-8 without control characters, so every id prints
    /// on one line of a log, a CSV or a terminal. Spaces are allowed and significant.
    ///
    /// - throws: `CoreError.invalidUserID` saying which rule `text` breaks.
    public init(validating text: String) throws(CoreError) {
        let reason: String? =
            if text.isEmpty {
                "it is empty"
            } else if text.utf8.count > Self.maximumLength {
                "it is longer than \(Self.maximumLength) bytes"
            } else if text.unicodeScalars.contains(where: Self.breaksLines) {
                "it contains a control character or a line separator (a tab, a line break, U+0000–U+001F, U+007F–U+009F, U+2028, U+2029)"
            } else {
                nil
            }
        if let reason { throw CoreError.invalidUserID(value: text, reason: reason) }
        rawValue = text
    }

    /// C0 and C1 controls and the Unicode line and paragraph separators.
    private static func breaksLines(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// The id itself.
    public var description: String { rawValue }

    /// Whether two ids are one user: their UTF-8 bytes are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    /// Hashes the UTF-8 bytes, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        var text = rawValue
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Byte order, as SQLite sorts text.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}
