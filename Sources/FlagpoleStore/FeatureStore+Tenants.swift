import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Creates a tenant with its `production` environment.
    ///
    /// - throws: `StoreError.tenantAlreadyExists`.
    @discardableResult
    public func createTenant(_ slug: TenantSlug, name: String? = nil) async throws -> Tenant {
        try await write { db in
            guard try TenantRecord.filter(TenantRecord.Columns.slug == slug.rawValue).fetchOne(db) == nil else {
                throw StoreError.tenantAlreadyExists(slug)
            }
            let now = Date()
            let tenant = try TenantRecord(slug: slug.rawValue, name: name ?? slug.rawValue, createdAt: now).inserted(db)
            var production = EnvironmentRecord(
                tenantID: tenant.id!, name: EnvironmentName.production.rawValue, featuresPosition: 0, createdAt: now)
            try production.insert(db)
            return Tenant(slug: slug, name: tenant.name, createdAt: now, environments: [.production])
        }
    }

    /// Every tenant, by slug.
    public func tenants() async throws -> [Tenant] {
        try await read { db in
            try TenantRecord.order(TenantRecord.Columns.slug).fetchAll(db).map { record in
                let scope = TenantScope(id: record.id!, slug: TenantSlug(rawValue: record.slug))
                let environments = try EnvironmentRecord.owned(by: scope)
                    .order(EnvironmentRecord.Columns.name)
                    .fetchAll(db)
                    .map { EnvironmentName(rawValue: $0.name) }
                return Tenant(
                    slug: scope.slug, name: record.name, createdAt: record.createdAt, environments: environments)
            }
        }
    }

    /// Creates an environment for `path.tenant`, with no revision until the first import.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentAlreadyExists`.
    @discardableResult
    public func createEnvironment(_ path: EnvironmentPath) async throws -> Environment {
        try await write { db in
            let tenant = try db.scope(of: path.tenant)
            let exists =
                try EnvironmentRecord.owned(by: tenant)
                .filter(EnvironmentRecord.Columns.name == path.environment.rawValue)
                .fetchCount(db) > 0
            guard !exists else { throw StoreError.environmentAlreadyExists(path) }
            var record = EnvironmentRecord(
                tenantID: tenant.id, name: path.environment.rawValue, featuresPosition: 0, createdAt: Date())
            try record.insert(db)
            return Environment(
                path: path, createdAt: record.createdAt, revision: nil, featureCount: 0, delivery: DeliverySettings())
        }
    }

    /// The environments of `slug`, by name, with their current revision.
    ///
    /// - throws: `StoreError.tenantNotFound`.
    public func environments(of slug: TenantSlug) async throws -> [Environment] {
        try await read { db in
            let tenant = try db.scope(of: slug)
            return try EnvironmentRecord.owned(by: tenant).order(EnvironmentRecord.Columns.name).fetchAll(db).map {
                record in
                try db.environment(record, of: tenant)
            }
        }
    }

    /// One environment, with its current revision.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    public func environment(_ path: EnvironmentPath) async throws -> Environment {
        try await read { db in
            let scope = try db.scope(of: path)
            let record = try EnvironmentRecord.filter(key: scope.id).fetchOne(db)!
            return try db.environment(record, of: scope.tenant)
        }
    }
}

extension Database {
    func environment(_ record: EnvironmentRecord, of tenant: TenantScope) throws -> Environment {
        let scope = EnvironmentScope(record, of: tenant)
        return Environment(
            path: scope.path, createdAt: record.createdAt,
            revision: try latestRevisionNumber(in: scope),
            featureCount: try FeatureRecord.active(in: scope).fetchCount(self),
            delivery: DeliverySettings(isPrivate: record.isPrivate, cacheControl: record.cacheControl))
    }
}
