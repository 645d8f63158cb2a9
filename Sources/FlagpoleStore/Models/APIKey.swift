import FlagpoleCore
import Foundation

/// What a key may do. Tenant roles are ordered: each can do what the ones before it can.
public enum KeyRole: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Fetches the documents of private environments, nothing else.
    case delivery
    /// Reads everything of its tenant.
    case reader
    /// Also writes features, biases, assignments, unlocks and overrides.
    case editor
    /// Also manages keys and environments.
    case admin
    /// Not bound to a tenant: creates tenants, and acts as `admin` in every one.
    case serverAdmin = "server-admin"

    /// Whether `lhs` can do less than `rhs`, in the order the cases are declared.
    public static func < (lhs: KeyRole, rhs: KeyRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Whose key it is.
public enum KeyOwner: Hashable, Sendable {
    case server
    case tenant(TenantSlug)
}

/// A key as listings show it: never the secret, only its prefix.
public struct APIKeyInfo: Hashable, Sendable {
    /// The key's first characters: enough to recognise it, useless to use it.
    public var prefix: String
    public var owner: KeyOwner
    public var role: KeyRole
    public var name: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// The one environment a delivery key is scoped to; `nil`: every environment of its tenant.
    public var environment: EnvironmentName? = nil
}

/// A key just made: the only time its secret exists outside the caller's hands.
public struct CreatedKey: Hashable, Sendable {
    public var secret: String
    public var info: APIKeyInfo
}

/// Who a presented key belongs to.
public struct KeyIdentity: Hashable, Sendable {
    public var prefix: String
    public var owner: KeyOwner
    public var role: KeyRole
    /// The one environment a delivery key is scoped to; `nil`: every environment of its tenant.
    public var environment: EnvironmentName? = nil

    /// Whether the key may reach the environment at `path` at all (its tenant's, and the one
    /// it is scoped to if it is); what it may do there is `permits(_:on:)`'s to say.
    public func reaches(_ path: EnvironmentPath) -> Bool {
        sees(path.tenant) && (environment == nil || environment == path.environment)
    }

    /// Whether this key may act on `tenant` with at least `role`. Delivery keys only fetch.
    public func permits(_ role: KeyRole, on tenant: TenantSlug) -> Bool {
        switch owner {
        case .server: true
        case .tenant(let own): own == tenant && (role == .delivery || (self.role != .delivery && self.role >= role))
        }
    }

    /// Whether this key belongs to `tenant` (or to the server), whatever its role.
    public func sees(_ tenant: TenantSlug) -> Bool {
        switch owner {
        case .server: true
        case .tenant(let own): own == tenant
        }
    }
}
