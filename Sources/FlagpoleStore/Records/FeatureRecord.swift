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

extension FeatureRecord {
    /// Reads a row without going through `Decodable`: every import and listing loads all the
    /// features of an environment, and the generic decoder dominated that load.
    init(row: Row) throws {
        id = row[CodingKeys.id.rawValue]
        tenantID = row[CodingKeys.tenantID.rawValue]
        environmentID = row[CodingKeys.environmentID.rawValue]
        name = row[CodingKeys.name.rawValue]
        position = row[CodingKeys.position.rawValue]
        salt = row[CodingKeys.salt.rawValue]
        description = row[CodingKeys.description.rawValue]
        section = row[CodingKeys.section.rawValue]
        development = row[CodingKeys.development.rawValue]
        enabled = row[CodingKeys.enabled.rawValue]
        unlocked = row[CodingKeys.unlocked.rawValue]
        typeJSON = row[CodingKeys.typeJSON.rawValue]
        variationCount = row[CodingKeys.variationCount.rawValue]
        biasCount = row[CodingKeys.biasCount.rawValue]
        labelCount = row[CodingKeys.labelCount.rawValue]
        unknownJSON = row[CodingKeys.unknownJSON.rawValue]
        createdAt = row[CodingKeys.createdAt.rawValue]
        updatedAt = row[CodingKeys.updatedAt.rawValue]
        archivedAt = row[CodingKeys.archivedAt.rawValue]
    }
}
