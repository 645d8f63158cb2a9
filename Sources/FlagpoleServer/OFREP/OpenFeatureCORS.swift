import HTTPTypes
import Hummingbird

/// Lets browsers call OFREP and the change streams from any origin, as the OpenFeature web SDK's
/// OFREP provider does: a preflight (`OPTIONS` with `Origin`) is answered, and answers carry
/// `Access-Control-Allow-Origin: *` and expose `ETag`. Only these routes: the admin API and the
/// dashboard stay same-origin. No credentials are involved (keys travel in headers, never in
/// cookies), so allowing every origin gives a page nothing it couldn't send itself.
struct OpenFeatureCORS: RouterMiddleware {
    typealias Context = FlagpoleRequestContext

    private let cors = CORSMiddleware<FlagpoleRequestContext>(
        allowOrigin: .all,
        allowHeaders: [.authorization, .contentType, .xAPIKey, .ifNoneMatch, .lastEventID],
        allowMethods: [.get, .post], exposedHeaders: [exposed], maxAge: .seconds(600))

    private static let exposed = "ETag, Retry-After"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.isOpenFeature(request.uri.path) else { return try await next(request, context) }
        var response = try await cors.handle(request, context: context, next: next)
        // The middleware exposes headers on preflights only; a page reads a bulk answer's ETag
        // (for its next If-None-Match) only when the answer itself exposes it.
        if request.headers.contains(.origin) && request.method != .options {
            response.headers[.accessControlExposeHeaders] = Self.exposed
        }
        return response
    }

    /// OFREP's operations, under an environment or at the root, and the change streams.
    static func isOpenFeature(_ path: String) -> Bool {
        path.hasPrefix("/ofrep/v1/")
            || (path.hasPrefix("/t/") && (path.contains("/ofrep/v1/") || path.hasSuffix("/changes")))
    }
}
