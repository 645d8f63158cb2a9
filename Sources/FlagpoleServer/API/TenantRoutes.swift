import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird

/// Tenants, environments and keys: `flagpole tenant`, `env` and `key`.
extension AdminAPI {
    func registerTenants(on api: RouterGroup<FlagpoleRequestContext>) {
        let anyReader = api.group(context: KeyContext<Needs.Reader>.self)
        let serverAdmin = api.group(context: ServerAdminContext.self)
        let tenantReader = api.group(context: TenantContext<Needs.Reader>.self)
        let tenantAdmin = api.group(context: TenantContext<Needs.Admin>.self)
        let environmentReader = api.group(context: EnvironmentContext<Needs.Reader>.self)
        let environmentAdmin = api.group(context: EnvironmentContext<Needs.Admin>.self)

        anyReader.get("tenants", use: listTenants)
        serverAdmin.post("tenants", use: createTenant)
        tenantReader.get("tenants/:tenant", use: showTenant)
        tenantReader.get("tenants/:tenant/environments", use: listEnvironments)
        tenantAdmin.post("tenants/:tenant/environments", use: createEnvironment)
        environmentReader.get(RouterPath(environmentRoute), use: showEnvironment)
        environmentAdmin.patch(RouterPath(environmentRoute), use: updateEnvironment)
        tenantAdmin.delete("tenants/:tenant/users/:user", use: forgetUser)
        tenantAdmin.get("tenants/:tenant/keys", use: listKeys)
        tenantAdmin.post("tenants/:tenant/keys", use: createKey)
        tenantAdmin.delete("tenants/:tenant/keys/:prefix", use: revokeKey)
    }

    // MARK: Handlers

    /// A server admin sees every tenant; a tenant's key sees its own.
    @Sendable func listTenants(_: Request, context: KeyContext<Needs.Reader>) async throws -> Response {
        let tenants = try await store.access.tenants().filter { context.key.sees($0.slug) }
        return .json(.array(tenants.map(\.jsonValue)))
    }

    @Sendable func createTenant(_ request: Request, context: ServerAdminContext) async throws -> Response {
        let body = try await body(request, allowed: ["slug", "name"])
        let slug = try TenantSlug(validating: try body.requiredString("slug"))
        let tenant = try await store.access.createTenant(slug, name: try body.string("name"))
        return .json(tenant.jsonValue, status: .created)
    }

    @Sendable func showTenant(_: Request, context: TenantContext<Needs.Reader>) async throws -> Response {
        let slug = context.tenant
        guard let tenant = try await store.access.tenants().first(where: { $0.slug == slug }) else {
            throw TenancyError.tenantNotFound(slug)
        }
        return .json(tenant.jsonValue)
    }

    @Sendable func listEnvironments(_: Request, context: TenantContext<Needs.Reader>) async throws -> Response {
        let slug = context.tenant
        return .json(.array(try await store.access.environments(of: slug).map(\.jsonValue)))
    }

    @Sendable func createEnvironment(_ request: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let slug = context.tenant
        let body = try await body(request, allowed: ["name"])
        let name = try EnvironmentName(validating: try body.requiredString("name"))
        let environment = try await store.access.createEnvironment(EnvironmentPath(tenant: slug, environment: name))
        return .json(environment.jsonValue, status: .created)
    }

    @Sendable func showEnvironment(_: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let path = context.path
        return .json(try await store.access.environment(path).jsonValue)
    }

    /// Delivery settings and marking: `{"private": true, "cacheControl": "public, max-age=60",
    /// "colour": "#c0392b", "requiresReason": true}`; a field left out keeps its value, and
    /// `"cacheControl": null` restores the server's default, `"colour": null` removes the colour.
    @Sendable func updateEnvironment(
        _ request: Request, context: EnvironmentContext<Needs.Admin>
    ) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["private", "cacheControl", "colour", "requiresReason"])
        let isPrivate: Bool? = body.object["private"] == nil ? nil : try body.requiredBool("private")
        let cacheControl: String?? =
            body.object["cacheControl"] == nil ? nil : .some(try body.string("cacheControl"))
        let requiresReason: Bool? =
            body.object["requiresReason"] == nil ? nil : try body.requiredBool("requiresReason")
        // Every field is read before anything is written, so a bad colour changes nothing.
        let colour: EnvironmentColour?? =
            body.object["colour"] == nil
            ? nil : .some(try body.string("colour").map { text in try Self.colour(text) })
        if isPrivate != nil || cacheControl != nil {
            try await store.access.updateDelivery(of: path) { settings in
                if let isPrivate { settings.isPrivate = isPrivate }
                if let cacheControl { settings.cacheControl = cacheControl }
            }
        }
        if colour != nil || requiresReason != nil {
            try await store.access.updateMarking(of: path) { marking in
                if let colour { marking.colour = colour }
                if let requiresReason { marking.requiresReason = requiresReason }
            }
        }
        return .json(try await store.access.environment(path).jsonValue)
    }

    /// `text` as a colour, refused with the body's pointer.
    private static func colour(_ text: String) throws -> EnvironmentColour {
        do {
            return try EnvironmentColour(validating: text)
        } catch {
            throw APIError.invalid(error.description, pointer: "/colour")
        }
    }

    /// A data-protection request: everything recorded of the user, in every environment.
    @Sendable func forgetUser(_: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let text = try context.decodedParameter("user")
        let user: UserID
        do {
            user = try UserID(validating: text)
        } catch {
            throw APIError.malformed("The user id in the path: \(error)")
        }
        return .json(try await store.assignments.forget(user, in: context.tenant, actor: context.key.actor).jsonValue)
    }

    @Sendable func listKeys(_: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        return .json(.array(try await store.access.keys(of: .tenant(context.tenant)).map(\.jsonValue)))
    }

    @Sendable func createKey(_ request: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let slug = context.tenant
        let body = try await body(request, allowed: ["role", "name", "environment", "member"])
        let roleName = try body.requiredString("role")
        guard let role = KeyRole(rawValue: roleName), role != .serverAdmin else {
            throw APIError.invalid(
                "\"role\" must be admin, editor, reader or delivery, not \"\(roleName)\".", pointer: "/role")
        }
        // A delivery key may be scoped to one environment of the tenant (OFREP at the host's root needs one).
        let environment = try body.string("environment").map { try EnvironmentName(validating: $0) }
        // A key is a member's (`member`: their email) or a service's, known by its name.
        let name = try body.string("name") ?? ""
        let created = try await store.access.createKey(
            for: .tenant(slug), role: role,
            name: name.isEmpty ? "\(role.rawValue) key made by \(context.key.actor)" : name,
            environment: environment, member: try body.string("member"))
        var object = created.info.jsonObject
        object.append("key", .string(created.secret))
        return .json(.object(object), status: .created)
    }

    @Sendable func revokeKey(_: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let key = try await store.access.revokeKey(try context.decodedParameter("prefix"), of: .tenant(context.tenant))
        return .json(key.jsonValue)
    }
}
