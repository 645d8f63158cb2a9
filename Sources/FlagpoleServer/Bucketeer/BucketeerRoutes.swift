import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore

/// The two calls of the stock Bucketeer iOS SDK (docs/BUCKETEER.md), for an app whose
/// `apiEndpoint` is the environment's base URL, `https://HOST/t/{tenant}/{env}`, or the host
/// alone with a delivery key scoped to one environment:
///
/// - `POST …/get_evaluations`: every feature and config the tag selects for the user, from the
///   read every client shares (`FeatureStore.userGroups`), so the user has one group whichever
///   client asks; an app that holds this very answer gets its token back and nothing else.
/// - `POST …/register_events`: goal events and evaluation events (exposures) into the tests'
///   figures, deduplicated by event id; the SDK's metrics events as Prometheus series.
///
/// Every failure has a real status and the SDK's error shape (`BucketeerAnswering`).
struct BucketeerRoutes {
    let delivery: DeliveryRoutes
    let policy: EventPolicy
    /// The metrics and client-default events counted lately, so a batch sent again counts once.
    let countedEvents = RecentEventIDs()
    var store: FeatureStore { delivery.store }

    /// The largest body read: a batch of a thousand events is well under it, and a user's
    /// attributes beyond their limits are read up to it (what fits is evaluated).
    static let maxBodySize = 1024 * 1024

    /// The SDK's two calls, as the last segment of the path it asks.
    static let calls: Set<Substring> = ["get_evaluations", "register_events"]

    /// Whether `path` is a Bucketeer call, wherever it is (the router answers those it doesn't
    /// serve in the SDK's error shape too).
    static func isCall(_ path: String) -> Bool {
        path.split(separator: "/").last.map(calls.contains) ?? false
    }

    func register(on router: Router<FlagpoleRequestContext>) {
        // A group each: a group's middlewares are shared by every group made from it.
        let evaluations = router.group().add(middleware: BucketeerAnswering())
            .delivery(DeliveryNeeds.BucketeerEvaluations.self, of: delivery)
        let events = router.group().add(middleware: BucketeerAnswering(countingRefusalsIn: delivery))
            .delivery(DeliveryNeeds.BucketeerEvents.self, of: delivery)
        for base in ["/t/:tenant/:env", ""] {
            evaluations.post("\(base)/get_evaluations", use: getEvaluations)
            events.post("\(base)/register_events", use: registerEvents)
        }
    }

    // MARK: get_evaluations

    @Sendable func getEvaluations(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.BucketeerEvaluations>
    ) async throws -> Response {
        let body = try BucketeerEvaluationsRequest(
            try await bytes(of: request, fix: "send fewer user attributes"),
            attributeLimits: delivery.attributeLimits)
        if !body.attributes.isKept { delivery.metrics.bucketeerAttributesOverLimit.increment() }
        let read: UserDocumentRead
        do {
            read = try await store.assignments.userGroups(
                of: body.user, in: context.path, for: .follower, attributes: body.context.attributes,
                admittingNewUser: delivery.admission(request, context))
        } catch DocumentError.noRevision {
            return Self.response(
                BucketeerEvaluationsAnswer.answer(FlagEvaluations(revision: 0, flags: []), for: body, isRecorded: true))
        }
        if !read.isRecorded { delivery.metrics.bucketeerUnrecordedNewUsers.increment() }
        delivery.fetches.count(context.path, revision: read.revision, .bucketeer)
        guard let evaluations = read.flags(for: body.context, tagged: body.tag.isEmpty ? nil : body.tag) else {
            // Only a read no write completed can lack a group: the writer kept losing races.
            throw StorageError.busy
        }
        return Self.response(BucketeerEvaluationsAnswer.answer(evaluations, for: body, isRecorded: read.isRecorded))
    }

    // MARK: register_events

    @Sendable func registerEvents(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.BucketeerEvents>
    ) async throws -> Response {
        var batch = try BucketeerEventBatch(
            try await bytes(of: request, fix: "set the SDK's eventsMaxQueueSize lower"), receivedAt: Date())
        // Counted in memory only, so deduplicated here; the store deduplicates what it records.
        for (id, metric) in batch.sdkMetrics where countedEvents.isFirstSighting(of: id) {
            metric.record(in: delivery.metrics)
        }
        delivery.metrics.bucketeerClientDefaults.increment(
            by: batch.clientDefaults.count { countedEvents.isFirstSighting(of: $0) })
        delivery.metrics.bucketeerEventsWithoutID.increment(by: batch.withoutID)
        if !batch.events.isEmpty {
            do {
                batch.add(
                    try await store.experiments.record(
                        batch.events, in: context.path, policy: policy, dialect: .bucketeer))
            } catch let error as StorageError where error.isUnavailable || error.isBusy {
                batch.storeWasBusy()
            }
        }
        return Self.response(JSONWriter(style: .compact).bytes(of: batch.answer))
    }

