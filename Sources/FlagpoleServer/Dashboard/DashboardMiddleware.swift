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
            response = .seeOther("/login?next=" + EnvironmentURLs.queryValue(next))
        } catch {
            response = errorPage(for: error, context: context)
        }
        for field in Self.securityHeaders { response.headers[field.name] = field.value }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    private func errorPage(for error: any Error, context: Context) -> Response {
        let (status, message): (HTTPResponse.Status, String) =
            switch error {
            case DashboardError.forgedForm:
                (
                    .forbidden,
                    "This form did not come from this session's page: it is from another site, or from before you signed in again. Reload the page and send it again."
                )
            case DashboardError.badForm(let message):
                (.badRequest, message)
            default:
                {
                    let apiError = APIError(error)
                    return (apiError.status, apiError.message)
                }()
            }
        if status.kind == .serverError {
            context.logger.error("Dashboard page failed", metadata: ["error": "\(error)"])
        }
        let page = ErrorPage(chrome: Chrome(session: nil), heading: status.reasonPhrase, message: message)
        return .html(templates.render(page, as: "error"), status: status)
    }
}

/// An error, as a page.
struct ErrorPage: Sendable {
    var chrome: Chrome
    var heading: String
    var message: String
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
