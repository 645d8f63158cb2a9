import GRDB

/// A row of `variations`: element `position` of a feature's test-variations, test-biases
/// and labels (each `nil` past the end of its array).
struct VariationRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "variations"

    var id: Int64?
    var tenantID: Int64
    var featureID: Int64
    var position: Int
    var name: String?
    var bias: Double?
    var label: String?

    enum CodingKeys: String, CodingKey {
        case id, position, name, bias, label
        case tenantID = "tenant_id"
        case featureID = "feature_id"
    }

    enum Columns {
        static let featureID = Column(CodingKeys.featureID)
        static let position = Column(CodingKeys.position)
    }
}

extension VariationRecord {
    /// Reads a row without going through `Decodable`, for the same reason as `FeatureRecord`.
    init(row: Row) throws {
        id = row[CodingKeys.id.rawValue]
        tenantID = row[CodingKeys.tenantID.rawValue]
        featureID = row[CodingKeys.featureID.rawValue]
        position = row[CodingKeys.position.rawValue]
        name = row[CodingKeys.name.rawValue]
        bias = row[CodingKeys.bias.rawValue]
        label = row[CodingKeys.label.rawValue]
    }
}
