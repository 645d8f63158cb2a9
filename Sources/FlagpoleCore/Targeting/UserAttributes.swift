/// The attributes a client sends beside a user id, checked and in one canonical form: what rules
/// read, what the store keeps as the user's last attributes, and what it compares by hash to
/// write them only when they change.
///
/// They come from OFREP's `context` (every key but `targetingKey`), from `flagpole evaluate
/// --attr KEY=VALUE`, and from the `attr.KEY=VALUE` query parameters of `features.json?user=` and
/// `configs.json?user=` (strings: a clause reads `"5"` as a number where it compares numbers).
public struct UserAttributes: Hashable, Sendable {
    /// By key.
    public let values: [String: AttributeValue]
    /// `{"key": value, …}` with keys in code-point order, compact: the same attributes always
    /// give the same bytes.
    public let canonicalBytes: [UInt8]
    /// Whether the store keeps them as the user's last, and rules move recorded groups by them:
    /// `false` for what was left of attributes over the limits (see `fitting(_:limits:)`).
    public private(set) var isKept = true

    /// How many attributes, and how many bytes of them, one user may have kept.
    public struct Limits: Hashable, Sendable {
        public var keys: Int
        public var bytes: Int

        public static let standard = Limits(keys: 50, bytes: 4_096)

        public init(keys: Int, bytes: Int) {
            self.keys = keys
            self.bytes = bytes
        }
    }

    /// Why attributes were refused.
    public enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// A key that is empty, too long, has control characters, or is `targetingKey`.
        case badKey(String)
        /// A value that is not a string, a number or a boolean.
        case notScalar(key: String, found: String)
        case tooManyKeys(count: Int, limit: Int)
        case tooLarge(bytes: Int, limit: Int)

        public var description: String {
            switch self {
            case .badKey(let key):
                key == EvaluationContext.userAttribute
                    ? "\"\(key)\" is the user id, not an attribute: send the id as the user and leave it out of the attributes"
                    : "the attribute name \"\(key.prefix(40))\" is not allowed: 1 to 128 bytes without control characters"
            case .notScalar(let key, let found):
                "the attribute \"\(key)\" is \(found): attributes are strings, numbers or booleans (write a nested value as \"\(key).field\")"
            case .tooManyKeys(let count, let limit):
                "\(count) attributes, over the \(limit) a user may have"
            case .tooLarge(let bytes, let limit):
                "the attributes take \(bytes) bytes, over the \(limit) a user may have"
            }
        }
    }

    public static let empty = UserAttributes(checked: [:])

    /// Checks `values` against the rules and `limits`.
    public init(_ values: [String: AttributeValue], limits: Limits = .standard) throws(Refusal) {
        for key in values.keys where !Self.isValidKey(key) { throw .badKey(key) }
        guard values.count <= limits.keys else { throw .tooManyKeys(count: values.count, limit: limits.keys) }
        self.init(checked: values)
        guard canonicalBytes.count <= limits.bytes else {
            throw .tooLarge(bytes: canonicalBytes.count, limit: limits.bytes)
        }
    }

    private init(checked values: [String: AttributeValue]) {
        self.values = values
        let members = values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { key, value in
            JSONObject.Member(key: key, value: value.jsonValue)
        }
        canonicalBytes = JSONWriter(style: .compact).bytes(of: .object(JSONObject(members)))
    }

    /// As many of `values` as `limits` allow, by key in code-point order, valid keys only, for a
    /// client that must be answered whatever it sends (a Bucketeer app, whose every poll would
    /// fail the same way): when something was left out, rules read the rest and nothing is kept.
    public static func fitting(_ values: [String: AttributeValue], limits: Limits = .standard) -> UserAttributes {
        if let whole = try? UserAttributes(values, limits: limits) { return whole }
        var kept: [String: AttributeValue] = [:]
        // `{}` and a comma between members: the canonical bytes, counted member by member.
        var bytes = 2
        let writer = JSONWriter(style: .compact)
        for key in values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where isValidKey(key) {
            guard kept.count < limits.keys else { break }
            let member = writer.bytes(of: .string(key)).count + 1 + writer.bytes(of: values[key]!.jsonValue).count
            let added = member + (kept.isEmpty ? 0 : 1)
            guard bytes + added <= limits.bytes else { continue }
            kept[key] = values[key]
            bytes += added
        }
        var partial = UserAttributes(checked: kept)
        partial.isKept = false
        return partial
    }

    /// Reads an OFREP evaluation context: every member but `targetingKey`.
    public init(context: JSONObject, limits: Limits = .standard) throws(Refusal) {
        var values: [String: AttributeValue] = [:]
        for member in context.members where member.key != EvaluationContext.userAttribute {
            switch member.value {
            case .string(let text): values[member.key] = .string(text)
            case .number(let number): values[member.key] = .number(number)
            case .bool(let flag): values[member.key] = .bool(flag)
            case .null: continue
            case .array, .object: throw .notScalar(key: member.key, found: member.value.summary)
            }
        }
        try self.init(values, limits: limits)
    }

    /// Reads the `attr.KEY=VALUE` pairs of a query (already percent-decoded); other pairs are
    /// the caller's. A key given twice keeps its last value.
    public init(query: [(key: String, value: String)], limits: Limits = .standard) throws(Refusal) {
        var values: [String: AttributeValue] = [:]
        for (key, value) in query where key.hasPrefix(Self.queryPrefix) {
            values[String(key.dropFirst(Self.queryPrefix.count))] = .string(value)
        }
        try self.init(values, limits: limits)
    }

    /// Reads attributes the store kept (their canonical bytes), which were checked when they
    /// arrived: `nil` when the bytes are not an object of scalars, which only damage explains.
    /// Their bytes are canonical already: kept as they are. A plan decodes every recorded
    /// user's attributes, so this reads the parser's nodes directly.
    public init?(stored bytes: [UInt8]) {
        guard let root = try? JSONParser.parse(bytes), case .object(let members) = root.content else { return nil }
        var values: [String: AttributeValue] = [:]
        values.reserveCapacity(members.count)
        for member in members {
            switch member.node.content {
            case .string(let text): values[member.key] = .string(text)
            case .number(let number): values[member.key] = .number(number)
            case .bool(let flag): values[member.key] = .bool(flag)
            case .null: continue
            case .array, .object: return nil
            }
        }
        self.values = values
        canonicalBytes = bytes
    }

    /// The prefix of a query parameter that carries an attribute.
    public static let queryPrefix = "attr."

    /// 64 bits of the canonical bytes' hash (FNV-1a): equal attributes, equal hashes, across
    /// processes and releases, so the store can skip writing attributes it already keeps.
    public var fingerprint: Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in canonicalBytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    static func isValidKey(_ key: String) -> Bool {
        (1...128).contains(key.utf8.count) && key != EvaluationContext.userAttribute
            && !key.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

extension AttributeValue {
    /// As JSON writes it.
    public var jsonValue: JSONValue {
        switch self {
        case .string(let text): .string(text)
        case .number(let number): .number(number)
        case .bool(let flag): .bool(flag)
        }
    }
}
