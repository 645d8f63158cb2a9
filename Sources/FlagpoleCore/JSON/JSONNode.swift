/// A parsed JSON value that remembers where in the source each part was written.
///
/// The validator walks nodes so that every diagnostic can name a line and a column;
/// `value` drops the offsets once they are no longer needed.
public struct JSONNode: Sendable {
    /// What the node holds.
    public enum Content: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONNode])
        case object([Member])
    }

    /// One `"key": value` pair of an object node.
    public struct Member: Sendable {
        /// The key, unescaped.
        public var key: String
        /// The byte offset of the key's opening quote.
        public var keyOffset: Int
        /// The value.
        public var node: JSONNode
    }

    /// The value, with the nodes of its elements or members.
    public var content: Content
    /// The byte offset of the node's first character in the source.
    public var offset: Int

    /// The first member named `key`, when the node is an object.
    public func member(_ key: String) -> Member? {
        guard case .object(let members) = content else { return nil }
        return members.first { $0.key == key }
    }

    /// The value without source positions.
    public var value: JSONValue {
        switch content {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value): .number(value)
        case .string(let value): .string(value)
        case .array(let elements): .array(elements.map(\.value))
        case .object(let members):
            .object(JSONObject(members.map { JSONObject.Member(key: $0.key, value: $0.node.value) }))
        }
    }
}
