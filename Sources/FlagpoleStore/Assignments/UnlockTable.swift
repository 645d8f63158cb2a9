import FlagpoleCore
import Foundation

/// The one home of every statement on `unlocks` and `unlock_events`: users' recorded states of
/// unlock flags, and the history of their changes.
struct UnlockTable {
    let db: Transaction

    /// The recorded state of `user` for a feature, `nil` when none is recorded.
    func state(of user: UserID, featureID: Int64) throws -> Bool? {
        try db.value(
            Bool.self, "SELECT unlocked FROM unlocks WHERE feature_id = ? AND user_id = ?",
            [featureID, user.rawValue])
    }

    /// Records `user`'s state of a feature, with an event saying who made the change and why.
    func record(
        _ isUnlocked: Bool, of user: UserID, featureID: Int64, in scope: EnvironmentScope, source: String?,
        actor: String, at time: Date
    ) throws {
        db.noteUserChange(user, in: scope)
        let milliseconds = time.unixMilliseconds
        try db.execute(
            """
            INSERT INTO unlocks (tenant_id, environment_id, feature_id, user_id, unlocked, source, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (feature_id, user_id) DO UPDATE SET unlocked = excluded.unlocked, source = excluded.source,
                updated_at = excluded.updated_at
            """,
            [scope.tenant.id, scope.id, featureID, user.rawValue, isUnlocked, source, milliseconds])
        try db.execute(
            """
            INSERT INTO unlock_events (tenant_id, environment_id, feature_id, user_id, unlocked, source, actor, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [scope.tenant.id, scope.id, featureID, user.rawValue, isUnlocked, source, actor, milliseconds])
    }

    /// The recorded states of an environment by feature name then user, optionally of one user
    /// or one feature; with `history`, every change instead, newest first.
    func records(
        in scope: EnvironmentScope, user: UserID?, featureID: Int64?, history: Bool
    ) throws -> [UnlockRecord] {
        let table = history ? "unlock_events" : "unlocks"
        var sql = """
            SELECT f.name, u.user_id, u.unlocked, u.source, u.\(history ? "created_at" : "updated_at"), \
            \(history ? "u.actor" : "CAST(NULL AS text)")
            FROM \(table) u JOIN features f ON f.id = u.feature_id
            WHERE u.environment_id = ? AND u.tenant_id = ?
            """
        var arguments: SQLArguments = [scope.id, scope.tenant.id]
        if let user {
            sql += " AND u.user_id = ?"
            arguments.append(user.rawValue)
        }
        if let featureID {
            sql += " AND u.feature_id = ?"
            arguments.append(featureID)
        }
        sql += history ? " ORDER BY u.id DESC" : " ORDER BY f.name, u.user_id"
        return try db.rows(sql, arguments).map { row in
            UnlockRecord(
                feature: row[0], user: UserID(rawValue: row[1]), isUnlocked: row[2], source: row[3],
                time: Date(unixMilliseconds: row[4]), actor: row[5])
        }
    }

    /// Deletes `user`'s unlock states and their history in an environment; returns how many rows went.
    func forget(_ user: UserID, in scope: EnvironmentScope) throws -> Int {
        var deleted = 0
        for table in ["unlocks", "unlock_events"] {
            deleted += try db.execute(
                "DELETE FROM \(table) WHERE environment_id = ? AND user_id = ?", [scope.id, user.rawValue])
        }
        return deleted
    }

    /// How many unlock states are recorded, in every tenant.
    func count() throws -> Int {
        try db.value(Int.self, "SELECT count(*) FROM unlocks") ?? 0
    }
}

extension Transaction {
    /// Users' unlock states.
    var unlocks: UnlockTable { UnlockTable(db: self) }
}
