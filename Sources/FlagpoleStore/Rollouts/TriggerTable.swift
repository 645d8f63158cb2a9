import FlagpoleCore
import Foundation

/// A trigger's row, with the names of its environment and feature.
struct TriggerRow: Sendable {
    let id: Int64
    let featureID: Int64
    let path: EnvironmentPath
    let feature: String
    let action: Trigger.Action
    let name: String
    let prefix: String
    let createdBy: String
    let createdAt: Date
    let revokedAt: Date?

    func trigger(calls: [TriggerCall]) -> Trigger {
        Trigger(
            prefix: prefix, name: name, feature: feature, action: action, createdBy: createdBy, createdAt: createdAt,
            revokedAt: revokedAt, calls: calls)
    }
}

/// The one home of every statement on `triggers` and `trigger_calls`.
struct TriggerTable {
    let db: Transaction

    private static let select = """
        SELECT g.id, g.feature_id, t.slug, e.name, f.name, g.action, g.name, g.prefix, g.created_by, g.created_at,
            g.revoked_at
        FROM triggers g JOIN environments e ON e.id = g.environment_id JOIN tenants t ON t.id = g.tenant_id
            JOIN features f ON f.id = g.feature_id
        """

    private func triggers(where condition: String, _ arguments: SQLArguments) throws -> [TriggerRow] {
        try db.rows("\(Self.select) WHERE \(condition) ORDER BY g.id", arguments).map { row in
            TriggerRow(
                id: row[0], featureID: row[1],
                path: EnvironmentPath(
                    tenant: TenantSlug(rawValue: row[2]), environment: EnvironmentName(rawValue: row[3])),
                feature: row[4], action: Trigger.Action(rawValue: row[5]) ?? .pause, name: row[6], prefix: row[7],
                createdBy: row[8], createdAt: Date(unixMilliseconds: row[9]),
                revokedAt: (row[10] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }

    /// The trigger whose token has this SHA-256, revoked or not.
    func trigger(sha256: [UInt8]) throws -> TriggerRow? {
        try triggers(where: "g.sha256 = ?", [sha256]).first
    }

    /// The environment's triggers (of one feature, when named), oldest first.
    func triggers(in scope: EnvironmentScope, featureID: Int64? = nil) throws -> [TriggerRow] {
        guard let featureID else {
            return try triggers(where: "g.tenant_id = ? AND g.environment_id = ?", [scope.tenant.id, scope.id])
        }
        return try triggers(
            where: "g.tenant_id = ? AND g.environment_id = ? AND g.feature_id = ?",
            [scope.tenant.id, scope.id, featureID])
    }

    func insert(
        scope: EnvironmentScope, featureID: Int64, action: Trigger.Action, name: String, token: TriggerToken,
        createdBy: String, now: Date
    ) throws {
        try db.execute(
            """
            INSERT INTO triggers (tenant_id, environment_id, feature_id, action, name, sha256, prefix, created_by,
                created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                scope.tenant.id, scope.id, featureID, action.rawValue, name, token.digest, token.prefix, createdBy,
                now.unixMilliseconds,
            ])
    }

    /// Revokes the environment's trigger `prefix`; returns whether there was one not revoked yet.
    func revoke(prefix: String, in scope: EnvironmentScope, now: Date) throws -> Bool {
        try db.execute(
            """
            UPDATE triggers SET revoked_at = ?
            WHERE tenant_id = ? AND environment_id = ? AND prefix = ? AND revoked_at IS NULL
            """, [now.unixMilliseconds, scope.tenant.id, scope.id, prefix]) == 1
    }

    /// When the trigger last acted.
    func lastActed(triggerID: Int64) throws -> Date? {
        try db.value(
            Int64.self, "SELECT max(at) FROM trigger_calls WHERE trigger_id = ? AND acted = ?", [triggerID, true]
        )
        .map(Date.init(unixMilliseconds:))
    }

    func insertCall(_ call: TriggerCall, of triggerID: Int64) throws {
        try db.execute(
            "INSERT INTO trigger_calls (trigger_id, at, address, user_agent, acted, outcome) VALUES (?, ?, ?, ?, ?, ?)",
            [triggerID, call.at.unixMilliseconds, call.address, call.userAgent, call.acted, call.outcome])
    }

    /// The trigger's latest `limit` calls, newest first.
    func calls(of triggerID: Int64, limit: Int) throws -> [TriggerCall] {
        try db.rows(
            """
            SELECT at, address, user_agent, acted, outcome FROM trigger_calls WHERE trigger_id = ?
            ORDER BY id DESC LIMIT ?
            """, [triggerID, limit]
        ).map {
            TriggerCall(
                at: Date(unixMilliseconds: $0[0]), address: $0[1], userAgent: $0[2], acted: $0[3], outcome: $0[4])
        }
    }
}

extension Transaction {
    /// Trigger URLs and their calls.
    var triggers: TriggerTable { TriggerTable(db: self) }
}
