import FlagpoleCore
import Foundation

/// A customer or an app family, owning environments.
public struct Tenant: Hashable, Sendable {
    public var slug: TenantSlug
    public var name: String
    public var createdAt: Date
    /// The tenant's environments, by name.
    public var environments: [EnvironmentName]
}

/// One environment of a tenant, with its current revision.
public struct Environment: Hashable, Sendable {
    public var path: EnvironmentPath
    public var createdAt: Date
    /// The current revision; `nil` until the first import.
    public var revision: Int?
    /// How many features the current document holds.
    public var featureCount: Int
    public var delivery: DeliverySettings
    /// Its colour and whether changes need a reason.
    public var marking: EnvironmentMarking
}

/// How the server hands out an environment's shared document.
public struct DeliverySettings: Hashable, Sendable {
    /// Served only with a key of the tenant (a delivery key, typically).
    public var isPrivate: Bool
    /// `Cache-Control` of the shared document; `nil` for the server's default.
    public var cacheControl: String?

    /// Settings; the defaults are a public document with the server's `Cache-Control`.
    public init(isPrivate: Bool = false, cacheControl: String? = nil) {
        self.isPrivate = isPrivate
        self.cacheControl = cacheControl
    }
}
