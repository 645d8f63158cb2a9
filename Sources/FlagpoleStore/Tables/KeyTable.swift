import FlagpoleCore
import Foundation

/// The one home of every statement on `api_keys`, `sessions` and `server_secrets`: the API's
/// keys, the dashboard's sign-ins made with them, and what the server signs with.
struct KeyTable {
    let db: any SQLConnection

    /// A key that is not revoked, found by the prefix of a presented secret: its row id, role,
    /// SHA-256, tenant's slug (`nil` for a server key) and the environment it is scoped to, if
    /// any. The caller compares the digests, in constant time.
    func activeKey(
        prefix: String
    ) throws -> (
        id: Int64, role: String, digest: Data, tenant: String?, environment: String?
    )? {
        try db.row(
            """
            SELECT k.id, k.role, k.sha256, t.slug, e.name FROM api_keys k
            LEFT JOIN tenants t ON t.id = k.tenant_id LEFT JOIN environments e ON e.id = k.environment_id
            WHERE k.prefix = ? AND k.revoked_at IS NULL
            """, [prefix], cached: true
        ).map { ($0[0], $0[1], $0[2], $0[3], $0[4]) }
    }

    /// Whether any key, revoked or not, has `prefix`.
    func hasKey(prefix: String) throws -> Bool {
        try db.row("SELECT 1 FROM api_keys WHERE prefix = ?", [prefix]) != nil
    }

    /// Stores a key by its prefix and digest: the secret itself is never stored.
    func insert(
        tenantID: Int64?, environmentID: Int64?, role: KeyRole, prefix: String, digest: [UInt8], name: String,
        createdAt: Date
    ) throws {
        try db.execute(
            """
            INSERT INTO api_keys (tenant_id, environment_id, role, prefix, sha256, name, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [tenantID, environmentID, role.rawValue, prefix, digest, name, createdAt.unixMilliseconds])
    }

    /// The keys of `owner` (whose tenant is `tenantID`, `nil` for the server), revoked ones
    /// included, oldest first.
    func keys(of owner: KeyOwner, tenantID: Int64?) throws -> [APIKeyInfo] {
        let rows: [SQLRow] =
            if let tenantID {
                try db.rows(
                    """
                    SELECT k.prefix, k.role, k.name, k.created_at, k.revoked_at, e.name
                    FROM api_keys k LEFT JOIN environments e ON e.id = k.environment_id
                    WHERE k.tenant_id = ? ORDER BY k.id
                    """, [tenantID])
            } else {
                // Server keys are scoped to no environment.
                try db.rows(
                    """
                    SELECT prefix, role, name, created_at, revoked_at, CAST(NULL AS text)
                    FROM api_keys WHERE tenant_id IS NULL ORDER BY id
                    """)
            }
        return rows.map { row in
            APIKeyInfo(
                prefix: row[0], owner: owner, role: KeyRole(rawValue: row[1]) ?? .reader, name: row[2],
                createdAt: Date(unixMilliseconds: row[3]),
                revokedAt: (row[4] as Int64?).map(Date.init(unixMilliseconds:)),
                environment: (row[5] as String?).map(EnvironmentName.init(rawValue:)))
        }
    }

    /// Marks the key with `prefix` revoked at `time`.
    func revoke(prefix: String, at time: Date) throws {
        try db.execute("UPDATE api_keys SET revoked_at = ? WHERE prefix = ?", [time.unixMilliseconds, prefix])
    }

    // MARK: Sessions

    /// Opens a sign-in of the key with row id `keyID`, kept by its token's digest, sweeping the
    /// sessions expired at `now` on the way.
    func openSession(keyID: Int64, digest: [UInt8], now: Date, expiresAt: Date) throws {
        try db.execute("DELETE FROM sessions WHERE expires_at <= ?", [now.unixMilliseconds])
        try db.execute(
            "INSERT INTO sessions (key_id, sha256, created_at, expires_at) VALUES (?, ?, ?, ?)",
            [keyID, digest, now.unixMilliseconds, expiresAt.unixMilliseconds])
    }

    /// The key a live session acts with, found by the token's digest: its prefix, role and
    /// tenant's slug; `nil` when the session is unknown, expired, or its key was revoked.
    func sessionKey(digest: [UInt8], now: Date) throws -> (prefix: String, role: String, tenant: String?)? {
        try db.row(
            """
            SELECT k.prefix, k.role, t.slug FROM sessions s
            JOIN api_keys k ON k.id = s.key_id LEFT JOIN tenants t ON t.id = k.tenant_id
            WHERE s.sha256 = ? AND s.expires_at > ? AND k.revoked_at IS NULL
            """, [digest, now.unixMilliseconds], cached: true
        ).map { ($0[0], $0[1], $0[2]) }
    }

    /// Ends the session whose token has `digest`.
    func closeSession(digest: [UInt8]) throws {
        try db.execute("DELETE FROM sessions WHERE sha256 = ?", [digest])
    }

    // MARK: Secrets

    /// The server's secret named `name`, made with `random` the first time it is asked for.
    func secret(named name: String, makingIt random: @autoclosure () -> [UInt8], now: Date) throws -> [UInt8] {
        try db.execute(
            "INSERT INTO server_secrets (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
            [name, random(), now.unixMilliseconds])
        return try db.value([UInt8].self, "SELECT secret FROM server_secrets WHERE name = ?", [name])!
    }

    /// Ends every session: a restored file brings back no sign-in.
    func closeAllSessions() throws {
        try db.execute("DELETE FROM sessions")
    }
}

extension SQLConnection {
    /// Keys and sessions.
    var keys: KeyTable { KeyTable(db: self) }
}
