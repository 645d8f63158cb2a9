import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird

/// Tenants, environments and keys: `flagpole tenant`, `env` and `key`.
extension AdminAPI {
    func registerTenants(on api: RouterGroup<FlagpoleRequestContext>) {
        // A server admin sees every tenant; a tenant's key sees its own.
        api.get("tenants") { request, _ -> Response in
            guard let key = try await auth.identity(of: request) else { throw APIError.unauthenticated }
            guard key.role != .delivery else { throw APIError.forbidden(needs: KeyRole.reader.rawValue) }
            let tenants = try await store.tenants().filter { key.sees($0.slug) }
            return .json(.array(tenants.map(\.jsonValue)))
        }
        api.post("tenants") { request, _ -> Response in
            _ = try await auth.requireServerAdmin(request)
            let body = try await body(request, allowed: ["slug", "name"])
            let slug = try TenantSlug(validating: try body.requiredString("slug"))
            let tenant = try await store.createTenant(slug, name: try body.string("name"))
            return .json(tenant.jsonValue, status: .created)
        }
        api.get("tenants/:tenant") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.reader, on: slug, request)
            guard let tenant = try await store.tenants().first(where: { $0.slug == slug }) else {
                throw TenancyError.tenantNotFound(slug)
            }
            return .json(tenant.jsonValue)
        }

        api.get("tenants/:tenant/environments") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.reader, on: slug, request)
            return .json(.array(try await store.environments(of: slug).map(\.jsonValue)))
        }
        api.post("tenants/:tenant/environments") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.admin, on: slug, request)
            let body = try await body(request, allowed: ["name"])
            let name = try EnvironmentName(validating: try body.requiredString("name"))
            let environment = try await store.createEnvironment(EnvironmentPath(tenant: slug, environment: name))
            return .json(environment.jsonValue, status: .created)
        }
        api.get(RouterPath(environmentRoute)) { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.reader, on: path.tenant, request)
            return .json(try await store.environment(path).jsonValue)
        }
        // Delivery settings: `{"private": true, "cacheControl": "public, max-age=60"}`; a field left
        // out keeps its value, and `"cacheControl": null` restores the server's default.
        api.patch(RouterPath(environmentRoute)) { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.admin, on: path.tenant, request)
            let body = try await body(request, allowed: ["private", "cacheControl"])
            let isPrivate: Bool? = body.object["private"] == nil ? nil : try body.requiredBool("private")
            let cacheControl: String?? =
                body.object["cacheControl"] == nil ? nil : .some(try body.string("cacheControl"))
            try await store.updateDelivery(of: path) { settings in
                if let isPrivate { settings.isPrivate = isPrivate }
                if let cacheControl { settings.cacheControl = cacheControl }
            }
            await refreshDelivery(of: path)
            return .json(try await store.environment(path).jsonValue)
        }

        api.get("tenants/:tenant/keys") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.admin, on: slug, request)
            return .json(.array(try await store.keys(of: .tenant(slug)).map(\.jsonValue)))
        }
        api.post("tenants/:tenant/keys") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.admin, on: slug, request)
            let body = try await body(request, allowed: ["role", "name"])
            let roleName = try body.requiredString("role")
            guard let role = KeyRole(rawValue: roleName), role != .serverAdmin else {
                throw APIError.invalid(
                    "\"role\" must be admin, editor, reader or delivery, not \"\(roleName)\".", pointer: "/role")
            }
            let created = try await store.createKey(for: .tenant(slug), role: role, name: try body.string("name") ?? "")
            var object = created.info.jsonObject
            object.append("key", .string(created.secret))
            return .json(.object(object), status: .created)
        }
        api.delete("tenants/:tenant/keys/:prefix") { request, context -> Response in
            let slug = try context.tenant()
            _ = try await auth.require(.admin, on: slug, request)
            let key = try await store.revokeKey(try context.decodedParameter("prefix"), of: .tenant(slug))
            return .json(key.jsonValue)
        }
    }
}
