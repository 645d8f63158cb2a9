import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Revision `number` of an environment, or its current one when `number` is `nil`.
    ///
    /// - throws: `StoreError.noRevision`, `StoreError.revisionNotFound`,
    ///   `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    public func revision(_ number: Int? = nil, of path: EnvironmentPath) async throws -> Revision {
        try await read { db in
            let scope = try db.scope(of: path)
            guard let record = try db.revisionRecord(number, in: scope) else {
                if let number {
                    throw StoreError.revisionNotFound(
                        path, number: number, latest: try db.latestRevisionNumber(in: scope))
                }
                throw StoreError.noRevision(path)
            }
            return Revision(record, of: path)
        }
    }

    /// The current revision of every environment of every tenant that has one, by tenant
    /// then environment, read in one transaction so the set is consistent.
    public func currentRevisions() async throws -> [Revision] {
        try await read { db in
            var revisions: [Revision] = []
            for tenant in try TenantRecord.order(TenantRecord.Columns.slug).fetchAll(db) {
                let tenantScope = TenantScope(id: tenant.id!, slug: TenantSlug(rawValue: tenant.slug))
                for environment in try EnvironmentRecord.owned(by: tenantScope).order(EnvironmentRecord.Columns.name)
                    .fetchAll(db)
                {
                    let scope = EnvironmentScope(environment, of: tenantScope)
                    if let record = try db.revisionRecord(nil, in: scope) {
                        revisions.append(Revision(record, of: scope.path))
                    }
                }
            }
            return revisions
        }
    }

    /// An environment's current document, read from its tables, with its revision number.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    public func snapshot(of path: EnvironmentPath) async throws -> EnvironmentSnapshot {
        try await read { db in
            let scope = try db.scope(of: path)
            return EnvironmentSnapshot(
                path: path, revision: try db.latestRevisionNumber(in: scope),
                document: try db.currentDocument(in: scope))
        }
    }

    /// An environment's revisions, newest first.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    public func revisions(of path: EnvironmentPath) async throws -> [RevisionSummary] {
        try await read { db in
            let scope = try db.scope(of: path)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.number, r.kind, r.actor, r.message, r.created_at, length(r.document) AS size,
                           (SELECT count(*) FROM audit a WHERE a.revision_id = r.id AND a.tenant_id = r.tenant_id) AS changes
                    FROM revisions r
                    WHERE r.tenant_id = ? AND r.environment_id = ?
                    ORDER BY r.number DESC
                    """, arguments: [scope.tenant.id, scope.id])
            return rows.map { row in
                RevisionSummary(
                    number: row["number"], kind: RevisionKind(rawValue: row["kind"]) ?? .edit, actor: row["actor"],
                    message: row["message"], createdAt: row["created_at"], size: row["size"],
                    changeCount: row["changes"])
            }
        }
    }
}

extension Revision {
    init(_ record: RevisionRecord, of path: EnvironmentPath) {
        self.init(path: path, number: record.number, createdAt: record.createdAt, document: Array(record.document))
    }
}
