import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import Foundation
import HTTPTypes
import Hummingbird
import MultipartKit
import NIOCore

/// The web dashboard at `/`: server-rendered HTML pages over the same store operations as the
/// admin API and the command line. Members sign in with their password (automation with an API
/// key); either way the browser keeps a session cookie, and every form carries the session's
/// CSRF token.
///
/// Pages work without JavaScript; the one script only makes the bias plan live and checks JSON
/// config values as they are typed. Changes of targeting rules and segments are planned (a dry
/// run) before they are applied, as biases are.
struct Dashboard: Sendable {
    let store: FeatureStore
    let templates: DashboardTemplates
    /// The largest form accepted, in bytes: the same limit as API bodies.
    let maxBodySize: Int
    let defaultCacheControl: String
    /// Whether the address of a sign-in is the one the proxy in front names (`X-Forwarded-For`):
    /// failed sign-ins are counted per address.
    var trustsProxy = false
    /// scrypt's cost for passwords members set (`ServerConfiguration.passwordCost`).
    var passwordCost = PasswordCost.owasp
    /// The time ramps go by (`ServerConfiguration.clock`).
    var clock = WallClock.system
    /// Where a webhook may be sent (`ServerConfiguration.webhookAddresses`), as the API checks it.
    var webhookAddresses = WebhookAddresses(allowsPrivate: false)

    func register(on router: Router<FlagpoleRequestContext>) {
        let pages = router.group().add(middleware: DashboardMiddleware(templates: templates))
        // Every page but signing in and the assets needs a session: looked up here once, checked
        // by the page's context (`DashboardContexts.swift`).
        let signedIn = pages.group().add(middleware: SessionMiddleware(dashboard: self))
        registerSignIn(on: pages, signedIn: signedIn)
        registerOverview(on: signedIn)
        registerFeature(on: signedIn)
        registerConfigs(on: signedIn)
        registerSegments(on: signedIn)
        registerResults(on: signedIn)
        registerRamp(on: signedIn)
        registerUser(on: signedIn)
        registerRevisions(on: signedIn)
        registerImport(on: signedIn)
        registerExport(on: signedIn)
        registerSettings(on: signedIn)
        registerWebhooks(on: signedIn)
        registerMembers(on: pages, signedIn: signedIn)
    }

    /// Whether a route template is one of the dashboard's (HTML, outside `/api`, `/t` and
    /// the operations routes).
    static func isPage(_ template: String) -> Bool {
        ["/", "/login", "/logout", "/dashboard.css", "/dashboard.js"].contains(template)
            || template.hasPrefix("/tenants/") || template.hasPrefix("/account") || template == "/welcome"
            || template.hasPrefix("/docs/")
    }

    // MARK: Sessions and roles

    /// The session of a request's cookie, if it is still good.
    func session(of request: Request) async throws -> DashboardSession? {
        guard let token = request.cookies[DashboardSession.cookieName]?.value,
            let identity = try await store.access.sessionIdentity(token)
        else { return nil }
        return DashboardSession(identity: identity, token: token)
    }

    /// A form of `session`, after checking its CSRF token.
    ///
    /// - throws: `DashboardError.forgedForm`, `DashboardError.badForm`.
    func form<Form: DashboardForm>(
        _ type: Form.Type, of request: Request, session: DashboardSession
    ) async throws -> Form {
        let form = try await decodeForm(type, request)
        try session.verify(csrf: form.csrf)
        return form
    }

    /// A form's fields, URL-encoded or multipart (the import page uploads files).
    func decodeForm<Form: Decodable>(_ type: Form.Type, _ request: Request) async throws -> Form {
        let body = try await request.body.collect(upTo: maxBodySize)
        let contentType = request.headers[.contentType] ?? ""
        do {
            if contentType.lowercased().hasPrefix("multipart/form-data") {
                guard let boundary = Self.boundary(of: contentType) else {
                    throw DashboardError.badForm("The upload has no multipart boundary.")
                }
                return try FormDataDecoder().decode(type, from: body, boundary: boundary)
            }
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: body))
        } catch let error as DashboardError {
            throw error
        } catch {
            throw DashboardError.badForm("The form could not be read (\(error)). Reload the page and send it again.")
        }
    }

    private static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0].lowercased() == "boundary" {
                return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// The frame of a signed-in page outside an environment: who is signed in.
    func chrome(_ session: DashboardSession) -> Chrome {
        Chrome(session: session, notice: nil)
    }

    /// The frame of an environment's page: who is signed in, its tabs and sections. `same`: the
    /// address of this page in another environment, which its tab links to (default: `page`).
    func chrome(
        _ context: DashboardEnvironmentContext<some RequiredRole>, at page: EnvironmentPage, notice: String? = nil,
        same: ((EnvironmentURLs) -> String)? = nil
    ) async throws -> Chrome {
        var chrome = Chrome(session: context.session, notice: notice)
        let environments = try await store.access.environments(of: context.path.tenant)
        let marking = environments.first { $0.path == context.path }?.marking ?? EnvironmentMarking()
        chrome.environment = EnvironmentNav(
            path: context.path, environments: environments.map(\.path.environment), current: page,
            canEdit: context.canEdit, marking: marking, same: same ?? page.url)
        if marking.colour != nil { chrome.markingStylesheetURL = TenantURLs(context.path.tenant).markingStylesheet }
        return chrome
    }
}

/// A form the dashboard posts: every one carries the session's CSRF token.
protocol DashboardForm: Decodable {
    var csrf: String { get }
}

extension Response {
    /// An HTML page.
    static func html(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// `303 See Other`: after a form, the browser loads `location` with GET, so reloading the
    /// result never posts the form twice.
    static func seeOther(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}
