/// An environment's feature rules and segments, as one revision keeps them beside its
/// features.json and configs file (a config's own rules are part of its definition):
///
///     {"features": {"New checkout": [RULE, …]},
///      "segments": [{"name": "beta-testers", "description": "…", "clauses": [CLAUSE, …],
///                    "users": {"sha256": "…", "count": 1200}}]}
///
/// A segment's listed users are kept apart, once per distinct list, under the SHA-256 of
/// `SegmentUsers.listBytes`: revisions that don't change a list don't copy it.
public struct TargetingDocument: Hashable, Sendable {
    /// By feature name, as written; only features with rules.
    public var featureRules: [String: [TargetingRule]]
    /// By name.
    public var segments: [String: SegmentDefinition]

    public init(featureRules: [String: [TargetingRule]] = [:], segments: [String: SegmentDefinition] = [:]) {
        self.featureRules = featureRules.filter { !$0.value.isEmpty }
        self.segments = segments
    }

    public var isEmpty: Bool { featureRules.isEmpty && segments.isEmpty }

    /// A feature's rules, its name compared as the app compares names.
    public func rules(of feature: String) -> [TargetingRule]? {
        if let rules = featureRules[feature] { return rules }
        let key = Feature.nameKey(feature)
        return featureRules.first { Feature.nameKey($0.key) == key }?.value
    }

    /// The bytes a revision keeps: pretty JSON, features and segments in code-point order of
    /// their names, so equal documents have equal bytes.
    public func rendered() -> [UInt8] {
        var object = JSONObject()
        if !featureRules.isEmpty {
            object.append(
                "features",
                .object(
                    JSONObject(
                        featureRules.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                            JSONObject.Member(key: $0.key, value: .array($0.value.map(\.jsonValue)))
                        })))
        }
        if !segments.isEmpty {
            object.append(
                "segments",
                .array(
                    segments.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.map(\.jsonValue)))
        }
        return JSONWriter(style: .pretty).bytes(of: .object(object))
    }

    /// Reads the bytes `rendered()` wrote; `nil` or empty bytes are the empty document.
    ///
    /// - throws: `ConfigsRefused` when the bytes are damaged (never for what Flagpole wrote).
    public init(stored bytes: [UInt8]?) throws(ConfigsRefused) {
        guard let bytes, !bytes.isEmpty else {
            self.init()
            return
        }
        self = try TargetingDecoder.decodeDocument(bytes)
    }
}

/// A segment as a revision keeps it: its definition, and its listed users by reference.
public struct SegmentDefinition: Hashable, Sendable {
    public var name: String
    public var description: String?
    public var clauses: [Clause]
    /// `nil`: the segment lists no users.
    public var users: SegmentUsers?

    public init(name: String, description: String? = nil, clauses: [Clause] = [], users: SegmentUsers? = nil) {
        self.name = name
        self.description = description
        self.clauses = clauses
        self.users = users
    }

    /// The definition of `segment`, whose users' list (kept apart) `users` names.
    public init(_ segment: Segment, users: SegmentUsers?) {
        self.init(name: segment.name, description: segment.description, clauses: segment.clauses, users: users)
    }

    /// The segment, with the users `list` holds (those `users` names).
    public func segment(users list: Set<UserID>) -> Segment {
        Segment(name: name, description: description, users: list, clauses: clauses)
    }

    public var jsonValue: JSONValue {
        var object: JSONObject = ["name": .string(name)]
        if let description { object.append("description", .string(description)) }
        if !clauses.isEmpty { object.append("clauses", .array(clauses.map(\.jsonValue))) }
        if let users {
            object.append("users", ["sha256": .string(users.sha256), "count": .number(Double(users.count))])
        }
        return .object(object)
    }
}

/// A reference to a segment's list of users: the SHA-256 of `listBytes` (the store computes it)
/// and how many ids.
public struct SegmentUsers: Hashable, Sendable {
    public var sha256: String
    public var count: Int

    public init(sha256: String, count: Int) {
        self.sha256 = sha256
        self.count = count
    }

    /// The ids in code-point order of their UTF-8, one per line: the same set, the same bytes.
    /// Ids never hold line breaks (`UserID`'s rules), so the list reads back unambiguously.
    public static func listBytes(_ users: Set<UserID>) -> [UInt8] {
        var bytes: [UInt8] = []
        for user in users.map(\.rawValue).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            bytes.append(contentsOf: user.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The ids of a list `listBytes` wrote.
    public static func users(inList bytes: [UInt8]) -> Set<UserID> {
        Set(bytes.split(separator: UInt8(ascii: "\n")).map { UserID(rawValue: String(decoding: $0, as: UTF8.self)) })
    }
}

extension TargetingRule {
    /// The rule as the API takes and gives it.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["id": .string(id)]
        if let description { object.append("description", .string(description)) }
        if !clauses.isEmpty { object.append("clauses", .array(clauses.map(\.jsonValue))) }
        let serve: JSONValue =
            switch self.serve {
            case .variation(let name): ["variation": .string(name)]
            case .split(let shares):
                [
                    "split": .array(
                        shares.map { ["variation": .string($0.variation), "weight": .number($0.weight)] })
                ]
            case .value(let value): ["value": value.jsonValue]
            }
        object.append("serve", serve)
        return .object(object)
    }

    /// The rule as compact JSON, a value of a config's rule in its type's form (a double keeps
    /// its decimal point, which `jsonValue` would drop).
    public func writeJSON(into output: inout [UInt8]) {
        guard case .value(let value) = serve, case .object(var object) = jsonValue else {
            output.append(contentsOf: JSONWriter(style: .compact).bytes(of: jsonValue))
            return
        }
        object.members.removeAll { $0.key == "serve" }
        output.append(contentsOf: JSONWriter(style: .compact).bytes(of: .object(object)).dropLast())
        output.append(contentsOf: #","serve":{"value":"#.utf8)
        value.writeJSON(into: &output)
        output.append(contentsOf: "}}".utf8)
    }
}

extension Clause {
    public var jsonValue: JSONValue {
        var object = JSONObject()
        if let attribute { object.append("attribute", .string(attribute)) }
        object.append("operator", .string(op.rawValue))
        object.append("values", .array(values.map(\.jsonValue)))
        return .object(object)
    }
}

extension Segment {
    /// The segment as the API takes and gives it, its users listed.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["name": .string(name)]
        if let description { object.append("description", .string(description)) }
        object.append(
            "users",
            .array(
                users.map(\.rawValue).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map(JSONValue.string)))
        object.append("clauses", .array(clauses.map(\.jsonValue)))
        return .object(object)
    }
}
