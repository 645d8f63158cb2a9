import Crypto
import FlagpoleCore
import Foundation

extension FeatureStore {
    /// Makes a key for `owner` with `role` and returns its secret, which is never stored: the
    /// store keeps its SHA-256 and its first characters (`APIKeyInfo.prefix`).
    ///
    /// - parameter environment: scopes a delivery key to one environment of its tenant.
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`,
    ///   `KeyError.invalidKeyRole` (a server key must be `serverAdmin` and a tenant key must not),
    ///   `KeyError.scopedKeyNotDelivery`.
    public func createKey(
        for owner: KeyOwner, role: KeyRole, name: String = "", environment: EnvironmentName? = nil
    ) async throws -> CreatedKey {
        guard (owner == .server) == (role == .serverAdmin) else { throw KeyError.invalidKeyRole(role, owner: owner) }
        if environment != nil && role != .delivery { throw KeyError.scopedKeyNotDelivery(role) }
        return try await write { db in
            var tenantID: Int64?
            var environmentID: Int64?
            if case .tenant(let slug) = owner {
                tenantID = try db.tenants.scope(of: slug).id
                environmentID = try environment.map {
                    try db.environments.scope(of: EnvironmentPath(tenant: slug, environment: $0)).id
                }
            }
            let now = Date()
            // A prefix is 32 random bits: a clash is rare, and the UNIQUE index makes it harmless.
            while true {
                let secret = APIKeySecret.generate()
                if try db.keys.hasKey(prefix: secret.prefix) { continue }
                try db.keys.insert(
                    tenantID: tenantID, environmentID: environmentID, role: role, prefix: secret.prefix,
                    digest: secret.digest, name: name, createdAt: now)
                return CreatedKey(
                    secret: secret.value,
                    info: APIKeyInfo(
                        prefix: secret.prefix, owner: owner, role: role, name: name, createdAt: now, revokedAt: nil,
                        environment: environment))
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

    /// Who `secret` belongs to, or `nil` for an unknown, malformed or revoked key. The digests
    /// are compared in constant time, so response timing says nothing about a guessed key.
    public func identity(ofKey secret: String) async throws -> KeyIdentity? {
        guard let presented = APIKeySecret(secret) else { return nil }
        return try await read { db in try db.identity(of: presented)?.identity }
    }
}

extension KeyIdentity {
    /// The identity of a key row: its prefix, its `role` column and its tenant's slug (`nil`
    /// for a server key).
    init?(prefix: String, role: String, tenant: String?) {
        guard let role = KeyRole(rawValue: role) else { return nil }
        self.init(prefix: prefix, owner: tenant.map { .tenant(TenantSlug(rawValue: $0)) } ?? .server, role: role)
    }
}

extension SQLConnection {
    /// The one check of a presented key, for the API and the dashboard's sign-in alike: the row
    /// of a key that is not revoked, its digest compared in constant time.
    func identity(of presented: APIKeySecret) throws -> (keyID: Int64, identity: KeyIdentity)? {
        guard let key = try keys.activeKey(prefix: presented.prefix),
            ConstantTime.isEqual(key.digest, presented.digest),
            var identity = KeyIdentity(prefix: presented.prefix, role: key.role, tenant: key.tenant)
        else { return nil }
        identity.environment = key.environment.map(EnvironmentName.init(rawValue:))
        return (key.id, identity)
    }

    /// The keys of `owner`, revoked ones included, oldest first.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    func keys(of owner: KeyOwner) throws -> [APIKeyInfo] {
        switch owner {
        case .server: try keys.keys(of: owner, tenantID: nil)
        case .tenant(let slug): try keys.keys(of: owner, tenantID: tenants.scope(of: slug).id)
        }
    }
}

extension FeatureStore {
    /// The database's secret named `name` (32 random bytes, made on first use), for what the
    /// server signs; the same for every process and every restart on this database.
    public func secret(named name: String) async throws -> [UInt8] {
        try await write { db in
            try db.keys.secret(named: name, makingIt: (0..<32).map { _ in UInt8.random(in: 0...255) }, now: Date())
        }
    }
}
