import FlagpoleCore

/// Why a Bucketeer `register_events` batch was refused whole: its events are lost, while the
/// same app's flags keep working.
public enum EventBatchRefusal: String, CaseIterable, Sendable, Codable {
    /// `401`: no key, or one the store doesn't know (a typo, a revoked key).
    case unknownKey = "unknown_key"
    /// `403`: a key of another tenant or environment.
    case otherEnvironment = "other_environment"
    /// `400` or `413`: a body that is no batch.
    case malformed
    /// `503`: the database was busy or away; the SDK sends the batch again.
    case unavailable

    /// How a person reads it: "unknown key".
    public var phrase: String { rawValue.replacing("_", with: " ") }
}

/// One environment's refused batches of one cause and one key, as a server counts them.
public struct RefusedBatchKey: Hashable, Sendable {
    public var path: EnvironmentPath
    public var cause: EventBatchRefusal
    /// The key sent as listings show keys (`fp_` and 8 digits); `""` when none was sent,
    /// `otherKey` for anything else, `manyKeys` past the keys a server keeps apart.
    public var keyPrefix: String

    /// What stands for a header that is no Flagpole key.
    public static let otherKey = "?"
    /// What stands for the keys past those a server keeps apart between two writes.
    public static let manyKeys = "*"

    public init(path: EnvironmentPath, cause: EventBatchRefusal, keyPrefix: String) {
        self.path = path
        self.cause = cause
        self.keyPrefix = keyPrefix
    }

    /// How `keyPrefix` shows a presented key: its listing prefix when it looks like a Flagpole
    /// key, never more of it.
    public static func shownPrefix(of key: String?) -> String {
        guard let key else { return "" }
        let prefix = key.utf8.prefix(APIKeySecret.prefixLength)
        guard key.hasPrefix(APIKeyKind.marker), prefix.count == APIKeySecret.prefixLength,
            prefix.dropFirst(APIKeyKind.marker.utf8.count).allSatisfy(\.isLowercaseHexDigit)
        else { return otherKey }
        return String(decoding: prefix, as: UTF8.self)
    }
}

/// An environment's refused event batches over a span of time (`flagpole env list`, the
/// dashboard's "Connect an app").
public struct RefusedEventBatches: Hashable, Sendable {
    /// Batches by cause, then by key prefix (see `RefusedBatchKey.keyPrefix`).
    public var batches: [EventBatchRefusal: [String: Int]]

    public init(batches: [EventBatchRefusal: [String: Int]] = [:]) {
        self.batches = batches
    }

    public var total: Int { batches.values.reduce(0) { $0 + $1.values.reduce(0, +) } }

    /// "12 event batches refused in the last 24 h: unknown key 10 (fp_1a2b3c4d 9, no key 1),
    /// malformed 2", or `nil` when none was.
    public func summary(span: String) -> String? {
        guard total > 0 else { return nil }
        let causes = EventBatchRefusal.allCases.compactMap { cause -> String? in
            guard let keys = batches[cause], !keys.isEmpty else { return nil }
            let count = keys.values.reduce(0, +)
            let byKey = keys.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { key, batches in
                "\(Self.keyPhrase(key)) \(batches)"
            }
            return "\(cause.phrase) \(count) (\(byKey.joined(separator: ", ")))"
        }
        return
            "\(total) event \(total == 1 ? "batch" : "batches") refused in \(span): \(causes.joined(separator: ", "))"
    }

    static func keyPhrase(_ prefix: String) -> String {
        switch prefix {
        case "": "no key"
        case RefusedBatchKey.otherKey: "not a Flagpole key"
        case RefusedBatchKey.manyKeys: "other keys"
        default: "\(prefix)…"
        }
    }

    public var jsonValue: JSONValue {
        .object(
            JSONObject(
                EventBatchRefusal.allCases.compactMap { cause in
                    batches[cause].map { keys in
                        JSONObject.Member(
                            key: cause.rawValue,
                            value: .object(
                                JSONObject(
                                    keys.sorted { $0.key < $1.key }.map {
                                        JSONObject.Member(key: $0.key, value: .number(Double($0.value)))
                                    })))
                    }
                }))
    }
}
