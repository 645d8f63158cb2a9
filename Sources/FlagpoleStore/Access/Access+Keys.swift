import Crypto
import FlagpoleCore
import Foundation

extension Access {
    /// Makes a key for `owner` with `role` and returns its secret, which is never stored: the
    /// store keeps its SHA-256 and its first characters (`APIKeyInfo.prefix`).
    ///
    /// - parameter environment: scopes a delivery key to one environment of its tenant.
    /// - parameter member: the email of the member whose key it is; `nil`: a service's, known
    ///   by `name`. A member's key can do no more than the member, and dies with their membership.
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`,
    ///   `KeyError.invalidKeyRole` (a server key must be `serverAdmin` and a tenant key must not),
    ///   `KeyError.scopedKeyNotDelivery`, `MemberError.memberNotFound`, `.keyAboveMember`,
    ///   `.memberKeyNeedsTenant`.
    public func createKey(
        for owner: KeyOwner, role: KeyRole, name: String = "", environment: EnvironmentName? = nil,
        member: String? = nil
    ) async throws -> CreatedKey {
        if case .member = owner { throw MemberError.memberKeyNeedsTenant }
        guard (owner == .server) == (role == .serverAdmin) else { throw KeyError.invalidKeyRole(role, owner: owner) }
        if environment != nil && role != .delivery { throw KeyError.scopedKeyNotDelivery(role) }
        if member != nil && owner == .server { throw MemberError.memberKeyNeedsTenant }
        let email = try member.map(MemberEmail.validate)
        return try await write { db in
            var tenantID: Int64?
            var environmentID: Int64?
            var memberID: Int64?
            if case .tenant(let slug) = owner {
                let tenant = try db.tenants.scope(of: slug)
                tenantID = tenant.id
                environmentID = try environment.map {
                    try db.environments.scope(of: EnvironmentPath(tenant: slug, environment: $0)).id
                }
                if let email {
                    let member = try db.membership(of: email, in: tenant)
                    if role != .delivery && role > member.role {
                        throw MemberError.keyAboveMember(role, member: member.role)
                    }
                    memberID = member.id
                }
            }
            let now = Date()
            // A prefix is 32 random bits: a clash is rare, and the UNIQUE index makes it harmless.
            while true {
                let secret = APIKeySecret.generate()
                if try db.keys.hasKey(prefix: secret.prefix) { continue }
                try db.keys.insert(
                    tenantID: tenantID, environmentID: environmentID, memberID: memberID, role: role,
                    prefix: secret.prefix, digest: secret.digest, name: name, createdAt: now)
                return CreatedKey(
                    secret: secret.value,
                    info: APIKeyInfo(
                        prefix: secret.prefix, owner: owner, role: role, name: name, createdAt: now, revokedAt: nil,
                        environment: environment, member: email))
            }
        }
    }

    /// The keys of `owner`, revoked ones included, oldest first.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    public func keys(of owner: KeyOwner) async throws -> [APIKeyInfo] {
        try await read { db in try db.keys(of: owner) }
    }

    /// Revokes the key of `owner` whose prefix is `prefix`; it stops working at once. Revoking
    /// a revoked key changes nothing.
    ///
    /// - throws: `KeyError.keyNotFound` (also for another owner's key).
    @discardableResult
    public func revokeKey(_ prefix: String, of owner: KeyOwner) async throws -> APIKeyInfo {
        try await write { db in
            guard var key = try db.keys(of: owner).first(where: { $0.prefix == prefix }) else {
                throw KeyError.keyNotFound(prefix: prefix)
            }
            if key.revokedAt != nil { return key }
            let now = Date()
            try db.keys.revoke(prefix: prefix, at: now)
            key.revokedAt = now
            return key
        }
    }

    /// Who `secret` belongs to, or `nil` for an unknown, malformed or revoked key, or the key of
    /// someone no longer a member. The digests are compared in constant time, so response
    /// timing says nothing about a guessed key.
    public func identity(ofKey secret: String, now: Date = Date()) async throws -> KeyIdentity? {
        guard let presented = APIKeySecret(secret) else { return nil }
        guard let (key, identity) = try await read({ db in try db.identity(of: presented) }) else { return nil }
        try await noteUse(of: key, now: now)
        return identity
    }

    /// Records that `key` was used, at most once an hour: listings show its last use, and the
    /// API's hot paths stay reads.
    func noteUse(of key: ActiveKey, now: Date) async throws {
        guard key.isLastUseStale(at: now) else { return }
        try await write { db in try db.keys.markUsed(id: key.id, at: now) }
    }
}

extension KeyIdentity {
    /// The identity of a live key row, `nil` when its role is unknown or its member has left
    /// the key's tenant. A member's key does no more than the member.
    init?(_ key: ActiveKey) {
        guard var role = KeyRole(rawValue: key.role) else { return nil }
        var actor = key.name.isEmpty ? nil : "service:\(key.name)"
        if key.memberID != nil {
            guard let memberRole = key.memberRole.flatMap(KeyRole.init(rawValue:)), let email = key.memberEmail else {
                return nil
            }
            if role != .delivery { role = min(role, memberRole) }
            actor = Member.actor(name: key.memberName ?? email, email: email)
        }
        self.init(
            prefix: key.prefix, owner: key.tenant.map { .tenant(TenantSlug(rawValue: $0)) } ?? .server, role: role,
            environment: key.environment.map(EnvironmentName.init(rawValue:)), actor: actor)
    }
}

extension Transaction {
    /// The one check of a presented key, for the API and the dashboard's sign-in alike: the row
    /// of a key that is not revoked, its digest compared in constant time.
    func identity(of presented: APIKeySecret) throws -> (key: ActiveKey, identity: KeyIdentity)? {
        guard let key = try keys.activeKey(prefix: presented.prefix),
            ConstantTime.isEqual(key.digest, presented.digest), let identity = KeyIdentity(key)
        else { return nil }
        return (key, identity)
    }

    /// The keys of `owner`, revoked ones included, oldest first.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    func keys(of owner: KeyOwner) throws -> [APIKeyInfo] {
        switch owner {
        case .server: try keys.keys(of: owner, tenantID: nil)
        case .tenant(let slug): try keys.keys(of: owner, tenantID: tenants.scope(of: slug).id)
        case .member: throw MemberError.memberKeyNeedsTenant
        }
    }
}

extension Access {
    /// The database's secret named `name` (32 random bytes, made on first use), for what the
    /// server signs; the same for every process and every restart on this database.
    public func secret(named name: String) async throws -> [UInt8] {
        try await write { db in
            try db.keys.secret(named: name, makingIt: (0..<32).map { _ in UInt8.random(in: 0...255) }, now: Date())
        }
    }
}
