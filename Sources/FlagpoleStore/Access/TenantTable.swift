import FlagpoleCore
import Foundation

/// A row of `tenants`.
struct TenantRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case slug
        case name
        case createdAt = "created_at"
    }

    var id: Int64?
    var slug: String
    var name: String
    var createdAt: Date
}

extension TenantRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        slug = row[.slug]
        name = row[.name]
        createdAt = row[.createdAt]
    }
}

/// The one home of every statement on `tenants`.
struct TenantTable {
    let db: Transaction

    /// The tenant named `slug`.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    func scope(of slug: TenantSlug) throws -> TenantScope {
        guard let record = try record(slug), let id = record.id else { throw TenancyError.tenantNotFound(slug) }
        return TenantScope(id: id, slug: slug)
    }

    /// The row of the tenant named `slug`, if there is one.
    func record(_ slug: TenantSlug) throws -> TenantRecord? {
        try db.row("SELECT \(TenantRecord.columns) FROM tenants WHERE slug = ?", [slug.rawValue])
            .map(TenantRecord.init(row:))
    }

    /// Inserts a tenant and returns its row.
    func insert(_ slug: TenantSlug, name: String, createdAt: Date) throws -> TenantRecord {
        var record = TenantRecord(slug: slug.rawValue, name: name, createdAt: createdAt)
        record.id = try db.insertReturningID(
            "INSERT INTO tenants (slug, name, created_at) VALUES (?, ?, ?) RETURNING id",
            [record.slug, record.name, record.createdAt])
        return record
    }

    /// Every tenant, by slug.
    func all() throws -> [TenantRecord] {
        try db.rows("SELECT \(TenantRecord.columns) FROM tenants ORDER BY slug").map(TenantRecord.init(row:))
    }

    /// How many tenants there are.
    func count() throws -> Int {
        try db.value(Int.self, "SELECT count(*) FROM tenants") ?? 0
    }
}

extension Transaction {
    /// Tenants.
    var tenants: TenantTable { TenantTable(db: self) }
}
