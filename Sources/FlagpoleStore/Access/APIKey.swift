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

/// Whose key it is, or who signed in.
public enum KeyOwner: Hashable, Sendable {
    case server
    case tenant(TenantSlug)
    /// A member signed in to the dashboard with their password: what they may do in each
    /// tenant. Keys are never made for this owner; a member's key is a `tenant` key.
    case member(MemberGrants)
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
    /// The email of the member whose key it is; `nil`: a named service's.
    public var member: String? = nil
    /// When it was last presented, to the hour; `nil`: never.
    public var lastUsedAt: Date? = nil
}

/// A key just made: the only time its secret exists outside the caller's hands.
public struct CreatedKey: Hashable, Sendable {
    public var secret: String
    public var info: APIKeyInfo
}

/// Who a presented key belongs to, or who signed in to the dashboard.
public struct KeyIdentity: Hashable, Sendable {
    /// The key's prefix; empty for a member signed in with their password.
    public var prefix: String
    public var owner: KeyOwner
    /// The key's role, capped by its member's; a signed-in member's highest role.
    public var role: KeyRole
    /// The one environment a delivery key is scoped to; `nil`: every environment of its tenant.
    public var environment: EnvironmentName?
    /// How revisions name what it writes: `Ada Lovelace <ada@example.com>` for a member or their
    /// key, `service:NAME` for a service's key; never a secret.
    public var actor: String

    /// - parameter actor: by default the key's prefix, `key:fp_…`, as a key with no name had.
    public init(
        prefix: String, owner: KeyOwner, role: KeyRole, environment: EnvironmentName? = nil, actor: String? = nil
    ) {
        self.prefix = prefix
        self.owner = owner
        self.role = role
        self.environment = environment
        self.actor = actor ?? "key:\(prefix)"
    }

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
        case .member(let grants): grants.roles[tenant].map { $0 >= role } ?? false
        }
    }

    /// Whether this key belongs to `tenant` (or to the server), whatever its role.
    public func sees(_ tenant: TenantSlug) -> Bool {
        switch owner {
        case .server: true
        case .tenant(let own): own == tenant
        case .member(let grants): grants.roles[tenant] != nil
        }
    }
}
