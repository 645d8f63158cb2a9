import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird

// Who may call a route is declared once, by the context its group is made with: a handler of
// `EnvironmentContext<Needs.Editor>` runs only for a key that may edit the environment of its
// path, and receives the checked path and key rather than parsing either. The contexts check
// in the order that leaks nothing:
//
// 1. the path: a name that could not be a slug names no tenant or environment, `404`;
// 2. the key: none is `401`, a malformed, unknown or revoked one `401`;
// 3. the tenant: another tenant's key gets the very `404` of an unknown tenant;
// 4. the role: too little is `403`.
//
// Whether the tenant or environment exists is the store's to say when the handler acts, after
// the body is read, as before.
//
// The key lookup is async and a context's `init(context:)` is not, so `KeyMiddleware` looks
// the key up for every route of its group and keeps the outcome, errors included, in the
// parent context; the child context then runs the checks above in order. A context made
// outside `KeyMiddleware` finds no outcome and refuses the request (`500`): it fails closed.

/// A role a route needs, as a type, so a context generic over it carries a key checked for it.
protocol RequiredRole: Sendable {
    static var role: KeyRole { get }
}

/// The roles tenant routes need: `TenantContext<Needs.Admin>`, `EnvironmentContext<Needs.Reader>`.
enum Needs {
    enum Reader: RequiredRole { static let role = KeyRole.reader }
    enum Editor: RequiredRole { static let role = KeyRole.editor }
    enum Admin: RequiredRole { static let role = KeyRole.admin }
}

// MARK: The key

/// The outcome of looking up a request's `Authorization: Bearer KEY`: the key's identity,
/// `nil` when the request has none, or the error to answer (a malformed, unknown or revoked
/// key is `401`).
struct PresentedKey: Sendable {
    let lookup: Result<KeyIdentity?, any Error>

    /// Looks up the key of `request` in `store`.
    static func of(_ request: Request, in store: FeatureStore) async -> PresentedKey {
        do {
            guard let header = request.headers[.authorization] else { return PresentedKey(lookup: .success(nil)) }
            guard let key = DeliveryCredential.bearerKey(header) else { throw APIError.unknownKey }
            guard let identity = try await store.access.identity(ofKey: key) else {
                throw APIError.unknownKey
            }
            return PresentedKey(lookup: .success(identity))
        } catch {
            return PresentedKey(lookup: .failure(error))
        }
    }

    /// The key's identity.
    ///
    /// - throws: `APIError` 401 without a key or for a malformed, unknown or revoked one; the
    ///   store's error if the lookup failed.
    func identity() throws -> KeyIdentity {
        guard let identity = try lookup.get() else { throw APIError.unauthenticated }
        return identity
    }
}

/// Looks up the API key of every request of its group, once, for the route's context to check.
struct KeyMiddleware: RouterMiddleware {
    typealias Context = FlagpoleRequestContext
    let store: FeatureStore

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.presentedKey = await PresentedKey.of(request, in: store)
        return try await next(request, context)
    }
}

extension FlagpoleRequestContext {
    /// The request's key, as `KeyMiddleware` found it.
    func requireKey() throws -> KeyIdentity {
        guard let presentedKey else { throw ContextError.notAuthenticated(endpointPath ?? "?") }
        return try presentedKey.identity()
    }
}

/// A route's context made where no middleware looked up its credentials: a fault of the
/// server's routing, answered `500` rather than letting the request through.
enum ContextError: Error, CustomStringConvertible {
    case notAuthenticated(String)

    var description: String {
        switch self {
        case .notAuthenticated(let route): "The route \(route) has no authenticating middleware in front of it."
        }
    }
}

// MARK: API contexts

/// A request of the server admin's key: creating tenants.
struct ServerAdminContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let key: KeyIdentity

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        let key = try context.requireKey()
        guard key.owner == .server else { throw APIError.forbidden(needs: KeyRole.serverAdmin.rawValue) }
        self.key = key
    }
}

