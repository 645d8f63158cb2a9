import FlagpoleCore

/// Names one environment of one tenant: one features.json.
public struct EnvironmentPath: Hashable, Sendable, CustomStringConvertible {
    public var tenant: TenantSlug
    public var environment: EnvironmentName

    /// The environment named `environment` of `tenant`.
    public init(tenant: TenantSlug, environment: EnvironmentName) {
        self.tenant = tenant
        self.environment = environment
    }

    /// `tenant/environment`, as in the CDN tree and delivery URLs.
    public var description: String { "\(tenant)/\(environment)" }
}
