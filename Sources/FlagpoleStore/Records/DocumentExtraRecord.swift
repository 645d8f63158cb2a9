import GRDB

/// A row of `document_extras`: a top-level key of the document other than `features`.
struct DocumentExtraRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "document_extras"

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var position: Int
    var key: String
    var valueJSON: String

    enum CodingKeys: String, CodingKey {
        case id, position, key
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case valueJSON = "value_json"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let position = Column(CodingKeys.position)
    }
}
