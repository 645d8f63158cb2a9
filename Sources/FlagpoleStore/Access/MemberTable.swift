import FlagpoleCore
import Foundation

/// The one home of every statement on `members`, `memberships`, `member_links`,
/// `member_sessions` and `sign_in_failures`: the people of tenants and how they sign in.
struct MemberTable {
    let db: Transaction

    // MARK: Members

    /// The member with `email`: row id, name and password hash (`nil` before they set one).
    func member(email: String) throws -> (id: Int64, name: String, passwordHash: String?)? {
        try db.row("SELECT id, name, password_hash FROM members WHERE email = ?", [email], cached: true)
            .map { ($0[0], $0[1], $0[2]) }
    }

    func insertMember(email: String, name: String, now: Date) throws -> Int64 {
        try db.insertReturningID(
            "INSERT INTO members (email, name, created_at) VALUES (?, ?, ?) RETURNING id",
            [email, name, now.unixMilliseconds])
    }

    func setPassword(memberID: Int64, hash: String) throws {
        try db.execute("UPDATE members SET password_hash = ? WHERE id = ?", [hash, memberID])
    }

    // MARK: Memberships

    /// The members of the tenant with row id `tenantID`, in the order they joined.
    func members(tenantID: Int64) throws -> [Member] {
        try db.rows(
            """
            SELECT m.email, m.name, ms.role, ms.created_at, m.password_hash IS NOT NULL
            FROM memberships ms JOIN members m ON m.id = ms.member_id
            WHERE ms.tenant_id = ? ORDER BY ms.created_at, m.email
            """, [tenantID]
        ).map { row in
            Member(
                email: row[0], name: row[1], role: KeyRole(rawValue: row[2]) ?? .reader,
                joinedAt: Date(unixMilliseconds: row[3]), hasPassword: row[4])
        }
    }

    /// The member's role in the tenant with row id `tenantID`, `nil` when they are not in it.
    func role(memberID: Int64, tenantID: Int64) throws -> KeyRole? {
        try db.value(
            String.self, "SELECT role FROM memberships WHERE member_id = ? AND tenant_id = ?", [memberID, tenantID]
        ).flatMap(KeyRole.init(rawValue:))
    }

    /// Every tenant the member is in, with their role there.
    func roles(memberID: Int64) throws -> [TenantSlug: KeyRole] {
        var roles: [TenantSlug: KeyRole] = [:]
        for row in try db.rows(
            "SELECT t.slug, ms.role FROM memberships ms JOIN tenants t ON t.id = ms.tenant_id WHERE ms.member_id = ?",
            [memberID], cached: true)
        {
            if let role = KeyRole(rawValue: row[1]) { roles[TenantSlug(rawValue: row[0])] = role }
        }
        return roles
    }

    func insertMembership(memberID: Int64, tenantID: Int64, role: KeyRole, now: Date) throws {
        try db.execute(
            "INSERT INTO memberships (member_id, tenant_id, role, created_at) VALUES (?, ?, ?, ?)",
            [memberID, tenantID, role.rawValue, now.unixMilliseconds])
    }

    /// Returns whether the member was in the tenant.
    func updateRole(memberID: Int64, tenantID: Int64, role: KeyRole) throws -> Bool {
        try db.execute(
            "UPDATE memberships SET role = ? WHERE member_id = ? AND tenant_id = ?",
            [role.rawValue, memberID, tenantID]) > 0
    }

    /// Returns whether the member was in the tenant.
    func deleteMembership(memberID: Int64, tenantID: Int64) throws -> Bool {
        try db.execute("DELETE FROM memberships WHERE member_id = ? AND tenant_id = ?", [memberID, tenantID]) > 0
    }

    // MARK: One-time links

