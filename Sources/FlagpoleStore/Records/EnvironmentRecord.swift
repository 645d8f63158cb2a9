import Foundation
import GRDB

/// A row of `environments`: one features.json of a tenant.
struct EnvironmentRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "environments"

    var id: Int64?
    var tenantID: Int64
    var name: String
    var featuresPosition: Int
    var createdAt: Date
    var isPrivate = false
    var cacheControl: String?

    enum CodingKeys: String, CodingKey {
        case id, name
        case isPrivate = "is_private"
        case cacheControl = "cache_control"
        case tenantID = "tenant_id"
        case featuresPosition = "features_position"
        case createdAt = "created_at"
    }

    enum Columns {
        static let name = Column(CodingKeys.name)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
