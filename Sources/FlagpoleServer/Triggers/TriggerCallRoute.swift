import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// `POST /triggers?token=fpt_…`: what an alert in another system (Crashlytics, Sentry, a pager)
/// calls to pause a ramp, abort it rolling back, or switch a feature off. The token is the
/// credential, in the query so that the access log (paths only) never writes it; the body, which
/// such systems fill with their alert, is read and ignored. Every call is recorded with its
/// caller; a trigger acts at most once a minute, later calls answering `429` with `Retry-After`.
struct TriggerCallRoute: Sendable {
    let store: FeatureStore
    let clock: WallClock
    let trustsProxy: Bool

    /// An alert's body is far below this.
    static let maxBodySize = 64 * 1024

    func register(on router: Router<FlagpoleRequestContext>) {
        router.post("/triggers", use: call)
    }

    @Sendable func call(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        _ = try? await request.body.collect(upTo: Self.maxBodySize)
        guard let token = request.uri.queryParameters["token"].map(String.init) else {
            throw APIError.invalid("Call the URL `flagpole trigger create` printed: it ends with ?token=fpt_….")
        }
        let outcome = try await store.rollouts.callTrigger(
            token, address: request.clientAddress(context, trustsProxy: trustsProxy),
            userAgent: request.headers[.userAgent], now: clock.now)
        var headers: HTTPFields = [:]
        if let retryAfter = outcome.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return .json(
            outcome.jsonValue, status: outcome.retryAfter == nil ? .ok : .tooManyRequests, headers: headers)
    }
}
