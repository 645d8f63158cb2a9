import Foundation
import GRDB

/// A row of `tenants`.
struct TenantRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "tenants"

    var id: Int64?
    var slug: String
    var name: String
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, slug, name
        case createdAt = "created_at"
    }

    enum Columns {
        static let slug = Column(CodingKeys.slug)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}
