import Crypto
import Foundation

/// A dashboard sign-in just opened: the only time its token exists outside the browser.
public struct OpenedSession: Hashable, Sendable {
    /// Goes in the session cookie; the store keeps only its SHA-256.
    public var token: String
    public var identity: KeyIdentity
    public var expiresAt: Date
}

extension Access {
    /// How long a dashboard sign-in lasts. It does not slide: a session found in a browser
    /// weeks later is worthless.
    public static let sessionLifetime: TimeInterval = 12 * 60 * 60

    /// Signs in to the dashboard with an API key: `nil` for an unknown, revoked or delivery key
    /// (delivery keys only fetch documents). Expired sessions are swept on the way.
    public func openSession(withKey secret: String, now: Date = Date()) async throws -> OpenedSession? {
        guard let presented = APIKeySecret(secret) else { return nil }
        let token = SessionToken.generate()
        return try await write { db -> OpenedSession? in
            guard let (key, identity) = try db.identity(of: presented), identity.role != .delivery else {
                return nil
            }
            let expiresAt = now.addingTimeInterval(Self.sessionLifetime)
            try db.keys.openSession(keyID: key.id, digest: token.digest, now: now, expiresAt: expiresAt)
            if key.isLastUseStale(at: now) { try db.keys.markUsed(id: key.id, at: now) }
            return OpenedSession(token: token.value, identity: identity, expiresAt: expiresAt)
        }
    }

    /// Who a session acts as: its key, or its member with the roles they have now; `nil` when
    /// the token is unknown, expired, signed out, or its key was revoked since.
    ///
    /// The row is found by the token's SHA-256, so lookup time says nothing about a guessed token.
    public func sessionIdentity(_ token: String, now: Date = Date()) async throws -> KeyIdentity? {
        guard let token = SessionToken(token) else { return nil }
        return try await read { db in
            if let key = try db.keys.sessionKey(digest: token.digest, now: now) { return KeyIdentity(key) }
            guard let member = try db.members.sessionMember(digest: token.digest, now: now) else { return nil }
            return try db.memberIdentity(member.id, email: member.email, name: member.name)
        }
    }

    /// Signs a session out: its token stops working at once. An unknown token changes nothing.
    public func closeSession(_ token: String) async throws {
        guard let token = SessionToken(token) else { return }
        try await write { db in
            try db.keys.closeSession(digest: token.digest)
            try db.members.closeSession(digest: token.digest)
        }
    }

    // MARK: Members

    /// Failures per account within `failureWindow` before it is locked for `lockout`.
    public static let accountFailureLimit = 5
    /// Failures per address within `failureWindow` before it is locked for `lockout`: higher,
    /// as an office shares one.
    public static let addressFailureLimit = 20
    public static let failureWindow: TimeInterval = 15 * 60
    public static let lockout: TimeInterval = 15 * 60

    /// Signs a member in with their password. Failures are counted per account and per
    /// address in the database, so every instance of the server shares them; while either is
    /// locked nothing is hashed. An unknown address costs a hash at `cost`, as a known one does.
    ///
    /// - parameter browser: the browser's `User-Agent`, shown in the member's list of sessions.
    /// - throws: `MemberError.passwordTooLong`, before any hashing.
    public func signIn(
        email: String, password: String, address: String, browser: String? = nil, now: Date = Date(),
        cost: PasswordCost = .owasp
    ) async throws -> SignInOutcome {
        try PasswordHash.checkSize(password)
        let email = MemberEmail.normalized(email)
        let subjects = [
            (subject: "account:\(email.prefix(254))", limit: Self.accountFailureLimit),
            (subject: "address:\(address)", limit: Self.addressFailureLimit),
        ]
        let (member, lockedUntil) = try await read { db in
            let locks = try subjects.compactMap { try db.members.failures(of: $0.subject)?.lockedUntil }
            return (try db.members.member(email: email), locks.filter { $0 > now }.max())
        }
        if let lockedUntil { return .lockedOut(until: lockedUntil) }
        let matches = try await PasswordHash.verify(password, against: member?.passwordHash, orCost: cost)
        let token = SessionToken.generate()
        return try await write { db -> SignInOutcome in
            guard matches, let member else {
                let locks = try subjects.compactMap {
                    try db.recordFailedSignIn(of: $0.subject, limit: $0.limit, now: now)
                }
                return locks.max().map { .lockedOut(until: $0) } ?? .refused
            }
            try db.members.clearFailures(of: subjects[0].subject)
            return .opened(
                try db.openMemberSession(
                    member.id, email: email, name: member.name, token: token, address: address, browser: browser,
                    now: now))
        }
    }

