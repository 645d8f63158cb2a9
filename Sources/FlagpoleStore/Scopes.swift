import FlagpoleCore
import GRDB

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

extension Database {
    /// The tenant named `slug`.
    ///
    /// - throws: `StoreError.tenantNotFound`.
    func scope(of slug: TenantSlug) throws -> TenantScope {
        guard let record = try TenantRecord.filter(TenantRecord.Columns.slug == slug.rawValue).fetchOne(self),
            let id = record.id
        else { throw StoreError.tenantNotFound(slug) }
        return TenantScope(id: id, slug: slug)
    }

    /// The environment at `path`.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    func scope(of path: EnvironmentPath) throws -> EnvironmentScope {
        // Every request starts here: one cached statement when the environment exists.
        let found = try Row.fetchOne(
            cachedStatement(
                sql: """
                    SELECT t.id, e.id, e.features_position FROM tenants t JOIN environments e ON e.tenant_id = t.id
                    WHERE t.slug = ? AND e.name = ?
                    """), arguments: [path.tenant.rawValue, path.environment.rawValue])
        if let found {
            return EnvironmentScope(
                tenant: TenantScope(id: found[0], slug: path.tenant), id: found[1], path: path,
                featuresPosition: found[2])
        }
        // The long way round, to say what is missing.
        let tenant = try scope(of: path.tenant)
        let environments = try EnvironmentRecord.owned(by: tenant).order(EnvironmentRecord.Columns.name).fetchAll(self)
        guard let record = environments.first(where: { $0.name == path.environment.rawValue }) else {
            throw StoreError.environmentNotFound(
                path, existing: environments.map { EnvironmentName(rawValue: $0.name) })
        }
        return EnvironmentScope(record, of: tenant)
    }
}
