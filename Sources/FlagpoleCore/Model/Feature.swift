/// One feature of a features.json file, exactly as it was written.
///
/// Optional properties are `nil` when the key is absent or `null` (the client treats
/// both alike). What the client makes of these values (its kind, variations, enabled
/// state and biases) is derived in `Feature+Client.swift`, so the store keeps the
/// author's file and the app's reading can never drift apart.
public struct Feature: Hashable, Sendable {
    /// The `name` the app looks the feature up by, exactly as written.
    public var name: String
    /// `description`, shown in the app's debug screen.
    public var description: String?
    /// `section`, which groups features in the app's debug screen.
    public var section: String?
    /// `development`: a flag on only in debug builds or development mode.
    public var development: Bool?
    /// `enabled` as written; `isEnabled` is what the app makes of it.
    public var enabled: Bool?
    /// `unlocked`: present, it makes an unlock flag (unless there are two variations).
    public var unlocked: Bool?
    /// The `type` object as written; the client reads only `declaredType`.
    public var type: JSONObject?
    /// `test-variations` as written; `effectiveVariations` are what the app stores.
    public var testVariations: [String]?
    /// `test-biases` as written; `effectiveBiases` are what the app buckets with.
    public var testBiases: [Double]?
    /// Labels for analytics; `null` elements are kept.
    public var labels: [String?]?
    /// Keys the client does not read, in their original order, written back on export.
    public var unknownKeys: JSONObject

    /// Creates a feature; every key but the name is optional, as in the file.
    public init(
        name: String,
        description: String? = nil,
        section: String? = nil,
        development: Bool? = nil,
        enabled: Bool? = nil,
        unlocked: Bool? = nil,
        type: JSONObject? = nil,
        testVariations: [String]? = nil,
        testBiases: [Double]? = nil,
        labels: [String?]? = nil,
        unknownKeys: JSONObject = JSONObject()
    ) {
        self.name = name
        self.description = description
        self.section = section
        self.development = development
        self.enabled = enabled
        self.unlocked = unlocked
        self.type = type
        self.testVariations = testVariations
        self.testBiases = testBiases
        self.labels = labels
        self.unknownKeys = unknownKeys
    }
}

extension Feature {
    /// The keys the client reads, in the order exports write them.
    public static let knownKeys = [
        "name", "description", "section", "development", "enabled", "unlocked", "type",
        "test-variations", "test-biases", "labels",
    ]

    /// The key the client reads but the store never keeps (see `W240`).
    public static let assignmentKey = "test-variation-assignment"

    /// The feature as a JSON object: known keys in the export order, then unknown keys in theirs.
    public var jsonObject: JSONObject {
        jsonObject(assignment: nil)
    }

    /// The feature as a JSON object carrying `test-variation-assignment` (a pinned per-user export).
    public func jsonObject(assignment: Double?) -> JSONObject {
        jsonObject(assignment: assignment.map(JSONValue.number), unlocked: unlocked.map(JSONValue.bool))
    }

    /// The feature as a JSON object with these values of `test-variation-assignment` and
    /// `unlocked` in their places (`nil`: the key is absent).
    func jsonObject(assignment: JSONValue?, unlocked: JSONValue?) -> JSONObject {
        var object = JSONObject()
        object.append("name", .string(name))
        if let description { object.append("description", .string(description)) }
        if let section { object.append("section", .string(section)) }
        if let development { object.append("development", .bool(development)) }
        if let enabled { object.append("enabled", .bool(enabled)) }
        if let unlocked { object.append("unlocked", unlocked) }
        if let type { object.append("type", .object(type)) }
        if let testVariations { object.append("test-variations", .array(testVariations.map(JSONValue.string))) }
        if let testBiases { object.append("test-biases", .array(testBiases.map(JSONValue.number))) }
        if let labels { object.append("labels", .array(labels.map { $0.map(JSONValue.string) ?? .null })) }
        if let assignment { object.append(Self.assignmentKey, assignment) }
        object.members.append(contentsOf: unknownKeys.members)
        return object
    }
}

extension Feature {
    /// Whether the two features are written alike, every string byte for byte (see
    /// `JSONValue.isIdentical(to:)`); `==` says whether the app reads them alike.
    public func isIdentical(to other: Feature) -> Bool {
        jsonObject.isIdentical(to: other.jsonObject)
    }
}
