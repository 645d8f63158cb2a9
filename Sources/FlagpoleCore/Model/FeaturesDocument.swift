/// A whole features.json: the features in file order and the other top-level keys.
public struct FeaturesDocument: Hashable, Sendable {
    /// The features, in file order.
    public var features: [Feature]
    /// Top-level keys other than `features`, in their order; apps often embed `features`
    /// in a bigger config file and the client ignores the rest.
    public var extras: JSONObject
    /// Where `features` sits among the top-level keys, so exports keep the author's order.
    public var featuresPosition: Int

    /// Creates a document; `featuresPosition` is clamped to the extras' bounds.
    ///
    /// An extra named `features` is dropped: the document's own `features` array is the only one
    /// an export may carry.
    public init(features: [Feature], extras: JSONObject = JSONObject(), featuresPosition: Int = 0) {
        self.features = features
        self.extras = JSONObject(extras.members.filter { $0.key != "features" })
        self.featuresPosition = min(max(featuresPosition, 0), self.extras.members.count)
    }

    /// The feature named `name` (exact, case-sensitive, as the client looks features up).
    public func feature(named name: String) -> Feature? {
        features.first { $0.name == name }
    }

    /// The top-level keys in their order, `features` among them.
    public var topLevelKeys: [String] {
        var keys = extras.keys
        keys.insert("features", at: featuresPosition)
        return keys
    }

    /// The document as a JSON object: always `{"features": [...]}` plus the extras in place.
    public var jsonValue: JSONValue {
        jsonValue(assignments: [:])
    }

    /// The document with `test-variation-assignment` set on the features named in `assignments`.
    func jsonValue(assignments: [String: Double]) -> JSONValue {
        jsonValue { $0.jsonObject(assignment: assignments[$0.name]) }
    }

    /// The document with each feature written as `object` writes it.
    func jsonValue(featureObject object: (Feature) -> JSONObject) -> JSONValue {
        var members = extras.members
        members.insert(
            JSONObject.Member(key: "features", value: .array(features.map { .object(object($0)) })),
            at: featuresPosition)
        return .object(JSONObject(members))
    }
}
