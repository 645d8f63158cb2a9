import Foundation
import GRDB

/// A row of `revisions`: one numbered state of an environment with its rendered document.
struct RevisionRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "revisions"

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var number: Int
    var kind: String
    var actor: String
    var message: String
    var createdAt: Date
    var document: Data

    enum CodingKeys: String, CodingKey {
        case id, number, kind, actor, message, document
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case createdAt = "created_at"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let number = Column(CodingKeys.number)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
