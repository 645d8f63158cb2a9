import FlagpoleCore
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

/// The one home of every statement on `tenants`.
struct TenantTable {
    let db: Database

    /// The tenant named `slug`.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    func scope(of slug: TenantSlug) throws -> TenantScope {
        guard let record = try record(slug), let id = record.id else { throw TenancyError.tenantNotFound(slug) }
        return TenantScope(id: id, slug: slug)
    }

    /// The row of the tenant named `slug`, if there is one.
    func record(_ slug: TenantSlug) throws -> TenantRecord? {
        try TenantRecord.filter(TenantRecord.Columns.slug == slug.rawValue).fetchOne(db)
    }

    /// Inserts a tenant and returns its row.
    func insert(_ slug: TenantSlug, name: String, createdAt: Date) throws -> TenantRecord {
        try TenantRecord(slug: slug.rawValue, name: name, createdAt: createdAt).inserted(db)
    }

    /// Every tenant, by slug.
    func all() throws -> [TenantRecord] {
        try TenantRecord.order(TenantRecord.Columns.slug).fetchAll(db)
    }

    /// How many tenants there are.
    func count() throws -> Int {
        try TenantRecord.fetchCount(db)
    }
}

extension Database {
    /// Tenants.
    var tenants: TenantTable { TenantTable(db: self) }
}
