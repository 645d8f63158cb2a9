import Hummingbird
import Logging

/// One log line per request once it is answered: method, path, status, duration, and the
/// request id (the logger's `hb.request.id`), which error bodies and `X-Request-Id` also carry.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let level: Logger.Level

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        context.logger.log(
            level: level, "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: [
                "status": "\(response.status.code)",
                "duration_ms": "\((ContinuousClock.now - start).milliseconds)",
            ])
        return response
    }
}

extension Duration {
    /// Whole and fractional milliseconds, for logs.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
