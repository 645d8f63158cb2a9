import GRDB

/// A record of a table whose rows belong to one tenant (a `tenant_id` column).
protocol TenantOwnedRecord: TableRecord {}

extension QueryInterfaceRequest where RowDecoder: TenantOwnedRecord {
    /// The tenant filter every query of tenant data starts from.
    func owned(by tenant: TenantScope) -> Self {
        filter(Column("tenant_id") == tenant.id)
    }
}

extension TenantOwnedRecord {
    /// The rows of `tenant`: the start of every query of tenant data.
    static func owned(by tenant: TenantScope) -> QueryInterfaceRequest<Self> {
        all().owned(by: tenant)
    }
}
