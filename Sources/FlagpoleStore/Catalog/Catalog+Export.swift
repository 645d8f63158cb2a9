import FlagpoleCore
import Foundation

extension Catalog {
    /// Revision `number` of an environment, or its current one when `number` is `nil`.
    ///
    /// - throws: `DocumentError.noRevision`, `DocumentError.revisionNotFound`,
    ///   `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func revision(_ number: Int? = nil, of path: EnvironmentPath) async throws -> Revision {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            guard let record = try db.environments.revision(number, in: scope) else {
                if let number {
                    throw DocumentError.revisionNotFound(
                        path, number: number, latest: try db.environments.latestRevisionNumber(in: scope))
                }
                throw DocumentError.noRevision(path)
            }
            return Revision(record, of: path)
        }
    }

    /// The current revision of every environment that has one (of `paths` only, when given), with
    /// what a CDN serves of it, by tenant then environment, read in one transaction.
    public func publishedRevisions(of paths: Set<EnvironmentPath>? = nil) async throws -> [PublishedRevision] {
        let found = try await read { db in
            var found: [(RevisionRecord, EnvironmentPath, DeliverySettings)] = []
            for tenant in try db.tenants.all() {
                let tenantScope = TenantScope(id: tenant.id!, slug: TenantSlug(rawValue: tenant.slug))
                for environment in try db.environments.all(of: tenantScope) {
                    let scope = EnvironmentScope(environment, of: tenantScope)
                    guard paths?.contains(scope.path) ?? true,
                        let record = try db.environments.revision(nil, in: scope)
                    else { continue }
                    let settings = DeliverySettings(
                        isPrivate: environment.isPrivate, cacheControl: environment.cacheControl)
                    found.append((record, scope.path, settings))
                }
            }
            return found
        }
        return try found.map { record, path, settings in
            PublishedRevision(
                path: path, number: record.number, createdAt: record.createdAt, features: Array(record.document),
                configs: try sharedConfigs(of: record, in: path), settings: settings)
        }
    }

    /// An environment's current document, read from its tables, with its revision number.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func snapshot(of path: EnvironmentPath) async throws -> EnvironmentSnapshot {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return EnvironmentSnapshot(
                path: path, revision: try db.environments.latestRevisionNumber(in: scope),
                document: try db.currentDocument(in: scope))
        }
    }

    /// An environment's revisions, newest first.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func revisions(of path: EnvironmentPath) async throws -> [RevisionSummary] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.environments.revisionSummaries(in: scope)
        }
    }
}

extension Revision {
    init(_ record: RevisionRecord, of path: EnvironmentPath) {
        self.init(path: path, number: record.number, createdAt: record.createdAt, document: Array(record.document))
    }
}
