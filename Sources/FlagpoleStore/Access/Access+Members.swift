import FlagpoleCore
import Foundation

/// Members: the people of a tenant, their roles, and the one-time links that set their passwords.
extension Access {
    /// How long an invitation or a reset link works.
    public static let linkLifetime: TimeInterval = 72 * 60 * 60

    /// Adds `email` to `tenant` with `role`. Someone new is made with `name` and gets an
    /// invitation link; someone who already has a password (from another tenant) is only added.
    ///
    /// - returns: the invitation, the only time its token is seen; `nil` when none is needed.
    /// - throws: `TenancyError.tenantNotFound`, `MemberError.invalidEmail`, `.invalidName`,
    ///   `.invalidRole`, `.alreadyMember`.
    public func addMember(
        _ email: String, name: String, role: KeyRole, to tenant: TenantSlug, by actor: String, now: Date = Date()
    ) async throws -> MemberLink? {
        let email = try MemberEmail.validate(email)
        let name = try MemberEmail.validateName(name)
        let role = try KeyRole(member: role.rawValue)
        let token = MemberLinkToken.generate()
        return try await write { db -> MemberLink? in
            let scope = try db.tenants.scope(of: tenant)
            let existing = try db.members.member(email: email)
            let memberID = try existing?.id ?? db.members.insertMember(email: email, name: name, now: now)
            if try db.members.role(memberID: memberID, tenantID: scope.id) != nil {
                throw MemberError.alreadyMember(email: email, tenant: tenant)
            }
            try db.members.insertMembership(memberID: memberID, tenantID: scope.id, role: role, now: now)
            if existing?.passwordHash != nil { return nil }
            return try db.makeLink(.invitation, token: token, for: (memberID, email), by: actor, now: now)
        }
    }

    /// The members of `tenant`, in the order they joined.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    public func members(of tenant: TenantSlug) async throws -> [Member] {
        try await read { db in
            let scope = try db.tenants.scope(of: tenant)
            let invitations = try db.members.pendingInvitations(tenantID: scope.id)
            return try db.members.members(tenantID: scope.id).map { member in
                var member = member
                member.invitedUntil = member.hasPassword ? nil : invitations[member.email]
                return member
            }
        }
    }

    /// Gives `email` the role `role` in `tenant`. It takes effect at once: their sessions and
    /// keys are checked against it on every request.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `MemberError.memberNotFound`, `.invalidRole`.
    @discardableResult
    public func setRole(_ role: KeyRole, of email: String, in tenant: TenantSlug) async throws -> Member {
        let role = try KeyRole(member: role.rawValue)
        return try await write { db in
            let scope = try db.tenants.scope(of: tenant)
            let member = try db.membership(of: email, in: scope)
            _ = try db.members.updateRole(memberID: member.id, tenantID: scope.id, role: role)
            guard let updated = try db.members.members(tenantID: scope.id).first(where: { $0.email == member.email })
            else { throw MemberError.memberNotFound(email: member.email, tenant: tenant) }
            return updated
        }
    }

    /// Removes `email` from `tenant`: their keys there are revoked and every session of theirs
    /// ends, at once.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `MemberError.memberNotFound`.
    public func removeMember(_ email: String, from tenant: TenantSlug, now: Date = Date()) async throws {
        try await write { db in
            let scope = try db.tenants.scope(of: tenant)
            let member = try db.membership(of: email, in: scope)
            _ = try db.members.deleteMembership(memberID: member.id, tenantID: scope.id)
            try db.keys.revoke(memberID: member.id, tenantID: scope.id, at: now)
            try db.members.closeSessions(memberID: member.id)
        }
    }

    /// A new invitation for a member of `tenant` who has not set a password yet; their
    /// earlier one stops working.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `MemberError.memberNotFound`, `.alreadyAccepted`.
    public func invitation(
        for email: String, in tenant: TenantSlug, by actor: String, now: Date = Date()
    )
        async throws -> MemberLink
    {
        let token = MemberLinkToken.generate()
        return try await write { db in
            let scope = try db.tenants.scope(of: tenant)
            let member = try db.membership(of: email, in: scope)
            guard !member.hasPassword else { throw MemberError.alreadyAccepted(email: member.email) }
            return try db.makeLink(.invitation, token: token, for: (member.id, member.email), by: actor, now: now)
        }
    }

    /// A link that sets a new password for `email`, for a server operator to hand over: a
    /// member is one person across tenants, so no tenant's admin may take over their account.
    ///
    /// - throws: `MemberError.invalidEmail`, `.unknownMember`.
    public func resetLink(for email: String, by actor: String, now: Date = Date()) async throws -> MemberLink {
        let email = try MemberEmail.validate(email)
        let token = MemberLinkToken.generate()
        return try await write { db in
            guard let member = try db.members.member(email: email) else {
                throw MemberError.unknownMember(email: email)
            }
            return try db.makeLink(.reset, token: token, for: (member.id, email), by: actor, now: now)
        }
    }

    /// Whose the link is, before its password is set.
    ///
    /// - throws: `MemberError.linkNotFound`, `.linkUsed`, `.linkExpired`.
    public func memberLink(_ token: String, now: Date = Date()) async throws -> MemberLinkInfo {
        try await read { db in try db.usableLink(token, now: now).info }
    }

    /// Sets the password a link was made for and signs its member in. The link then stops
    /// working; a reset also ends the member's other sessions.
    ///
    /// - throws: `MemberError.linkNotFound`, `.linkUsed`, `.linkExpired`, `.passwordTooShort`,
    ///   `.passwordTooLong` (each before any hashing).
    public func useLink(
        _ token: String, password: String, address: String, browser: String? = nil, cost: PasswordCost = .owasp,
        now: Date = Date()
    ) async throws -> OpenedSession {
        try PasswordHash.check(password)
        _ = try await memberLink(token, now: now)
        let hash = try await PasswordHash.make(password, cost: cost)
        let sessionToken = SessionToken.generate()
        return try await write { db in
            // Checked again in the transaction: of two uses at once, one wins.
            let (id, memberID, info) = try db.usableLink(token, now: now)
            try db.members.markLinkUsed(id: id, now: now)
            try db.members.setPassword(memberID: memberID, hash: hash)
            try db.members.closeSessions(memberID: memberID)
            return try db.openMemberSession(
                memberID, email: info.email, name: info.name, token: sessionToken, address: address, browser: browser,
                now: now)
        }
    }

    /// Changes the password of a signed-in member, who gives the current one; their other
    /// sessions end.
    ///
    /// - throws: `MemberError.wrongPassword`, `.passwordTooShort`, `.passwordTooLong`.
    public func changePassword(
        of email: String, from current: String, to new: String, keepingSession session: String,
        cost: PasswordCost = .owasp
    ) async throws {
        try PasswordHash.checkSize(current)
        try PasswordHash.check(new)
        guard let member = try await read({ db in try db.members.member(email: email) }),
            try await PasswordHash.verify(current, against: member.passwordHash)
        else { throw MemberError.wrongPassword }
        let hash = try await PasswordHash.make(new, cost: cost)
        try await write { db in
            try db.members.setPassword(memberID: member.id, hash: hash)
            let kept = try SessionToken(session).flatMap { try db.members.sessionID(digest: $0.digest) }
            try db.members.closeSessions(memberID: member.id, keeping: kept)
        }
    }
}

