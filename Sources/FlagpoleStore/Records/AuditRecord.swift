import GRDB

/// A row of `audit`: one changed field of one revision, with its values before and after.
struct AuditRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "audit"

    var id: Int64?
    var tenantID: Int64
    var revisionID: Int64
    var featureName: String?
    var field: String?
    var change: String
    var beforeJSON: String?
    var afterJSON: String?

    enum CodingKeys: String, CodingKey {
        case id, field, change
        case tenantID = "tenant_id"
        case revisionID = "revision_id"
        case featureName = "feature_name"
        case beforeJSON = "before_json"
        case afterJSON = "after_json"
    }

    enum Columns {
        static let revisionID = Column(CodingKeys.revisionID)
    }
}
