/// A JSON value, with object members kept in their source order.
///
/// Numbers are IEEE doubles, as the client's `JSONDecoder` reads them.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Whether the value is neither an array nor an object.
    public var isScalar: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    /// A short phrase naming the value for error messages, such as `the number 1`.
    public var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): "the number \(JSONWriter.format(value))"
        case .string(let value): "the string \"\(value.count > 40 ? value.prefix(40) + "…" : value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object whose members keep the order they were written in.
public struct JSONObject: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    /// One `"key": value` pair.
    public struct Member: Hashable, Sendable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in order.
    public var members: [Member]

    /// Creates an object from members in order.
    public init(_ members: [Member] = []) {
        self.members = members
    }

    /// Creates an object from a literal, keeping the order of its pairs.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// The value of the first member named `key`.
    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// Appends a member at the end.
    public mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
    }
}

extension JSONValue {
    /// Whether the two values are written alike: strings and keys compared by their UTF-8 bytes.
    ///
    /// `==` compares strings as Swift does, by canonical equivalence, so `"caf\u{E9}"` equals
    /// `"cafe\u{301}"`: the same to the app, but other bytes in a file. Deciding whether a
    /// document changed needs this comparison, or the store would keep one spelling while the
    /// revision's document holds the other.
    public func isIdentical(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.string(let text), .string(let otherText)):
            text.utf8.elementsEqual(otherText.utf8)
        case (.array(let elements), .array(let otherElements)):
            elements.count == otherElements.count && zip(elements, otherElements).allSatisfy { $0.isIdentical(to: $1) }
        case (.object(let object), .object(let otherObject)):
            object.isIdentical(to: otherObject)
        default:
            self == other
        }
    }
}

extension JSONObject {
    /// Whether the two objects have the same members in the same order, written alike (see
    /// `JSONValue.isIdentical(to:)`).
    public func isIdentical(to other: JSONObject) -> Bool {
        members.count == other.members.count
            && zip(members, other.members).allSatisfy {
                $0.key.utf8.elementsEqual($1.key.utf8) && $0.value.isIdentical(to: $1.value)
            }
    }
}
