import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import HTTPTypes
import Hummingbird

/// The admin API under `/api/v1`: JSON in and out, mirroring the command line, every route
/// calling the same store operation as its command. Each route is registered under the
/// context of the role it needs (`RequestContexts.swift`): its handler receives the checked key
/// and path.
struct AdminAPI: Sendable {
    let store: FeatureStore
    /// The largest body accepted, in bytes.
    let maxBodySize: Int
    /// The time ramps go by (`ServerConfiguration.clock`).
    let clock: WallClock
    /// Which addresses a webhook made here may reach.
    let webhookAddresses: WebhookAddresses
    /// The application's counters.
    let metrics: ServerMetrics

    func register(on router: Router<FlagpoleRequestContext>) {
        // Every API route needs a key: looked up here once, checked by the route's context.
        let api = router.group("api/v1").add(middleware: KeyMiddleware(store: store))
        registerTenants(on: api)
        registerMembers(on: api)
        registerDocuments(on: api)
        registerFeatures(on: api)
        registerConfigs(on: api)
        registerTargeting(on: api)
        registerResults(on: api)
        registerAssignments(on: api)
        registerRamps(on: api)
        registerTriggers(on: api)
        registerWebhooks(on: api)
    }

    /// Reads the JSON body of a request.
    func body(_ request: Request, allowed: Set<String>) async throws -> JSONBody {
        try await JSONBody(request, limit: maxBodySize, allowed: allowed)
    }

    /// Edit options from a body's `dryRun`, `force` and `message` and the `If-Match` header.
    func editOptions(_ body: JSONBody, _ request: Request, actor: String) throws -> EditOptions {
        EditOptions(
            isDryRun: try body.bool("dryRun"), isForced: try body.bool("force"), message: try body.string("message"),
            actor: actor, expectedRevision: try request.expectedRevision())
    }
}

/// `/api/v1/tenants/{tenant}/environments/{env}`: the prefix of every environment route.
let environmentRoute = "tenants/:tenant/environments/:env"
