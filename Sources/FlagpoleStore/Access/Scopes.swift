import FlagpoleCore

/// A tenant resolved inside a transaction: queries of its data filter on `id`.
struct TenantScope: Sendable {
    let id: Int64
    let slug: TenantSlug
}

/// An environment resolved inside a transaction.
struct EnvironmentScope: Sendable {
    let tenant: TenantScope
    let id: Int64
    let path: EnvironmentPath
    let featuresPosition: Int

    init(tenant: TenantScope, id: Int64, path: EnvironmentPath, featuresPosition: Int) {
        self.tenant = tenant
        self.id = id
        self.path = path
        self.featuresPosition = featuresPosition
    }

    /// The scope of an environment row of `tenant`.
    init(_ record: EnvironmentRecord, of tenant: TenantScope) {
        self.init(
            tenant: tenant, id: record.id!,
            path: EnvironmentPath(tenant: tenant.slug, environment: EnvironmentName(rawValue: record.name)),
            featuresPosition: record.featuresPosition)
    }
}
