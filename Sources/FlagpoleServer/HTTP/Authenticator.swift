import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird

/// Checks a request's `Authorization: Bearer KEY` against the store, in a fixed order that leaks
/// nothing: no key is `401`; a key of another tenant gets the very `404` an unknown tenant
/// gets; a key of the tenant with too little role is `403`.
struct Authenticator: Sendable {
    let store: FeatureStore

    /// The key's identity, or `nil` when the request has no `Authorization` header.
    ///
    /// - throws: `APIError` 401 for a malformed, unknown or revoked key.
    func identity(of request: Request) async throws -> KeyIdentity? {
        guard let header = request.headers[.authorization] else { return nil }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { throw APIError.unknownKey }
        guard let identity = try await store.identity(ofKey: String(header.dropFirst(7))) else {
            throw APIError.unknownKey
        }
        return identity
    }

    /// The key of a request that acts on `tenant` with at least `role`.
    func require(_ role: KeyRole, on tenant: TenantSlug, _ request: Request) async throws -> KeyIdentity {
        guard let identity = try await identity(of: request) else { throw APIError.unauthenticated }
        try identity.authorize(role, on: tenant)
        return identity
    }

    /// The key of a request that manages the server (creates tenants).
    func requireServerAdmin(_ request: Request) async throws -> KeyIdentity {
        guard let identity = try await identity(of: request) else { throw APIError.unauthenticated }
        guard identity.owner == .server else { throw APIError.forbidden(needs: KeyRole.serverAdmin.rawValue) }
        return identity
    }
}

extension KeyIdentity {
    /// Recorded as the actor of what the key writes: its prefix, never its secret.
    var actor: String { "key:\(prefix)" }

    /// Refuses acting on `tenant` with `role` in the order that leaks nothing: another tenant's
    /// key gets the very error of an unknown tenant, then too little role is `403`.
    func authorize(_ role: KeyRole, on tenant: TenantSlug) throws {
        guard sees(tenant) else { throw TenancyError.tenantNotFound(tenant) }
        guard permits(role, on: tenant) else { throw APIError.forbidden(needs: role.rawValue) }
    }
}
