import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The OpenFeature Remote Evaluation Protocol (OFREP 0.3.0): every feature and config of an
/// environment as a typed flag, for any OpenFeature SDK's stock OFREP provider.
///
/// A provider's base URL is the environment's, `http://HOST/t/{tenant}/{env}`; a provider
/// configured with a bare host reaches the same operations at `/ofrep/v1/…` with a delivery key
/// scoped to one environment. A public environment needs no key, a private one any key of its
/// tenant, as `Authorization: Bearer` or `X-API-Key`. Every answer, errors included, has the
/// shape the spec gives it; a user's first assignments are recorded as their pinned
/// features.json records them (see `FeatureStore.evaluateFlag`).
struct OFREPRoutes {
    let delivery: DeliveryRoutes
    let tokens: StreamTokens
    /// Single evaluations of tests, as exposures for their results.
    let exposures: ExposureRecorder
    /// The largest body read: an evaluation context is small.
    static let maxBodySize = 64 * 1024

    func register(on router: Router<FlagpoleRequestContext>) {
        // Refusals of access, as every other failure, answer as OFREP shapes them.
        let evaluations = router.group().add(middleware: OFREPAnswering(delivery: delivery))
            .delivery(DeliveryNeeds.Evaluation.self, of: delivery)
        for prefix in ["/t/:tenant/:env/ofrep/v1", "/ofrep/v1"] {
            evaluations.post("\(prefix)/evaluate/flags/:key", use: evaluateOne)
            evaluations.post("\(prefix)/evaluate/flags", use: evaluateAll)
        }
    }

    // MARK: Operations

    @Sendable private func evaluateOne(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Evaluation>
    ) async throws -> Response {
        let key = try context.decodedParameter("key")
        let path = context.path
        let body = try OFREPRequest(
            try await bytes(of: request), key: key, attributeLimits: delivery.attributeLimits)
        await refreshIfBehind(path, request)
        let flag: FlagEvaluation
        do {
            flag = try await delivery.store.assignments.evaluateFlag(
                key, for: body.context, in: path, admittingNewUser: delivery.admission(request, context))
        } catch let problem as FlagProblem {
            throw OFREPError(
                problem == .notFound(key: key) ? .notFound : .badRequest, problem)
        } catch DocumentError.noRevision {
            throw OFREPError(
                .notFound, code: "FLAG_NOT_FOUND", key: key, "\(path) has no revision yet: it has no flags.")
        }
        await exposures.note(flag, user: body.context.user, in: path)
        delivery.fetches.count(path, revision: flag.revision, .ofrep)
        return Self.response(Self.answer(flag))
    }

