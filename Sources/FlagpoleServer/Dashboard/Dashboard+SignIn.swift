import FlagpoleCore
import FlagpoleHandbook
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
        pages.get("docs/:page", use: document)
    }

    // MARK: Handlers

    /// GET /: the tenants the key sees, with their environments.
    @Sendable func homePage(_: Request, context: SignedInContext) async throws -> Response {
        let session = context.session
        var tenants: [HomePage.Tenant] = []
        for tenant in try await store.access.tenants() where session.identity.sees(tenant.slug) {
            let environments = try await store.access.environments(of: tenant.slug).map { environment in
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
        var isMember = false
        if case .member = session.identity.owner { isMember = true }
        return .html(
            templates.render(
                HomePage(chrome: chrome(session), isMember: isMember, tenants: tenants), as: "home"))
    }

    /// GET /login: the sign-in form.
    @Sendable func signInPage(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let next = Self.safeNext(request.uri.queryParameters["next"].map(String.init))
        if try await session(of: request) != nil { return .seeOther(next) }
        var response = signInPage(
            next: next, email: "", error: nil, status: .ok, for: request,
            ended: request.uri.queryParameters["ended"] == "1")
        // The ended session's cookie goes: the next page is not sent here again with it.
        response.setCookie(.dashboard(DashboardSession.cookieName, value: "", maxAge: 0, for: request))
        return response
    }

    /// POST /login: opens a session for a member's email and password, or for a key, and sends
    /// the browser where it was going.
    @Sendable func signIn(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let form = try await decodeForm(SignInForm.self, request)
        try Self.checkPreSessionForm(form.csrf, of: request)
        let next = Self.safeNext(form.next)
        let opened: OpenedSession
        if let key = form.key, !key.isEmpty {
            guard
                let session = try await store.access.openSession(
                    withKey: key.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                return signInPage(
                    next: next, email: "",
                    error:
                        "That key is unknown, revoked, or a delivery key (which only fetches documents). Check it, or make one with `flagpole key create`.",
                    status: .unauthorized, for: request)
            }
            opened = session
        } else {
            let email = form.email ?? ""
            let outcome: SignInOutcome
            do {
                outcome = try await store.access.signIn(
                    email: email, password: form.password ?? "",
                    address: request.clientAddress(context, trustsProxy: trustsProxy),
                    browser: request.headers[.userAgent], cost: passwordCost)
            } catch let error as MemberError {
                return signInPage(
                    next: next, email: email, error: error.description, status: .contentTooLarge, for: request)
            }
            switch outcome {
            case .opened(let session):
                opened = session
            case .refused:
                return signInPage(
                    next: next, email: email,
                    error:
                        "That e-mail address and password don't match. Check both; after \(Access.accountFailureLimit) failures in \(Int(Access.failureWindow / 60)) minutes the account waits \(Int(Access.lockout / 60)) minutes. A lost password is reset by a server operator.",
                    status: .unauthorized, for: request)
            case .lockedOut(let until):
                var response = signInPage(
                    next: next, email: email,
                    error:
                        "Too many failed sign-ins: this account or address is locked until \(until.formatted(.iso8601)) (UTC). Try again then, or ask a server operator for a reset link.",
                    status: .tooManyRequests, for: request)
                response.headers[.retryAfter] = String(max(1, Int(until.timeIntervalSinceNow.rounded(.up))))
                return response
            }
        }
        return Self.signedIn(opened, going: next, for: request)
    }

    /// The answer that hands the browser its new session's cookie.
    static func signedIn(_ session: OpenedSession, going next: String, for request: Request) -> Response {
        var response = Response.seeOther(next)
        response.setCookie(
            .dashboard(
                DashboardSession.cookieName, value: session.token, maxAge: Int(Access.sessionLifetime),
                for: request))
        response.setCookie(.dashboard(signInCookieName, value: "", maxAge: 0, for: request))
        return response
    }

    /// POST /logout: ends the session everywhere, not only in this browser.
    @Sendable func signOut(_ request: Request, context: SignedInContext) async throws -> Response {
        let session = context.session
        _ = try await form(CSRFOnlyForm.self, of: request, session: session)
        try await store.access.closeSession(session.token)
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

    private func signInPage(
        next: String, email: String, error: String?, status: HTTPResponse.Status, for request: Request,
        ended: Bool = false
    ) -> Response {
        Self.preSessionPage(status: status, for: request) { csrf in
            templates.render(
                SignInPage(
                    chrome: Chrome(session: nil), csrf: csrf, next: next, email: email, error: error,
                    ended: ended
                        ? "Your session has ended: it was signed out (from another browser, or by changing your password), your membership of the tenant changed or ended, or it expired. Sign in again; if you were removed, an admin of the tenant can add you back."
                        : nil),
                as: "signin")
        }
    }

    /// A page whose form is sent before there is a session (signing in, a link's password): its
    /// CSRF token is new, and the answer's cookie carries it too (a double-submit cookie), so
    /// another site can't post the form for a browser.
    static func preSessionPage(
        status: HTTPResponse.Status, for request: Request, render: (_ csrf: String) -> String
    ) -> Response {
        let csrf = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexEncoded
        var response = Response.html(render(csrf), status: status)
        response.setCookie(.dashboard(signInCookieName, value: csrf, maxAge: 3600, for: request))
        return response
    }

    /// Refuses a form of a `preSessionPage` whose token is not its cookie's.
    ///
    /// - throws: `DashboardError.forgedForm`.
    static func checkPreSessionForm(_ csrf: String, of request: Request) throws {
        guard let expected = request.cookies[signInCookieName]?.value, !expected.isEmpty,
            ConstantTime.isEqual(csrf.utf8, expected.utf8)
        else { throw DashboardError.forgedForm }
    }

    /// Where to go after signing in: a path of this server only, so a crafted link can't
    /// send a freshly signed-in browser to another site.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.hasPrefix("/\\"),
            !next.contains(where: { $0.isNewline })
        else { return "/" }
        return next
    }

    /// GET /docs/{NAME}.md: a document of the version running, as written (Markdown reads as
    /// plain text). Public, as the stylesheet is: the docs hold nothing of any tenant's.
    @Sendable func document(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        guard let name = context.parameters.get("page"), let bytes = Handbook.pages[name] else {
            throw APIError(
                .notFound, code: "not_found",
                "There is no document \(request.uri.path): the docs are \(Self.documentList).")
        }
        return Self.asset(bytes, type: "text/plain; charset=utf-8")
    }

    private static let documentList = Handbook.pages.keys.sorted().joined(separator: ", ")

    private static func asset(_ bytes: [UInt8], type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=300"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A member's email and password, or an API key.
struct SignInForm: Decodable {
    var csrf: String
    var email: String?
    var password: String?
    var key: String?
    var next: String?
}

struct CSRFOnlyForm: DashboardForm {
    var csrf: String
}

struct SignInPage: Sendable {
    var chrome: Chrome
    var csrf: String
    var next: String
    /// As typed, after a refusal; never the password.
    var email: String
    var error: String?
    /// Why a browser with a session is asked to sign in again.
    var ended: String?
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
    /// A member signed in with their password, who may have been removed from every tenant.
    var isMember: Bool
    var tenants: [Tenant]
}
