import FlagpoleCore
import Foundation

/// The one home of every statement on `api_keys`, `sessions` and `server_secrets`: the API's
/// keys, the dashboard's sign-ins made with them, and what the server signs with.
struct KeyTable {
    let db: Transaction

    /// A key that is not revoked, found by the prefix of a presented secret. The caller
    /// compares the digests, in constant time.
    func activeKey(prefix: String) throws -> ActiveKey? {
        try db.row(
            "\(ActiveKey.columns) FROM api_keys k \(ActiveKey.joins) WHERE k.prefix = ? AND k.revoked_at IS NULL",
            [prefix], cached: true
        ).map(ActiveKey.init)
    }

    /// Whether any key, revoked or not, has `prefix`.
    func hasKey(prefix: String) throws -> Bool {
        try db.row("SELECT 1 FROM api_keys WHERE prefix = ?", [prefix]) != nil
    }

    /// Stores a key by its prefix and digest: the secret itself is never stored.
    func insert(
        tenantID: Int64?, environmentID: Int64?, memberID: Int64?, role: KeyRole, prefix: String, digest: [UInt8],
        name: String, createdAt: Date
    ) throws {
        try db.execute(
            """
            INSERT INTO api_keys (tenant_id, environment_id, member_id, role, prefix, sha256, name, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [tenantID, environmentID, memberID, role.rawValue, prefix, digest, name, createdAt.unixMilliseconds])
    }

    /// The keys of `owner` (whose tenant is `tenantID`, `nil` for the server), revoked ones
    /// included, oldest first.
    func keys(of owner: KeyOwner, tenantID: Int64?) throws -> [APIKeyInfo] {
        let rows: [SQLRow] =
            if let tenantID {
                try db.rows(
                    """
                    SELECT k.prefix, k.role, k.name, k.created_at, k.revoked_at, e.name, m.email, k.last_used_at
                    FROM api_keys k LEFT JOIN environments e ON e.id = k.environment_id
                    LEFT JOIN members m ON m.id = k.member_id
                    WHERE k.tenant_id = ? ORDER BY k.id
                    """, [tenantID])
            } else {
                // Server keys are scoped to no environment and belong to no member.
                try db.rows(
                    """
                    SELECT prefix, role, name, created_at, revoked_at, CAST(NULL AS text), CAST(NULL AS text),
                        last_used_at
                    FROM api_keys WHERE tenant_id IS NULL ORDER BY id
                    """)
            }
        return rows.map { row in
            APIKeyInfo(
                prefix: row[0], owner: owner, role: KeyRole(rawValue: row[1]) ?? .reader, name: row[2],
                createdAt: Date(unixMilliseconds: row[3]),
                revokedAt: (row[4] as Int64?).map(Date.init(unixMilliseconds:)),
                environment: (row[5] as String?).map(EnvironmentName.init(rawValue:)), member: row[6],
                lastUsedAt: (row[7] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }

    /// Marks the key with `prefix` revoked at `time`.
    func revoke(prefix: String, at time: Date) throws {
        try db.execute("UPDATE api_keys SET revoked_at = ? WHERE prefix = ?", [time.unixMilliseconds, prefix])
    }

    /// Revokes every key the member holds in the tenant with row id `tenantID`.
    func revoke(memberID: Int64, tenantID: Int64, at time: Date) throws {
        try db.execute(
            "UPDATE api_keys SET revoked_at = ? WHERE member_id = ? AND tenant_id = ? AND revoked_at IS NULL",
            [time.unixMilliseconds, memberID, tenantID])
    }

    /// Notes that the key with row id `id` was presented at `time`.
    func markUsed(id: Int64, at time: Date) throws {
        try db.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [time.unixMilliseconds, id])
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

    /// The key a live session acts with, found by the token's digest; `nil` when the session
    /// is unknown, expired, or its key was revoked.
    func sessionKey(digest: [UInt8], now: Date) throws -> ActiveKey? {
        try db.row(
            """
            \(ActiveKey.columns) FROM sessions s JOIN api_keys k ON k.id = s.key_id \(ActiveKey.joins)
            WHERE s.sha256 = ? AND s.expires_at > ? AND k.revoked_at IS NULL
            """, [digest, now.unixMilliseconds], cached: true
        ).map(ActiveKey.init)
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

/// A key that is not revoked, with what decides what it may do and how revisions name it.
struct ActiveKey {
    static let columns = """
        SELECT k.id, k.prefix, k.role, k.sha256, t.slug, e.name, k.name, k.member_id, m.email, m.name, ms.role,
            k.last_used_at
        """
    /// Its tenant, environment, member, and the member's role in the key's tenant.
    static let joins = """
        LEFT JOIN tenants t ON t.id = k.tenant_id LEFT JOIN environments e ON e.id = k.environment_id
        LEFT JOIN members m ON m.id = k.member_id
        LEFT JOIN memberships ms ON ms.member_id = k.member_id AND ms.tenant_id = k.tenant_id
        """

    var id: Int64
    var prefix: String
    var role: String
    var digest: Data
    /// `nil` for a server key.
    var tenant: String?
    var environment: String?
    var name: String
    /// The member's row id, email, name and role in the tenant; `nil` for a service's key.
    var memberID: Int64?
    var memberEmail: String?
    var memberName: String?
    var memberRole: String?
    var lastUsedAt: Date?

    /// Whether its last use is older than an hour (or unrecorded): the use at `time` is then
    /// written, so listings show it to the hour and a hot path writes at most once an hour.
    func isLastUseStale(at time: Date) -> Bool {
        lastUsedAt.map { time.timeIntervalSince($0) >= 3600 } ?? true
    }

    init(_ row: SQLRow) {
        id = row[0]
        prefix = row[1]
        role = row[2]
        digest = row[3]
        tenant = row[4]
        environment = row[5]
        name = row[6]
        memberID = row[7]
        memberEmail = row[8]
        memberName = row[9]
        memberRole = row[10]
        lastUsedAt = (row[11] as Int64?).map(Date.init(unixMilliseconds:))
    }
}

extension Transaction {
    /// Keys and sessions.
    var keys: KeyTable { KeyTable(db: self) }
}
