import Foundation

/// An RFC 6901 JSON pointer such as `/features/3/test-biases/1`.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    /// The pointer as text, `""` for the whole document.
    public private(set) var description: String

    /// The pointer to the whole document.
    public static let root = JSONPointer(description: "")

    /// The pointer to member `key` of the value this points at.
    public func appending(_ key: String) -> JSONPointer {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
            return JSONPointer(description: description + "/" + key)
        }
        let escaped = key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        return JSONPointer(description: description + "/" + escaped)
    }

    /// `other` read from the value this points at.
    public func appending(_ other: JSONPointer) -> JSONPointer {
        JSONPointer(description: description + other.description)
    }

    /// The reference tokens, unescaped: `["features", "3", "test-biases"]`.
    public var tokens: [String] {
        description.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    /// The pointer to element `index` of the array this points at.
    public func appending(_ index: Int) -> JSONPointer {
        JSONPointer(description: description + "/" + String(index))
    }
}
