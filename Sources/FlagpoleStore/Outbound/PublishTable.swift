import FlagpoleCore
import Foundation

/// The one home of every statement on `publish_log`: each publish to object storage, per
/// environment, and what the CDN purge hook answered.
struct PublishTable {
    let db: Transaction

    /// How many rows a target and environment keep.
    static let kept = 100

    func insert(_ entry: PublishLogEntry, in scope: EnvironmentScope) throws {
        try db.execute(
            """
            INSERT INTO publish_log (target, tenant_id, environment_id, revision, outcome, objects_written, error,
                purge_outcome, purge_error, started_at, finished_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                entry.target, scope.tenant.id, scope.id, entry.revision, entry.outcome.rawValue, entry.objectsWritten,
                entry.error, entry.purge?.rawValue, entry.purgeError, entry.startedAt.unixMilliseconds,
                entry.finishedAt.unixMilliseconds,
            ])
        try db.execute(
            """
            DELETE FROM publish_log WHERE environment_id = ? AND target = ? AND id <= (
                SELECT id FROM publish_log WHERE environment_id = ? AND target = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
            """, [scope.id, entry.target, scope.id, entry.target, Self.kept])
    }

    /// Whether a target has published the environment: its documents are then fetched from
    /// object storage, out of Flagpole's sight.
    func hasPublished(_ scope: EnvironmentScope) throws -> Bool {
        try !db.values(Int64.self, "SELECT id FROM publish_log WHERE environment_id = ? LIMIT 1", [scope.id]).isEmpty
    }

    /// The latest entry of every target and environment (of `target` only, when given: the bucket
    /// and prefix, at whatever endpoint the log names beside them), with the latest that
    /// succeeded and the environment's current revision.
    func status(target: String?) throws -> [PublishStatus] {
        let rows = try db.rows(
            """
            SELECT p.target, t.slug, e.name, p.revision, p.outcome, p.objects_written, p.error, p.purge_outcome,
                p.purge_error, p.started_at, p.finished_at,
                (SELECT max(r.number) FROM revisions r WHERE r.environment_id = e.id),
                s.revision, s.finished_at
            FROM publish_log p
            JOIN environments e ON e.id = p.environment_id JOIN tenants t ON t.id = p.tenant_id
            LEFT JOIN publish_log s ON s.id = (
                SELECT max(id) FROM publish_log WHERE environment_id = p.environment_id AND target = p.target
                    AND outcome != 'failed')
            WHERE p.id IN (SELECT max(id) FROM publish_log GROUP BY environment_id, target)
                AND (CAST(? AS text) IS NULL OR p.target = CAST(? AS text)
                    OR substr(p.target, 1, length(CAST(? AS text)) + 4) = CAST(? AS text) || ' at ')
            ORDER BY p.target, t.slug, e.name
            """, [target, target, target, target])
        return rows.map { row in
            let path = EnvironmentPath(
                tenant: TenantSlug(rawValue: row[1]), environment: EnvironmentName(rawValue: row[2]))
            let last = PublishLogEntry(
                target: row[0], environment: path, revision: row[3], outcome: PublishOutcome(rawValue: row[4])!,
                objectsWritten: row[5], error: row[6], purge: (row[7] as String?).flatMap(PurgeOutcome.init),
                purgeError: row[8], startedAt: Date(unixMilliseconds: row[9]),
                finishedAt: Date(unixMilliseconds: row[10]))
            return PublishStatus(
                last: last, currentRevision: row[11], publishedRevision: row[12],
                publishedAt: (row[13] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }
}

extension Transaction {
    /// The publish log.
    var publishes: PublishTable { PublishTable(db: self) }
}