    @Sendable private func evaluateAll(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Evaluation>
    ) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let tag = try query.tag()
        let body = try OFREPRequest(
            try await bytes(of: request), key: nil, attributeLimits: delivery.attributeLimits)
        await refreshIfBehind(path, request)
        let evaluations: FlagEvaluations
        do {
            evaluations = try await delivery.store.assignments.evaluateFlags(
                for: body.context, tag: tag, in: path, admittingNewUser: delivery.admission(request, context))
            delivery.fetches.count(path, revision: evaluations.revision, .ofrep)
        } catch DocumentError.noRevision {
            evaluations = FlagEvaluations(revision: 0, flags: [])
        }
        var changes = Self.changesURI(of: path)
        if context.access.isPrivate {
            changes += "?token=\(try await tokens.token(for: path))"
        }
        return Self.response(
            Self.bulkAnswer(
                evaluations, changesURI: changes, request: body, tag: tag, ifNoneMatch: request.headers[.ifNoneMatch]))
    }

    // MARK: Answers, shared with the event loop's fast path

    /// The answer to a single evaluation.
    static func answer(_ flag: FlagEvaluation) -> (HTTPResponse, ByteBuffer?) {
        (
            HTTPResponse(
                status: .ok, headerFields: [.contentType: "application/json", .cacheControl: "private, no-store"]),
            ByteBuffer(bytes: OFREPJSON.evaluation(flag))
        )
    }

    /// The answer to a bulk evaluation: every flag, with a strong ETag over the answer, the
    /// context and the tag (equal answers for two users still get two ETags); `304` when
    /// `ifNoneMatch` names it.
    static func bulkAnswer(
        _ evaluations: FlagEvaluations, changesURI: String, request: OFREPRequest, tag: String?, ifNoneMatch: String?
    ) -> (HTTPResponse, ByteBuffer?) {
        let bytes = OFREPJSON.bulk(evaluations, changesURI: changesURI)
        var hasher = SHA256()
        hasher.update(data: bytes)
        hasher.update(data: [0])
        hasher.update(data: request.contextBytes)
        hasher.update(data: Array((tag ?? "").utf8))
        let etag = "\"\(Hex.encode(hasher.finalize()).prefix(32))\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
        headers[.revision] = String(evaluations.revision)
        if let ifNoneMatch,
            ifNoneMatch.split(separator: ",").contains(where: {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == etag || tag == "W/" + etag || tag == "*"
            })
        {
            return (HTTPResponse(status: .notModified, headerFields: headers), nil)
        }
        headers[.contentType] = "application/json"
        return (HTTPResponse(status: .ok, headerFields: headers), ByteBuffer(bytes: bytes))
    }

    /// The change stream's request URI, for a public environment.
    static func changesURI(of path: EnvironmentPath) -> String {
        "/t/\(path.tenant.rawValue)/\(path.environment.rawValue)/changes"
    }

    // MARK: Access

    /// A re-fetch a change event triggered (`?flagConfigEtag=`, `?flagConfigLastModified=`) may
    /// know of a revision this server has not polled yet: read the environment's state first.
    private func refreshIfBehind(_ path: EnvironmentPath, _ request: Request) async {
        let query = Query(request)
        guard let etag = query.string("flagConfigEtag") ?? query.string("flagConfigLastModified") else { return }
        if let state = delivery.cache.current(path), etag == ChangeEvent.etag(of: state) { return }
        await delivery.cache.refresh(path, from: delivery.store)
    }

    // MARK: Answers

    private func bytes(of request: Request) async throws -> [UInt8] {
        do {
            return Array(try await request.body.collect(upTo: Self.maxBodySize).readableBytesView)
        } catch {
            throw OFREPError(
                .contentTooLarge, code: "INVALID_CONTEXT", key: nil,
                "The body is over \(Self.maxBodySize) bytes: an evaluation context is a few attributes.")
        }
    }

    static func response(to error: OFREPError) -> Response {
        var headers = error.headers
        headers[.contentType] = "application/json"
        return Response(
            status: error.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: error.body)))
    }

    private static func response(_ answer: (head: HTTPResponse, body: ByteBuffer?)) -> Response {
        Response(
            status: answer.head.status, headers: answer.head.headerFields,
            body: answer.body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }
}

/// Answers every failure of an OFREP route, its access refused included, the way OFREP shapes it.
struct OFREPAnswering: RouterMiddleware {
    typealias Context = FlagpoleRequestContext
    let delivery: DeliveryRoutes

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // The single-flag route's key, for the error body; a bulk evaluation names none.
        let key = context.parameters.get("key").flatMap { $0.removingPercentEncoding }
        do {
            return try await next(request, context)
        } catch {
            return response(to: error, key: key, logger: context.logger)
        }
    }

    private func response(to error: any Error, key: String?, logger: Logger) -> Response {
        switch error {
        case let error as OFREPError:
            return OFREPRoutes.response(to: error)
        case FlagRefusal.newUserLimited:
            var error = OFREPError(
                .tooManyRequests, code: "GENERAL", key: key,
                "Too many users new to this environment from one client: try again in a second.")
            error.headers[.retryAfter] = String(delivery.newUsers.limit.retryAfterSeconds)
            return OFREPRoutes.response(to: error)
        case let error as TenancyError:
            // The spec's single-flag 404 is a flag not found, which is what a provider makes of any 404.
            return OFREPRoutes.response(
                to: OFREPError(.notFound, code: key == nil ? "GENERAL" : "FLAG_NOT_FOUND", key: key, error.description))
        case let error as APIError:
            return OFREPRoutes.response(to: OFREPError(error.status, code: "GENERAL", key: key, error.message))
        case let error as StorageError where error.isUnavailable:
            // Nothing was recorded; the provider keeps its defaults until the database is back.
            var error = OFREPError(
                .serviceUnavailable, code: "GENERAL", key: key,
                "The server can't reach its database; nothing was recorded. Try again shortly.")
            error.headers[.retryAfter] = "5"
            return OFREPRoutes.response(to: error)
        case StorageError.busy:
            // Another writer held the database past the busy timeout: the client may try again.
            var error = OFREPError(
                .serviceUnavailable, code: "GENERAL", key: key,
                "The database is busy with another write; nothing was recorded. Try again in a second.")
            error.headers[.retryAfter] = "1"
            return OFREPRoutes.response(to: error)
        default:
            logger.error("OFREP evaluation failed", metadata: ["error": "\(error)"])
            return OFREPRoutes.response(
                to: OFREPError(
                    .internalServerError, code: "GENERAL", key: nil,
                    "The server failed to evaluate; nothing was recorded. The log has the details."))
        }
    }
}

extension HTTPField.Name {
    /// OFREP's second way to present a key.
    static let xAPIKey = HTTPField.Name("X-API-Key")!
}
