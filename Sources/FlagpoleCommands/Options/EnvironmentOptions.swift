import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `--tenant SLUG` (required).
struct TenantOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The tenant's slug.", valueName: "slug"))
    var tenant: String

    /// The validated slug.
    ///
    /// - throws: `ValidationError` (a usage error) when the slug breaks the rules.
    func slug() throws -> TenantSlug {
        try Self.slug(tenant)
    }

    /// Validates a tenant slug given as text.
    ///
    /// - throws: `ValidationError` when it breaks the rules.
    static func slug(_ text: String) throws -> TenantSlug {
        do {
            return try TenantSlug(validating: text)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Checked while parsing, so a bad slug prints this command's usage.
    func validate() throws {
        _ = try slug()
    }
}

/// `--tenant SLUG [--env NAME]`: one environment, `production` unless named.
struct EnvironmentOptions: ParsableArguments {
    @OptionGroup var tenant: TenantOptions

    @Option(help: ArgumentHelp("The environment.", valueName: "name"))
    var env: String = EnvironmentName.production.rawValue

    /// The validated environment path.
    ///
    /// - throws: `ValidationError` when the slug or the name breaks the rules.
    func path() throws -> EnvironmentPath {
        try Self.path(tenant: tenant.tenant, environment: env)
    }

    func validate() throws {
        _ = try path()
    }

    /// Validates a tenant slug and an environment name given as text.
    ///
    /// - throws: `ValidationError` when either breaks the rules.
    static func path(tenant: String, environment: String) throws -> EnvironmentPath {
        do {
            return EnvironmentPath(
                tenant: try TenantSlug(validating: tenant), environment: try EnvironmentName(validating: environment))
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// `--json`, for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text.")
    var json = false
}
