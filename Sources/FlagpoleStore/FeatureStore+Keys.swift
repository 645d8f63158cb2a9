import Crypto
import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Makes a key for `owner` with `role` and returns its secret, which is never stored: the
    /// store keeps its SHA-256 and its first characters (`APIKeyInfo.prefix`).
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.invalidKeyRole` (a server key must
    ///   be `serverAdmin` and a tenant key must not).
    public func createKey(for owner: KeyOwner, role: KeyRole, name: String = "") async throws -> CreatedKey {
        guard (owner == .server) == (role == .serverAdmin) else { throw StoreError.invalidKeyRole(role, owner: owner) }
        return try await write { db in
            let tenantID: Int64? =
                switch owner {
                case .server: nil
                case .tenant(let slug): try db.scope(of: slug).id
                }
            let now = Date()
            // A prefix is 32 random bits: a clash is rare, and the UNIQUE index makes it harmless.
            while true {
                let secret = APIKeySecret.generate()
                let exists =
                    try Bool.fetchOne(db, sql: "SELECT 1 FROM api_keys WHERE prefix = ?", arguments: [secret.prefix])
                    ?? false
                if exists { continue }
                try db.execute(
                    sql:
                        "INSERT INTO api_keys (tenant_id, role, prefix, sha256, name, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        tenantID, role.rawValue, secret.prefix, Data(secret.digest), name, now.unixMilliseconds,
                    ])
                return CreatedKey(
                    secret: secret.value,
                    info: APIKeyInfo(
                        prefix: secret.prefix, owner: owner, role: role, name: name, createdAt: now, revokedAt: nil))
            }
        }
    }

    /// The keys of `owner`, revoked ones included, oldest first.
    ///
    /// - throws: `StoreError.tenantNotFound`.
    public func keys(of owner: KeyOwner) async throws -> [APIKeyInfo] {
        try await read { db in try db.keys(of: owner) }
    }

    /// Revokes the key of `owner` whose prefix is `prefix`; it stops working at once. Revoking
    /// a revoked key changes nothing.
    ///
    /// - throws: `StoreError.keyNotFound` (also for another owner's key).
    @discardableResult
    public func revokeKey(_ prefix: String, of owner: KeyOwner) async throws -> APIKeyInfo {
        try await write { db in
            guard var key = try db.keys(of: owner).first(where: { $0.prefix == prefix }) else {
                throw StoreError.keyNotFound(prefix: prefix)
            }
            if key.revokedAt != nil { return key }
            let now = Date()
            try db.execute(
                sql: "UPDATE api_keys SET revoked_at = ? WHERE prefix = ?", arguments: [now.unixMilliseconds, prefix])
            key.revokedAt = now
            return key
        }
    }

    /// Who `secret` belongs to, or `nil` for an unknown, malformed or revoked key. The digests
    /// are compared in constant time, so response timing says nothing about a guessed key.
    public func identity(ofKey secret: String) async throws -> KeyIdentity? {
        guard let presented = APIKeySecret(secret) else { return nil }
        let found = try await read { db -> (role: String, digest: Data, tenant: String?)? in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT k.role, k.sha256, t.slug FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id
                        WHERE k.prefix = ? AND k.revoked_at IS NULL
                        """), arguments: [presented.prefix]
            ).map { ($0[0], $0[1], $0[2]) }
        }
        guard let found, ConstantTime.isEqual(found.digest, presented.digest) else { return nil }
        return KeyIdentity(prefix: presented.prefix, role: found.role, tenant: found.tenant)
    }
}

/// The secret of an API key: `fp_` and 48 hex digits (192 random bits).
struct APIKeySecret {
    static let marker = "fp_"
    static let randomBytes = 24
    /// The marker and 8 digits: 32 bits, shown in listings.
    static let prefixLength = 11

    let value: String

    var prefix: String { String(value.prefix(Self.prefixLength)) }
    var digest: [UInt8] { Array(SHA256.hash(data: Array(value.utf8))) }

    /// A presented key, if it has the shape of one.
    init?(_ value: String) {
        let digits = value.utf8.dropFirst(Self.marker.utf8.count)
        guard value.hasPrefix(Self.marker), digits.count == Self.randomBytes * 2,
            digits.allSatisfy(\.isLowercaseHexDigit)
        else { return nil }
        self.value = value
    }

    static func generate() -> APIKeySecret {
        APIKeySecret(marker + randomHex(bytes: randomBytes))!
    }
}

/// `bytes` bytes from the system's secure generator, as lowercase hex digits.
func randomHex(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexEncoded
}

extension KeyIdentity {
    /// The identity of a key row: its prefix, its `role` column and its tenant's slug (`nil`
    /// for a server key).
    init?(prefix: String, role: String, tenant: String?) {
        guard let role = KeyRole(rawValue: role) else { return nil }
        self.init(prefix: prefix, owner: tenant.map { .tenant(TenantSlug(rawValue: $0)) } ?? .server, role: role)
    }
}

extension Database {
    /// The keys of `owner`, revoked ones included, oldest first.
    func keys(of owner: KeyOwner) throws -> [APIKeyInfo] {
        let rows: [Row] =
            switch owner {
            case .server:
                try Row.fetchAll(self, sql: "SELECT * FROM api_keys WHERE tenant_id IS NULL ORDER BY id")
            case .tenant(let slug):
                try Row.fetchAll(
                    self, sql: "SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY id", arguments: [scope(of: slug).id]
                )
            }
        return rows.map { row in
            APIKeyInfo(
                prefix: row["prefix"], owner: owner, role: KeyRole(rawValue: row["role"]) ?? .reader, name: row["name"],
                createdAt: Date(unixMilliseconds: row["created_at"]),
                revokedAt: (row["revoked_at"] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }
}
