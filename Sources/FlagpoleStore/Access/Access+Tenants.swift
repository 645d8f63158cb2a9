import FlagpoleCore
import Foundation

extension Access {
    /// Creates a tenant with its `production` environment.
    ///
    /// - throws: `TenancyError.tenantAlreadyExists`.
    @discardableResult
    public func createTenant(_ slug: TenantSlug, name: String? = nil) async throws -> Tenant {
        try await write { db in
            guard try db.tenants.record(slug) == nil else { throw TenancyError.tenantAlreadyExists(slug) }
            let now = Date()
            let tenant = try db.tenants.insert(slug, name: name ?? slug.rawValue, createdAt: now)
            _ = try db.environments.insert(.production, of: TenantScope(id: tenant.id!, slug: slug), createdAt: now)
            return Tenant(slug: slug, name: tenant.name, createdAt: now, environments: [.production])
        }
    }

    /// Every tenant, by slug.
    public func tenants() async throws -> [Tenant] {
        try await read { db in
            try db.tenants.all().map { record in
                let scope = TenantScope(id: record.id!, slug: TenantSlug(rawValue: record.slug))
                let environments = try db.environments.all(of: scope).map { EnvironmentName(rawValue: $0.name) }
                return Tenant(
                    slug: scope.slug, name: record.name, createdAt: record.createdAt, environments: environments)
            }
        }
    }

    /// Creates an environment for `path.tenant`, served as `delivery` says (private, say), with
    /// no revision until the first import.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentAlreadyExists`.
    @discardableResult
    public func createEnvironment(
        _ path: EnvironmentPath, delivery: DeliverySettings = DeliverySettings()
    ) async throws -> Environment {
        try await write { db in
            let tenant = try db.tenants.scope(of: path.tenant)
            let exists = try db.environments.all(of: tenant).contains { $0.name == path.environment.rawValue }
            guard !exists else { throw TenancyError.environmentAlreadyExists(path) }
            let record = try db.environments.insert(path.environment, of: tenant, createdAt: Date())
            if delivery != DeliverySettings() {
                try db.environments.updateDeliverySettings(delivery, in: try db.environments.scope(of: path))
            }
            return Environment(
                path: path, createdAt: record.createdAt, revision: nil, featureCount: 0, delivery: delivery,
                marking: EnvironmentMarking())
        }
    }

    /// The environments of `slug`, by name, with their current revision.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    public func environments(of slug: TenantSlug) async throws -> [Environment] {
        try await read { db in
            let tenant = try db.tenants.scope(of: slug)
            return try db.environments.all(of: tenant).map { record in try db.environment(record, of: tenant) }
        }
    }

    /// One environment, with its current revision.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func environment(_ path: EnvironmentPath) async throws -> Environment {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let record = try db.environments.record(of: scope)
            return try db.environment(record, of: scope.tenant)
        }
    }

    /// Changes the environment's colour and whether changes need a reason, reading and writing in
    /// one transaction so concurrent changes of different fields both land.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    @discardableResult
    public func updateMarking(
        of path: EnvironmentPath, _ change: @escaping @Sendable (inout EnvironmentMarking) -> Void
    ) async throws -> EnvironmentMarking {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            var marking = try db.environments.record(of: scope).marking
            change(&marking)
            try db.environments.updateMarking(marking, in: scope)
            return marking
        }
    }
}

extension Transaction {
    func environment(_ record: EnvironmentRecord, of tenant: TenantScope) throws -> Environment {
        let scope = EnvironmentScope(record, of: tenant)
        return Environment(
            path: scope.path, createdAt: record.createdAt,
            revision: try environments.latestRevisionNumber(in: scope),
            featureCount: try features.activeCount(in: scope),
            delivery: DeliverySettings(isPrivate: record.isPrivate, cacheControl: record.cacheControl),
            marking: record.marking)
    }
}
