import FlagpoleStore
import HTTPTypes
import Hummingbird

/// Wraps every dashboard page: errors become HTML pages (or a trip to sign in), and every
/// answer carries headers that keep pages out of caches and frames and scripts to our own.
struct DashboardMiddleware<Context: RequestContext>: RouterMiddleware {
    let templates: DashboardTemplates

    /// No inline scripts or styles, no other origins: the pages need nothing else, and a
    /// browser that blocks anything reports it (the browser check fails on such reports).
    static var securityHeaders: HTTPFields {
        [
            .contentSecurityPolicy:
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "same-origin",
        ]
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch DashboardError.signInRequired(let next) {
            // A browser that still sends a session the store no longer has is told why it is here.
            let ended = request.cookies[DashboardSession.cookieName].map { !$0.value.isEmpty } ?? false
            response = .seeOther("/login?next=" + EnvironmentURLs.queryValue(next) + (ended ? "&ended=1" : ""))
        } catch {
            response = errorPage(for: error, request: request, context: context)
        }
        for field in Self.securityHeaders { response.headers[field.name] = field.value }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    private func errorPage(for error: any Error, request: Request, context: Context) -> Response {
        let status: HTTPResponse.Status
        let message: String
        switch error {
        case DashboardError.forgedForm:
            status = .forbidden
            message =
                "This form did not come from this session's page: it is from another site, or from before you signed in again. Reload the page and send it again."
        case DashboardError.badForm(let text):
            (status, message) = (.badRequest, text)
        default:
            let apiError = APIError(error)
            status = apiError.status
            if apiError.code == "forbidden", case .object(let details) = apiError.details,
                case .string(let role)? = details["needs"]
            {
                // A person signed in holds a role, not a key: said in their terms.
                message =
                    "Your role here does not allow this: it needs \(role). An admin of the tenant can give it to you on the Members page; nothing was changed."
            } else {
                message = apiError.message
            }
        }
        if status.kind == .serverError {
            context.logger.error("Dashboard page failed", metadata: ["error": "\(error)"])
        }
        let page = ErrorPage(
            chrome: Chrome(session: nil), heading: status.reasonPhrase, message: message,
            links: ErrorPage.links(near: request.uri.path))
        return .html(templates.render(page, as: "error"), status: status)
    }
}

/// An error, as a page.
struct ErrorPage: Sendable {
    struct Link: Sendable {
        var name: String
        var url: String
    }

    var chrome: Chrome
    var heading: String
    var message: String
    /// Ways on from where the person was: their environment, then the tenants.
    var links: [Link] = [Link(name: "the tenants", url: "/")]

    /// The features page of the environment `path` names (`/tenants/acme/production/…`), if it
    /// names one, then the tenants.
    static func links(near path: String) -> [Link] {
        let segments = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        var links: [Link] = []
        if segments.count >= 3, segments[0] == "tenants", segments[2] != "settings", segments[2] != "members" {
            links.append(
                Link(
                    name: "the features of \(segments[1])/\(segments[2])",
                    url: "/tenants/\(EnvironmentURLs.segment(segments[1]))/\(EnvironmentURLs.segment(segments[2]))"))
        }
        return links + [Link(name: "the tenants", url: "/")]
    }
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
