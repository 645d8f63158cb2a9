import FlagpoleCore

/// A feature as the store holds it: the model beside its row id, salt and place.
struct StoredFeature: Sendable {
    let id: Int64
    let salt: String
    /// The place in the file; `nil` when archived.
    let position: Int?
    let feature: Feature
    /// `feature.kind`, worked out once: every evaluation of the feature asks it.
    let kind: FeatureKind

    init(id: Int64, salt: String, position: Int?, feature: Feature) {
        self.id = id
        self.salt = salt
        self.position = position
        self.feature = feature
        kind = feature.kind
    }

    var isArchived: Bool { position == nil }
}

extension FeatureRecord {
    /// The model of this row, given its variation rows in order.
    func feature(variations: [VariationRecord]) throws -> Feature {
        func elements<T>(_ count: Int?, _ value: (VariationRecord) -> T?) -> [T]? {
            count.map { count in variations.prefix(count).compactMap(value) }
        }
        return Feature(
            name: name,
            description: description,
            section: section,
            development: development,
            enabled: enabled,
            unlocked: unlocked,
            type: try typeJSON.map { try JSONObject(storedText: $0) },
            testVariations: elements(variationCount) { $0.name },
            testBiases: elements(biasCount) { $0.bias },
            labels: labelCount.map { count in variations.prefix(count).map(\.label) },
            unknownKeys: try unknownJSON.map { try JSONObject(storedText: $0) } ?? JSONObject())
    }
}
