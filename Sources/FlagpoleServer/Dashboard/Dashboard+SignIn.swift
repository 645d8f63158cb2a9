import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Signing in and out, the list of tenants, and the stylesheet and script.
extension Dashboard {
    /// Holds the sign-in form's CSRF token (a double-submit cookie): before a session exists,
    /// it keeps another site from signing a browser in with the attacker's key.
    static let signInCookieName = "flagpole_signin"

    /// Signing in and the assets on `pages`, for anyone; home and signing out on `signedIn`.
    func registerSignIn(on pages: RouterGroup<FlagpoleRequestContext>, signedIn: RouterGroup<FlagpoleRequestContext>) {
        let signedInPages = signedIn.group(context: SignedInContext.self)

        signedInPages.get("/", use: homePage)
        pages.get("login", use: signInPage)
        pages.post("login", use: signIn)
        signedInPages.post("logout", use: signOut)
        pages.get("dashboard.css", use: stylesheet)
        pages.get("dashboard.js", use: script)
    }

    // MARK: Handlers

    /// GET /: the tenants the key sees, with their environments.
    @Sendable func homePage(_: Request, context: SignedInContext) async throws -> Response {
        let session = context.session
        var tenants: [HomePage.Tenant] = []
        for tenant in try await store.tenants() where session.identity.sees(tenant.slug) {
            let environments = try await store.environments(of: tenant.slug).map { environment in
                HomePage.Environment(
                    name: environment.path.environment.rawValue, url: EnvironmentURLs(environment.path).overview,
                    status: environment.revision.map { "revision \($0), \(environment.featureCount) features" }
                        ?? "no revision yet")
            }
            tenants.append(
                HomePage.Tenant(
                    slug: tenant.slug.rawValue, name: tenant.name, settingsURL: TenantURLs(tenant.slug).settings,
                    environments: environments))
        }
        return .html(templates.render(HomePage(chrome: try await chrome(session), tenants: tenants), as: "home"))
    }

    /// GET /login: the sign-in form.
    @Sendable func signInPage(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let next = Self.safeNext(request.uri.queryParameters["next"].map(String.init))
        if try await session(of: request) != nil { return .seeOther(next) }
        return signInPage(next: next, error: nil, status: .ok, for: request)
    }

    /// POST /login: opens a session for a key and sends the browser where it was going.
    @Sendable func signIn(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let form = try await decodeForm(SignInForm.self, request)
        guard let expected = request.cookies[Self.signInCookieName]?.value, !expected.isEmpty,
            ConstantTime.isEqual(form.csrf.utf8, expected.utf8)
        else { throw DashboardError.forgedForm }
        let next = Self.safeNext(form.next)
        guard
            let session = try await store.openSession(
                withKey: form.key.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            return signInPage(
                next: next,
                error:
                    "That key is unknown, revoked, or a delivery key (which only fetches documents). Check it, or make one with `flagpole key create`.",
                status: .unauthorized, for: request)
        }
        var response = Response.seeOther(next)
        response.setCookie(
            .dashboard(
                DashboardSession.cookieName, value: session.token, maxAge: Int(FeatureStore.sessionLifetime),
                for: request))
        response.setCookie(.dashboard(Self.signInCookieName, value: "", maxAge: 0, for: request))
        return response
    }

    /// POST /logout: ends the session everywhere, not only in this browser.
    @Sendable func signOut(_ request: Request, context: SignedInContext) async throws -> Response {
        let session = context.session
        _ = try await form(CSRFOnlyForm.self, of: request, session: session)
        try await store.closeSession(session.token)
        var response = Response.seeOther("/login")
        response.setCookie(.dashboard(DashboardSession.cookieName, value: "", maxAge: 0, for: request))
        return response
    }

    @Sendable func stylesheet(_: Request, context: FlagpoleRequestContext) async throws -> Response {
        Self.asset(DashboardTemplates.stylesheet, type: "text/css; charset=utf-8")
    }

    @Sendable func script(_: Request, context: FlagpoleRequestContext) async throws -> Response {
        Self.asset(DashboardTemplates.script, type: "text/javascript; charset=utf-8")
    }

    private func signInPage(next: String, error: String?, status: HTTPResponse.Status, for request: Request) -> Response
    {
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexEncoded
        let page = SignInPage(chrome: Chrome(session: nil), csrf: token, next: next, error: error)
        var response = Response.html(templates.render(page, as: "signin"), status: status)
        response.setCookie(.dashboard(Self.signInCookieName, value: token, maxAge: 3600, for: request))
        return response
    }

    /// Where to go after signing in: a path of this server only, so a crafted link can't
    /// send a freshly signed-in browser to another site.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
            !next.contains(where: { $0.isNewline })
        else { return "/" }
        return next
    }

    private static func asset(_ bytes: [UInt8], type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

struct SignInForm: Decodable {
    var csrf: String
    var key: String
    var next: String?
}

struct CSRFOnlyForm: DashboardForm {
    var csrf: String
}

struct SignInPage: Sendable {
    var chrome: Chrome
    var csrf: String
    var next: String
    var error: String?
}

struct HomePage: Sendable {
    struct Environment: Sendable {
        var name: String
        var url: String
        var status: String
    }

    struct Tenant: Sendable {
        var slug: String
        var name: String
        /// Keys, environments and goals.
        var settingsURL: String
        var environments: [Environment]
    }

    var chrome: Chrome
    var tenants: [Tenant]
}
