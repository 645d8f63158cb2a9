import FlagpoleCore

/// The addresses of a tenant's own pages (its environments' are `EnvironmentURLs`).
struct TenantURLs: Sendable {
    let base: String

    init(_ tenant: TenantSlug) {
        base = "/tenants/\(EnvironmentURLs.segment(tenant.rawValue))"
    }

    /// Keys, environments and goals. The name shadows an environment called `settings` in the
    /// dashboard (constant path components win over `:env`); its API and delivery are unaffected.
    var settings: String { base + "/settings" }
    var keys: String { settings + "/keys" }
    func revokeKey(_ prefix: String) -> String { keys + "/" + EnvironmentURLs.segment(prefix) + "/revoke" }
    var environments: String { settings + "/environments" }
    func environment(_ name: EnvironmentName) -> String { environments + "/" + name.rawValue }
    func webhooks(of name: EnvironmentName) -> String { environment(name) + "/webhooks" }
    var goals: String { settings + "/goals" }
    var members: String { settings + "/members" }
    func member(_ email: String) -> String { members + "/" + EnvironmentURLs.segment(email) }
    /// Not a valid environment name (the dot), so it can't shadow one.
    var markingStylesheet: String { base + "/marking.css" }
}
