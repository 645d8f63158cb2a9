import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on `api_keys`, `sessions` and `server_secrets`: the API's
/// keys, the dashboard's sign-ins made with them, and what the server signs with.
struct KeyTable {
    let db: Database

    /// A key that is not revoked, found by the prefix of a presented secret: its row id, role,
    /// SHA-256, tenant's slug (`nil` for a server key) and the environment it is scoped to, if
    /// any. The caller compares the digests, in constant time.
    func activeKey(
        prefix: String
    ) throws -> (
        id: Int64, role: String, digest: Data, tenant: String?, environment: String?
    )? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT k.id, k.role, k.sha256, t.slug, e.name FROM api_keys k
                    LEFT JOIN tenants t ON t.id = k.tenant_id LEFT JOIN environments e ON e.id = k.environment_id
                    WHERE k.prefix = ? AND k.revoked_at IS NULL
                    """), arguments: [prefix]
        ).map { ($0[0], $0[1], $0[2], $0[3], $0[4]) }
    }

    /// Whether any key, revoked or not, has `prefix`.
    func hasKey(prefix: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM api_keys WHERE prefix = ?", arguments: [prefix]) ?? false
    }

    /// Stores a key by its prefix and digest: the secret itself is never stored.
    func insert(
        tenantID: Int64?, environmentID: Int64?, role: KeyRole, prefix: String, digest: [UInt8], name: String,
        createdAt: Date
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO api_keys (tenant_id, environment_id, role, prefix, sha256, name, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [tenantID, environmentID, role.rawValue, prefix, Data(digest), name, createdAt.unixMilliseconds])
    }

    /// The keys of `owner` (whose tenant is `tenantID`, `nil` for the server), revoked ones
    /// included, oldest first.
    func keys(of owner: KeyOwner, tenantID: Int64?) throws -> [APIKeyInfo] {
        let rows: [Row] =
            if let tenantID {
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT k.*, e.name AS environment FROM api_keys k LEFT JOIN environments e ON e.id = k.environment_id
                        WHERE k.tenant_id = ? ORDER BY k.id
                        """, arguments: [tenantID])
            } else {
                try Row.fetchAll(db, sql: "SELECT * FROM api_keys WHERE tenant_id IS NULL ORDER BY id")
            }
        return rows.map { row in
            APIKeyInfo(
                prefix: row["prefix"], owner: owner, role: KeyRole(rawValue: row["role"]) ?? .reader, name: row["name"],
                createdAt: Date(unixMilliseconds: row["created_at"]),
                revokedAt: (row["revoked_at"] as Int64?).map(Date.init(unixMilliseconds:)),
                environment: (row["environment"] as String?).map(EnvironmentName.init(rawValue:)))
        }
    }

    /// Marks the key with `prefix` revoked at `time`.
    func revoke(prefix: String, at time: Date) throws {
        try db.execute(
            sql: "UPDATE api_keys SET revoked_at = ? WHERE prefix = ?", arguments: [time.unixMilliseconds, prefix])
    }

    // MARK: Sessions

    /// Opens a sign-in of the key with row id `keyID`, kept by its token's digest, sweeping the
    /// sessions expired at `now` on the way.
    func openSession(keyID: Int64, digest: [UInt8], now: Date, expiresAt: Date) throws {
        try db.execute(sql: "DELETE FROM sessions WHERE expires_at <= ?", arguments: [now.unixMilliseconds])
        try db.execute(
            sql: "INSERT INTO sessions (key_id, sha256, created_at, expires_at) VALUES (?, ?, ?, ?)",
            arguments: [keyID, Data(digest), now.unixMilliseconds, expiresAt.unixMilliseconds])
    }

    /// The key a live session acts with, found by the token's digest: its prefix, role and
    /// tenant's slug; `nil` when the session is unknown, expired, or its key was revoked.
    func sessionKey(digest: [UInt8], now: Date) throws -> (prefix: String, role: String, tenant: String?)? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT k.prefix, k.role, t.slug FROM sessions s
                    JOIN api_keys k ON k.id = s.key_id LEFT JOIN tenants t ON t.id = k.tenant_id
                    WHERE s.sha256 = ? AND s.expires_at > ? AND k.revoked_at IS NULL
                    """), arguments: [Data(digest), now.unixMilliseconds]
        ).map { ($0[0], $0[1], $0[2]) }
    }

    /// Ends the session whose token has `digest`.
    func closeSession(digest: [UInt8]) throws {
        try db.execute(sql: "DELETE FROM sessions WHERE sha256 = ?", arguments: [Data(digest)])
    }

    // MARK: Secrets

    /// The server's secret named `name`, made with `random` the first time it is asked for.
    func secret(named name: String, makingIt random: @autoclosure () -> [UInt8], now: Date) throws -> [UInt8] {
        try db.execute(
            sql: "INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
            arguments: [name, Data(random()), now.unixMilliseconds])
        let secret = try Data.fetchOne(db, sql: "SELECT secret FROM server_secrets WHERE name = ?", arguments: [name])!
        return Array(secret)
    }

    /// Ends every session: a restored file brings back no sign-in.
    func closeAllSessions() throws {
        try db.execute(sql: "DELETE FROM sessions")
    }
}

extension Database {
    /// Keys and sessions.
    var keys: KeyTable { KeyTable(db: self) }
}