    // MARK: Bodies and answers

    private func bytes(of request: Request, fix: String) async throws -> [UInt8] {
        do {
            return Array(try await request.body.collect(upTo: Self.maxBodySize).readableBytesView)
        } catch {
            throw BucketeerError(.contentTooLarge, "The body is over \(Self.maxBodySize >> 20) MiB: \(fix).")
        }
    }

    static func response(_ bytes: [UInt8]) -> Response {
        let (head, body) = answer(bytes)
        return Response(status: head.status, headers: head.headerFields, body: ResponseBody(byteBuffer: body))
    }

    /// A `200` with `bytes`, shared with the event loop's fast path.
    static func answer(_ bytes: [UInt8]) -> (HTTPResponse, ByteBuffer) {
        (
            HTTPResponse(
                status: .ok, headerFields: [.contentType: "application/json", .cacheControl: "private, no-store"]),
            ByteBuffer(bytes: bytes)
        )
    }
}

/// Answers every failure of a Bucketeer route, its access refused included, as a status the SDK
/// maps and `{"error": {"code", "message"}}`: never a `3xx`, never a `2xx` with a partial body.
struct BucketeerAnswering: RouterMiddleware {
    typealias Context = FlagpoleRequestContext
    /// Where refused `register_events` batches are counted: by cause in `/metrics`, and by
    /// environment, cause and key for the store; `nil` for `get_evaluations`.
    var countingRefusalsIn: DeliveryRoutes? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let refusal = Self.error(for: error, logger: context.logger)
            if let delivery = countingRefusalsIn, let cause = EventBatchRefusal(refusal.status) {
                delivery.metrics.bucketeerEventBatchesRefused[cause]?.increment()
                // At the host's root an unknown key names no environment: `/metrics` alone has it.
                if context.parameters.get("tenant") != nil, let path = try? context.environmentPath() {
                    let credential = DeliveryCredential(request.headers, scheme: .raw)
                    let key = RefusedBatchKey(path: path, cause: cause, keyPrefix: credential.shownPrefix)
                    delivery.refusedBatches.count(
                        key, else: RefusedBatchKey(path: path, cause: cause, keyPrefix: RefusedBatchKey.manyKeys))
                }
            }
            return Self.response(to: refusal)
        }
    }

    static func error(for error: any Error, logger: Logger) -> BucketeerError {
        switch error {
        case let error as BucketeerError:
            return error
        case let error as TenancyError:
            return BucketeerError(
                .notFound, "\(error.description) The SDK's apiEndpoint is https://HOST/t/TENANT/ENV.")
        case let error as APIError:
            return BucketeerError(error.status, error.message)
        case let error as StorageError where error.isUnavailable || error.isBusy:
            // Nothing was recorded; the app keeps what it has until its next poll.
            var refusal = BucketeerError(
                .serviceUnavailable,
                error.isBusy
                    ? "The database is busy with another write; nothing was recorded. Try again in a second."
                    : "The server can't reach its database; nothing was recorded. Try again shortly.")
            refusal.headers[.retryAfter] = error.isBusy ? "1" : "5"
            return refusal
        default:
            logger.error("Bucketeer call failed", metadata: ["error": "\(error)"])
            return BucketeerError(
                .internalServerError, "The server failed; nothing was recorded. The log has the details.")
        }
    }

    static func response(to error: BucketeerError) -> Response {
        var headers = error.headers
        headers[.contentType] = "application/json"
        return Response(
            status: error.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.body)))
    }
}

extension StorageError {
    /// Another writer held the database: the same request can succeed in a moment.
    fileprivate var isBusy: Bool {
        if case .busy = self { true } else { false }
    }
}

extension EventBatchRefusal {
    /// The cause of a refusal with `status`, if it is one a batch is refused whole for.
    init?(_ status: HTTPResponse.Status) {
        switch status.code {
        case 401: self = .unknownKey
        case 403: self = .otherEnvironment
        case 400, 413: self = .malformed
        case 503: self = .unavailable
        default: return nil
        }
    }
}