    /// The live sessions of the member `email`, newest first; the one whose token is `current`
    /// says so.
    public func memberSessions(
        of email: String, current: String? = nil, now: Date = Date()
    ) async throws
        -> [MemberSession]
    {
        try await read { db in
            guard let member = try db.members.member(email: email) else { return [] }
            let currentID = try current.flatMap(SessionToken.init).flatMap {
                try db.members.sessionID(digest: $0.digest)
            }
            return try db.members.sessions(memberID: member.id, now: now).map { session in
                var session = session
                session.isCurrent = session.id == currentID
                return session
            }
        }
    }

    /// Ends every session of the member `email` but the one of `current` (the browser asking):
    /// what a member does after leaving a session open somewhere.
    public func closeOtherMemberSessions(of email: String, current: String) async throws {
        try await write { db in
            guard let member = try db.members.member(email: email) else { throw MemberError.sessionNotFound }
            let kept = try SessionToken(current).flatMap { try db.members.sessionID(digest: $0.digest) }
            try db.members.closeSessions(memberID: member.id, keeping: kept)
        }
    }

    /// Ends the session with row id `id` of the member `email`; another member's is not found.
    ///
    /// - throws: `MemberError.sessionNotFound` for a session that is not theirs.
    public func closeMemberSession(_ id: Int64, of email: String) async throws {
        try await write { db in
            guard let member = try db.members.member(email: email),
                try db.members.closeSession(id: id, memberID: member.id)
            else { throw MemberError.sessionNotFound }
        }
    }
}

extension Transaction {
    /// Counts a failed sign-in of `subject` (an account or an address): the count starts again
    /// once `failureWindow` has passed since its first failure, and reaching `limit` locks the
    /// subject for `lockout`. Returns until when it is now locked, if it is.
    func recordFailedSignIn(of subject: String, limit: Int, now: Date) throws -> Date? {
        let window = try members.failures(of: subject).flatMap {
            now.timeIntervalSince($0.windowStartedAt) < Access.failureWindow ? $0 : nil
        }
        let count = (window?.count ?? 0) + 1
        let lock = count >= limit ? now.addingTimeInterval(Access.lockout) : nil
        try members.setFailures(
            of: subject, count: count, windowStartedAt: window?.windowStartedAt ?? now, lockedUntil: lock)
        return lock
    }

    /// A member as a session sees them: what they may do in each tenant, now.
    func memberIdentity(_ memberID: Int64, email: String, name: String) throws -> KeyIdentity {
        let roles = try members.roles(memberID: memberID)
        return KeyIdentity(
            prefix: "", owner: .member(MemberGrants(email: email, roles: roles)), role: roles.values.max() ?? .reader,
            actor: Member.actor(name: name, email: email))
    }

    /// Opens a dashboard session of the member, from `address` in `browser` (a `User-Agent`,
    /// kept to its first 256 characters).
    func openMemberSession(
        _ memberID: Int64, email: String, name: String, token: SessionToken, address: String, browser: String?,
        now: Date
    ) throws -> OpenedSession {
        let expiresAt = now.addingTimeInterval(Access.sessionLifetime)
        let browser = browser.map { String(String.UnicodeScalarView($0.unicodeScalars.prefix(256))) }
        try members.openSession(
            memberID: memberID, digest: token.digest, address: address, browser: browser, now: now,
            expiresAt: expiresAt)
        return OpenedSession(
            token: token.value, identity: try memberIdentity(memberID, email: email, name: name), expiresAt: expiresAt)
    }
}
