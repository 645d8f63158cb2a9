import Foundation
import GRDB

/// A row of `features`: the keys of one feature as written, its salt and its place in the file.
struct FeatureRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "features"

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var name: String
    var position: Int?
    var salt: String
    var description: String?
    var section: String?
    var development: Bool?
    var enabled: Bool?
    var unlocked: Bool?
    var typeJSON: String?
    var variationCount: Int?
    var biasCount: Int?
    var labelCount: Int?
    var unknownJSON: String?
    var createdAt: Date
    var updatedAt: Date
    var archivedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, position, salt, description, section, development, enabled, unlocked
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case typeJSON = "type_json"
        case variationCount = "variation_count"
        case biasCount = "bias_count"
        case labelCount = "label_count"
        case unknownJSON = "unknown_json"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case archivedAt = "archived_at"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let name = Column(CodingKeys.name)
        static let position = Column(CodingKeys.position)
        static let archivedAt = Column(CodingKeys.archivedAt)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