extension Transaction {
    /// The member `email` of the tenant `scope` (the address as typed): their row id, address as
    /// stored, role there, and whether they have set a password.
    ///
    /// - throws: `MemberError.memberNotFound`.
    func membership(
        of email: String, in scope: TenantScope
    ) throws -> (
        id: Int64, email: String, role: KeyRole, hasPassword: Bool
    ) {
        let email = MemberEmail.normalized(email)
        guard let member = try members.member(email: email),
            let role = try members.role(memberID: member.id, tenantID: scope.id)
        else { throw MemberError.memberNotFound(email: email, tenant: scope.slug) }
        return (member.id, email, role, member.passwordHash != nil)
    }

    func makeLink(
        _ purpose: MemberLinkPurpose, token: MemberLinkToken, for member: (id: Int64, email: String), by actor: String,
        now: Date
    ) throws -> MemberLink {
        let expiresAt = now.addingTimeInterval(Access.linkLifetime)
        try members.insertLink(
            memberID: member.id, purpose: purpose, digest: token.digest, createdBy: actor, now: now,
            expiresAt: expiresAt)
        return MemberLink(token: token.value, email: member.email, purpose: purpose, expiresAt: expiresAt)
    }

    /// The link of `token` if it can still be used: its row id, member and what it shows.
    ///
    /// - throws: `MemberError.linkNotFound`, `.linkUsed`, `.linkExpired`.
    func usableLink(_ token: String, now: Date) throws -> (id: Int64, memberID: Int64, info: MemberLinkInfo) {
        guard let token = MemberLinkToken(token), let link = try members.link(digest: token.digest),
            let purpose = MemberLinkPurpose(rawValue: link.purpose)
        else { throw MemberError.linkNotFound }
        if let used = link.usedAt { throw MemberError.linkUsed(at: used) }
        if link.expiresAt <= now { throw MemberError.linkExpired(at: link.expiresAt) }
        return (
            link.id, link.memberID,
            MemberLinkInfo(email: link.email, name: link.name, purpose: purpose, expiresAt: link.expiresAt)
        )
    }
}
