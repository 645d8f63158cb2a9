import FlagpoleCore
import Foundation

/// A webhook's row.
struct WebhookRow: Sendable {
    let id: Int64
    let path: EnvironmentPath
    let url: String
    let secret: String
    let format: WebhookFormat
    /// What it hears: the list stored when it was made, or what webhooks heard before 0019.
    let events: [StoreEventKind]
    let createdBy: String
    let createdAt: Date
    let revokedAt: Date?
}

/// The one home of every statement on `webhooks` and `webhook_deliveries`.
struct WebhookTable {
    let db: Transaction

    private static let select = """
        SELECT w.id, t.slug, e.name, w.url, w.secret, w.format, w.created_by, w.created_at, w.revoked_at, w.events
        FROM webhooks w JOIN environments e ON e.id = w.environment_id JOIN tenants t ON t.id = w.tenant_id
        """

    private func webhooks(where condition: String, _ arguments: SQLArguments) throws -> [WebhookRow] {
        try db.rows("\(Self.select) WHERE \(condition) ORDER BY w.id", arguments).map { row in
            WebhookRow(
                id: row[0],
                path: EnvironmentPath(
                    tenant: TenantSlug(rawValue: row[1]), environment: EnvironmentName(rawValue: row[2])),
                url: row[3], secret: row[4], format: WebhookFormat(rawValue: row[5]) ?? .json,
                events: try Self.events(stored: row[9]), createdBy: row[6],
                createdAt: Date(unixMilliseconds: row[7]),
                revokedAt: (row[8] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }

    /// The events stored as a JSON array of names; names this version does not know are left out.
    private static func events(stored: String?) throws -> [StoreEventKind] {
        guard let stored else { return StoreEventKind.beforeSubscriptions }
        guard case .array(let names) = try JSONValue(storedText: stored) else { return [] }
        return names.compactMap { name in
            guard case .string(let name) = name else { return nil }
            return StoreEventKind(rawValue: name)
        }
    }

    /// The environment's webhooks, oldest first; only those not revoked when `activeOnly`.
    func webhooks(in scope: EnvironmentScope, activeOnly: Bool = false) throws -> [WebhookRow] {
        try webhooks(
            where: "w.tenant_id = ? AND w.environment_id = ?" + (activeOnly ? " AND w.revoked_at IS NULL" : ""),
            [scope.tenant.id, scope.id])
    }

    func insert(
        scope: EnvironmentScope, url: WebhookURL, secret: String, format: WebhookFormat, events: [StoreEventKind],
        createdBy: String, now: Date
    ) throws -> Int64 {
        try db.insertReturningID(
            """
            INSERT INTO webhooks (tenant_id, environment_id, url, secret, format, events, created_by, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """,
            [
                scope.tenant.id, scope.id, url.description, secret, format.rawValue,
                JSONValue.array(events.map { .string($0.rawValue) }).storedText, createdBy, now.unixMilliseconds,
            ])
    }

    /// Revokes the environment's webhook `id`, and gives up its pending deliveries; returns
    /// whether there was one not revoked yet.
    func revoke(id: Int64, in scope: EnvironmentScope, now: Date) throws -> Bool {
        let revoked =
            try db.execute(
                """
                UPDATE webhooks SET revoked_at = ?
                WHERE tenant_id = ? AND environment_id = ? AND id = ? AND revoked_at IS NULL
                """, [now.unixMilliseconds, scope.tenant.id, scope.id, id]) == 1
        if revoked {
            try db.execute(
                """
                UPDATE webhook_deliveries SET state = 'failed', next_at = NULL, error = 'the webhook was revoked'
                WHERE webhook_id = ? AND state = 'pending'
                """, [id])
        }
        return revoked
    }

    // MARK: Deliveries

    func insertDelivery(id: String, webhookID: Int64, event: String, body: String, now: Date) throws {
        try db.execute(
            """
            INSERT INTO webhook_deliveries (id, webhook_id, event, body, created_at, state, next_at)
            VALUES (?, ?, ?, ?, ?, 'pending', ?)
            """, [id, webhookID, event, body, now.unixMilliseconds, now.unixMilliseconds])
    }

    /// The webhook's latest `limit` deliveries, newest first.
    func deliveries(of webhookID: Int64, limit: Int) throws -> [WebhookDelivery] {
        try db.rows(
            """
            SELECT id, event, created_at, state, attempts, next_at, attempted_at, status, answer, error
            FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?
            """, [webhookID, limit]
        ).map { row in
            WebhookDelivery(
                id: row[0], event: row[1], createdAt: Date(unixMilliseconds: row[2]),
                state: WebhookDelivery.State(rawValue: row[3]) ?? .failed, attempts: row[4],
                nextAt: (row[5] as Int64?).map(Date.init(unixMilliseconds:)),
                attemptedAt: (row[6] as Int64?).map(Date.init(unixMilliseconds:)), status: row[7], answer: row[8],
                error: row[9])
        }
    }

    /// Pending deliveries due at `now`, in every tenant, soonest first, with what sending needs,
    /// each with the due time its claim must find.
    func due(at now: Date, limit: Int) throws -> [(delivery: DueDelivery, dueAt: Int64)] {
        try db.rows(
            """
            SELECT d.id, d.webhook_id, d.event, d.body, d.attempts, d.next_at, w.url, w.secret, w.format
            FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE d.state = 'pending' AND d.next_at <= ? ORDER BY d.next_at, d.seq LIMIT ?
            """, [now.unixMilliseconds, limit]
        ).compactMap { row in
            // A URL stored was valid when written; one that no longer reads is not sent anywhere.
            guard let url = try? WebhookURL(validating: row[6]) else { return nil }
            let body: String = row[3]
            return (
                DueDelivery(
                    id: row[0], webhookID: row[1], event: row[2], storedBody: Array(body.utf8), attempts: row[4],
                    url: url, format: WebhookFormat(rawValue: row[8]) ?? .json, secret: row[7]),
                row[5]
            )
        }
    }

    /// Claims a due delivery by moving its due time to `until`, if nobody moved it since it was
    /// read as due at `dueAt`: of several senders, one claims it.
    func claim(id: String, dueAt: Int64, until: Date) throws -> Bool {
        try db.execute(
            "UPDATE webhook_deliveries SET next_at = ? WHERE id = ? AND state = 'pending' AND next_at = ?",
            [until.unixMilliseconds, id, dueAt]) == 1
    }

    /// Deletes the deliveries delivered or given up before `time`; returns how many.
    func pruneDeliveries(before time: Date) throws -> Int {
        try db.execute(
            "DELETE FROM webhook_deliveries WHERE state IN ('delivered', 'failed') AND created_at < ?",
            [time.unixMilliseconds])
    }

    /// Records an attempt: delivered, pending again at `nextAt`, or failed for good.
    func recordAttempt(
        id: String, state: WebhookDelivery.State, nextAt: Date?, attempt: DeliveryAttempt, at time: Date
    ) throws {
        try db.execute(
            """
            UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_at = ?, attempted_at = ?,
                status = ?, answer = ?, error = ?
            WHERE id = ?
            """,
            [
                state.rawValue, nextAt?.unixMilliseconds, time.unixMilliseconds, attempt.status, attempt.answer,
                attempt.error, id,
            ])
    }
}

extension Transaction {
    /// Webhooks and their deliveries.
    var webhooks: WebhookTable { WebhookTable(db: self) }
}