/// A request of any key with at least `Role` in its own tenant, or of the server admin's:
/// routes across tenants, which show each key what it sees.
struct KeyContext<Role: RequiredRole>: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let key: KeyIdentity

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        let key = try context.requireKey()
        if case .tenant(let own) = key.owner, !key.permits(Role.role, on: own) {
            throw APIError.forbidden(needs: Role.role.rawValue)
        }
        self.key = key
    }
}

/// A request on the tenant of the route's `:tenant` by a key with at least `Role` there.
struct TenantContext<Role: RequiredRole>: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The route's tenant: a valid slug, seen by the key (it may not exist).
    let tenant: TenantSlug
    let key: KeyIdentity

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        tenant = try context.tenant()
        key = try context.requireKey()
        try key.authorize(Role.role, on: tenant)
    }
}

/// A request on the environment of the route's `:tenant` and `:env` by a key with at least
/// `Role` in its tenant.
struct EnvironmentContext<Role: RequiredRole>: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The route's environment: valid names, of a tenant the key sees (it may not exist).
    let path: EnvironmentPath
    let key: KeyIdentity

    /// Recorded as the actor of what the request writes.
    var actor: String { key.actor }

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        path = try context.environmentPath()
        key = try context.requireKey()
        try key.authorize(Role.role, on: path.tenant)
    }
}

extension KeyIdentity {
    /// Refuses acting on `tenant` with `role` in the order that leaks nothing: another tenant's
    /// key gets the very error of an unknown tenant, then too little role is `403`.
    func authorize(_ role: KeyRole, on tenant: TenantSlug) throws {
        guard sees(tenant) else { throw TenancyError.tenantNotFound(tenant) }
        guard permits(role, on: tenant) else { throw APIError.forbidden(needs: role.rawValue) }
    }

    /// `authorize(_:on:)` for the environment at `path`: a key scoped to another environment of
    /// the tenant gets the `404` of an unknown environment, as another tenant's key does.
    func authorize(_ role: KeyRole, on path: EnvironmentPath) throws {
        try authorize(role, on: path.tenant)
        guard reaches(path) else { throw TenancyError.environmentNotFound(path, existing: []) }
    }
}

// MARK: The path

/// Only the parent context parses the tenant and environment: a handler's context carries them
/// checked, and has no way to parse them again.
extension FlagpoleRequestContext {
    /// The environment named by the route's `:tenant` and `:env`. A name that could not be a
    /// slug names no environment: `404`, as for any unknown one.
    func environmentPath() throws -> EnvironmentPath {
        EnvironmentPath(tenant: try tenant(), environment: try environmentName())
    }

    /// The tenant named by the route's `:tenant`; a name that could not be a slug is `404`.
    func tenant() throws -> TenantSlug {
        let text = parameters.get("tenant") ?? ""
        guard let slug = try? TenantSlug(validating: text) else {
            throw TenancyError.tenantNotFound(TenantSlug(rawValue: text))
        }
        return slug
    }

    private func environmentName() throws -> EnvironmentName {
        let text = parameters.get("env") ?? ""
        guard let name = try? EnvironmentName(validating: text) else {
            throw TenancyError.environmentNotFound(
                EnvironmentPath(tenant: try tenant(), environment: EnvironmentName(rawValue: text)), existing: [])
        }
        return name
    }
}

/// The route's other parameters, which every handler reads for itself.
extension RequestContext {
    /// The route's `:feature`, percent-decoded (feature names have spaces).
    func feature() throws -> String {
        try decodedParameter("feature")
    }

    /// The route's `:user`, percent-decoded; an id the store could not hold is `422`.
    func user() throws -> UserID {
        try UserID(validating: try decodedParameter("user"))
    }

    /// Hummingbird matches routes on the raw path, so an encoded `/` stays inside its segment;
    /// the value is decoded here.
    func decodedParameter(_ name: String) throws -> String {
        let raw = parameters.get(name) ?? ""
        guard let decoded = raw.removingPercentEncoding else {
            throw APIError.malformed(
                "The path segment \"\(raw)\" has a broken percent-encoding. Encode it as RFC 3986 says, e.g. a space as %20."
            )
        }
        return decoded
    }
}
