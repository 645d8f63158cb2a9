import FlagpoleCore
import FlagpoleStore
import Hummingbird

// The dashboard's pages declare who may see them as the API's routes do (`RequestContexts.swift`):
// by the context of their group. The checks run in the order the pages always had: the path
// (a name that could not be a slug is `404`), the session (none, expired or revoked sends the
// browser to sign in, and back after), the tenant (another tenant's pages answer like a tenant
// that does not exist), the role (`403`).

/// The outcome of looking up a request's session cookie: the session, `nil` without a good one,
/// or the error of the lookup; and where signing in should lead back to.
struct PresentedSession: Sendable {
    let lookup: Result<DashboardSession?, any Error>
    /// This page after a GET; home after a form, which can't be sent again by a redirect.
    let next: String

    /// The session.
    ///
    /// - throws: `DashboardError.signInRequired` without a good session; the store's error if
    ///   the lookup failed.
    func session() throws -> DashboardSession {
        guard let session = try lookup.get() else { throw DashboardError.signInRequired(next: next) }
        return session
    }
}

/// Looks up the session cookie of every page of its group, once, for the page's context to check.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = FlagpoleRequestContext
    let dashboard: Dashboard

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let lookup: Result<DashboardSession?, any Error>
        do {
            lookup = .success(try await dashboard.session(of: request))
        } catch {
            lookup = .failure(error)
        }
        context.presentedSession = PresentedSession(
            lookup: lookup, next: request.method == .get ? request.uri.description : "/")
        return try await next(request, context)
    }
}

extension FlagpoleRequestContext {
    /// The request's session, as `SessionMiddleware` found it.
    func requireSession() throws -> DashboardSession {
        guard let presentedSession else { throw ContextError.notAuthenticated(endpointPath ?? "?") }
        return try presentedSession.session()
    }
}

/// A page of any signed-in browser: the tenants its key sees, signing out.
struct SignedInContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let session: DashboardSession

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        session = try context.requireSession()
    }
}

/// A page of the environment of the route's `:tenant` and `:env`, for a session whose key has
/// at least `Role` in its tenant.
struct DashboardEnvironmentContext<Role: RequiredRole>: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The route's environment: valid names, of a tenant the key sees (it may not exist).
    let path: EnvironmentPath
    let session: DashboardSession
    /// Whether the session may edit the environment: what every page shows its forms by.
    let canEdit: Bool

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        path = try context.environmentPath()
        session = try context.requireSession()
        try session.identity.authorize(Role.role, on: path.tenant)
        canEdit = session.identity.permits(.editor, on: path.tenant)
    }
}

/// A page of the tenant of the route's `:tenant` (its settings), for a session whose key has at
/// least `Role` in it.
struct DashboardTenantContext<Role: RequiredRole>: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The route's tenant: a valid slug the key sees (it may not exist).
    let tenant: TenantSlug
    let session: DashboardSession
    /// Whether the session may manage keys and environments: what the settings page shows those
    /// forms by.
    let isAdmin: Bool
    /// Whether the session may create goals, as the API lets editors.
    let canEdit: Bool

    init(context: FlagpoleRequestContext) throws {
        coreContext = context.coreContext
        tenant = try context.tenant()
        session = try context.requireSession()
        try session.identity.authorize(Role.role, on: tenant)
        isAdmin = session.identity.permits(.admin, on: tenant)
        canEdit = session.identity.permits(.editor, on: tenant)
    }
}
