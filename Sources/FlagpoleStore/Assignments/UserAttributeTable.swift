import FlagpoleCore
import Foundation

/// The one home of every statement on `user_attributes`, each user's last attributes per
/// environment, which rule changes are planned against, and on `erasures`, the anonymous record
/// of users forgotten.
struct UserAttributeTable {
    let db: Transaction

    /// Keeps `attributes` as `user`'s last, seen in the hour `hour` (Unix hours).
    func keep(_ attributes: UserAttributes, of user: UserID, in scope: EnvironmentScope, hour: Int64) throws {
        db.noteUserChange(user, in: scope)
        let json = String(decoding: attributes.canonicalBytes, as: UTF8.self)
        let upsert = try db.statement(
            """
            INSERT INTO user_attributes (tenant_id, environment_id, user_id, attributes, fingerprint, seen_hour)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (environment_id, user_id) DO UPDATE
            SET attributes = excluded.attributes, fingerprint = excluded.fingerprint, seen_hour = excluded.seen_hour
            """, cached: true)
        upsert.bind(scope.tenant.id, at: 1)
        upsert.bind(scope.id, at: 2)
        upsert.bind(user.rawValue, at: 3)
        upsert.bind(json, at: 4)
        upsert.bind(attributes.fingerprint, at: 5)
        upsert.bind(hour, at: 6)
        try upsert.execute()
    }

    /// Deletes `user`'s attributes in an environment; returns how many rows went (0 or 1).
    func forget(_ user: UserID, in scope: EnvironmentScope) throws -> Int {
        try db.execute(
            "DELETE FROM user_attributes WHERE environment_id = ? AND user_id = ?", [scope.id, user.rawValue])
    }

    /// Notes that someone was forgotten in a tenant, without naming them.
    func noteErasure(in tenant: TenantScope, actor: String, rowsDeleted: Int, at time: Date) throws {
        try db.execute(
            "INSERT INTO erasures (tenant_id, actor, rows_deleted, created_at) VALUES (?, ?, ?, ?)",
            [tenant.id, actor, rowsDeleted, time.unixMilliseconds])
    }

    /// `user`'s last attributes in an environment, when kept.
    func attributes(of user: UserID, in scope: EnvironmentScope) throws -> KeptAttributes? {
        try db.row(
            "SELECT fingerprint, seen_hour, attributes FROM user_attributes WHERE environment_id = ? AND user_id = ?",
            [scope.id, user.rawValue], cached: true
        ).map { KeptAttributes(fingerprint: $0[0], hour: $0[1], json: $0[2]) }
    }
}

extension UserAttributeTable {
    /// The attributes of up to `limit` users of the environment, whichever the database reads
    /// first: a sample of the names apps send, without scanning every user.
    func sample(in scope: EnvironmentScope, limit: Int) throws -> [UserAttributes] {
        try db.rows(
            "SELECT attributes FROM user_attributes WHERE environment_id = ? LIMIT ?", [scope.id, limit]
        ).compactMap { row in
            let json: String = row[0]
            return UserAttributes(stored: Array(json.utf8))
        }
    }
}

extension Transaction {
    /// Users' last attributes.
    var userAttributes: UserAttributeTable { UserAttributeTable(db: self) }
}

/// A user's last attributes as the store keeps them.
struct KeptAttributes: Hashable, Sendable {
    var fingerprint: Int64
    /// Unix hours: when they were first seen, refreshed once a day while they are sent.
    var hour: Int64
    /// Their canonical JSON.
    var json: String

    /// The attributes, decoded.
    var decoded: UserAttributes? { UserAttributes(stored: Array(json.utf8)) }

    /// Whether `hour` is of an earlier day than `now`: time to note that they are still sent.
    func isStale(now: Int64) -> Bool { hour / 24 < now / 24 }

    /// The current Unix hour.
    static func hour(of date: Date) -> Int64 { Int64(date.timeIntervalSince1970 / 3600) }
}