    /// Stores a link by its token's digest, replacing the member's unused links for the same
    /// purpose: only the newest one works.
    func insertLink(
        memberID: Int64, purpose: MemberLinkPurpose, digest: [UInt8], createdBy: String, now: Date, expiresAt: Date
    ) throws {
        try db.execute(
            "DELETE FROM member_links WHERE member_id = ? AND purpose = ? AND used_at IS NULL",
            [memberID, purpose.rawValue])
        try db.execute(
            """
            INSERT INTO member_links (member_id, purpose, sha256, created_by, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [memberID, purpose.rawValue, digest, createdBy, now.unixMilliseconds, expiresAt.unixMilliseconds])
    }

    /// The link whose token has `digest`: its row id, member, purpose, expiry and use.
    func link(
        digest: [UInt8]
    ) throws -> (
        id: Int64, memberID: Int64, email: String, name: String, purpose: String, expiresAt: Date, usedAt: Date?
    )? {
        try db.row(
            """
            SELECT l.id, l.member_id, m.email, m.name, l.purpose, l.expires_at, l.used_at
            FROM member_links l JOIN members m ON m.id = l.member_id WHERE l.sha256 = ?
            """, [digest]
        ).map {
            (
                $0[0], $0[1], $0[2], $0[3], $0[4], Date(unixMilliseconds: $0[5]),
                ($0[6] as Int64?).map(Date.init(unixMilliseconds:))
            )
        }
    }

    func markLinkUsed(id: Int64, now: Date) throws {
        try db.execute("UPDATE member_links SET used_at = ? WHERE id = ?", [now.unixMilliseconds, id])
    }

    /// When the member's unused invitation expires, for each member of the tenant who has one.
    func pendingInvitations(tenantID: Int64) throws -> [String: Date] {
        var expiries: [String: Date] = [:]
        for row in try db.rows(
            """
            SELECT m.email, l.expires_at FROM member_links l
            JOIN memberships ms ON ms.member_id = l.member_id JOIN members m ON m.id = l.member_id
            WHERE ms.tenant_id = ? AND l.purpose = 'invitation' AND l.used_at IS NULL
            """, [tenantID])
        {
            expiries[row[0]] = Date(unixMilliseconds: row[1])
        }
        return expiries
    }

    // MARK: Sessions

    /// Opens a sign-in of the member, sweeping the sessions expired at `now` on the way.
    func openSession(
        memberID: Int64, digest: [UInt8], address: String, browser: String?, now: Date, expiresAt: Date
    ) throws {
        try db.execute("DELETE FROM member_sessions WHERE expires_at <= ?", [now.unixMilliseconds])
        try db.execute(
            """
            INSERT INTO member_sessions (member_id, sha256, address, browser, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [memberID, digest, address, browser, now.unixMilliseconds, expiresAt.unixMilliseconds])
    }

    /// The member of a live session, found by the token's digest.
    func sessionMember(digest: [UInt8], now: Date) throws -> (id: Int64, email: String, name: String)? {
        try db.row(
            """
            SELECT m.id, m.email, m.name FROM member_sessions s JOIN members m ON m.id = s.member_id
            WHERE s.sha256 = ? AND s.expires_at > ?
            """, [digest, now.unixMilliseconds], cached: true
        ).map { ($0[0], $0[1], $0[2]) }
    }

    /// The member's live sessions, newest first.
    func sessions(memberID: Int64, now: Date) throws -> [MemberSession] {
        try db.rows(
            """
            SELECT id, address, browser, created_at, expires_at FROM member_sessions
            WHERE member_id = ? AND expires_at > ? ORDER BY created_at DESC, id DESC
            """, [memberID, now.unixMilliseconds]
        ).map {
            MemberSession(
                id: $0[0], address: $0[1], browser: $0[2], createdAt: Date(unixMilliseconds: $0[3]),
                expiresAt: Date(unixMilliseconds: $0[4]))
        }
    }

    /// The row id of the session whose token has `digest`.
    func sessionID(digest: [UInt8]) throws -> Int64? {
        try db.value(Int64.self, "SELECT id FROM member_sessions WHERE sha256 = ?", [digest])
    }

    /// Ends one of the member's sessions; returns whether it was theirs.
    func closeSession(id: Int64, memberID: Int64) throws -> Bool {
        try db.execute("DELETE FROM member_sessions WHERE id = ? AND member_id = ?", [id, memberID]) > 0
    }

    func closeSession(digest: [UInt8]) throws {
        try db.execute("DELETE FROM member_sessions WHERE sha256 = ?", [digest])
    }

    /// Ends every session of the member, except the one with row id `keeping`.
    func closeSessions(memberID: Int64, keeping: Int64? = nil) throws {
        try db.execute("DELETE FROM member_sessions WHERE member_id = ? AND id <> ?", [memberID, keeping ?? -1])
    }

    // MARK: Failed sign-ins

    /// The failures counted for `subject` and until when it is locked.
    func failures(of subject: String) throws -> (count: Int, windowStartedAt: Date, lockedUntil: Date?)? {
        try db.row(
            "SELECT failures, window_started_at, locked_until FROM sign_in_failures WHERE subject = ?", [subject]
        ).map {
            (Int($0[0] as Int64), Date(unixMilliseconds: $0[1]), ($0[2] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }

    func setFailures(of subject: String, count: Int, windowStartedAt: Date, lockedUntil: Date?) throws {
        try db.execute(
            """
            INSERT INTO sign_in_failures (subject, failures, window_started_at, locked_until) VALUES (?, ?, ?, ?)
            ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures,
                window_started_at = excluded.window_started_at, locked_until = excluded.locked_until
            """,
            [subject, Int64(count), windowStartedAt.unixMilliseconds, lockedUntil?.unixMilliseconds])
    }

    func clearFailures(of subject: String) throws {
        try db.execute("DELETE FROM sign_in_failures WHERE subject = ?", [subject])
    }

    /// Ends every member's session: a restored file brings back no sign-in.
    func closeAllSessions() throws {
        try db.execute("DELETE FROM member_sessions")
    }
}

extension Transaction {
    /// Members, their memberships, links, sessions and failed sign-ins.
    var members: MemberTable { MemberTable(db: self) }
}
