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
        for prefix in ["/t/:tenant/:env/ofrep/v1", "/ofrep/v1"] {
            router.post("\(prefix)/evaluate/flags/:key") { request, context in
                await answering(key: try? context.decodedParameter("key"), logger: context.logger) {
                    try await evaluateOne(request, context: context)
                }
            }
            router.post("\(prefix)/evaluate/flags") { request, context in
                await answering(key: nil, logger: context.logger) { try await evaluateAll(request, context: context) }
            }
        }
    }

    // MARK: Operations

    private func evaluateOne(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let key = try context.decodedParameter("key")
        let (path, isAnonymous) = try await access(request, context: context)
        let body = try OFREPRequest(
            try await bytes(of: request), key: key, attributeLimits: delivery.attributeLimits)
        await refreshIfBehind(path, request)
        let flag: FlagEvaluation
        do {
            flag = try await delivery.store.evaluateFlag(
                key, for: body.context, in: path, admittingNewUser: admission(request, context, isAnonymous))
        } catch let problem as FlagProblem {
            throw OFREPError(
                problem == .notFound(key: key) ? .notFound : .badRequest, problem)
        } catch DocumentError.noRevision {
            throw OFREPError(
                .notFound, code: "FLAG_NOT_FOUND", key: key, "\(path) has no revision yet: it has no flags.")
        }
        await exposures.note(flag, user: body.context.user, in: path)
        return Self.response(Self.answer(flag))
    }

    private func evaluateAll(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let (path, isAnonymous) = try await access(request, context: context)
        let query = Query(request)
        let tag = try query.tag()
        let body = try OFREPRequest(
            try await bytes(of: request), key: nil, attributeLimits: delivery.attributeLimits)
        await refreshIfBehind(path, request)
        let evaluations: FlagEvaluations
        do {
            evaluations = try await delivery.store.evaluateFlags(
                for: body.context, tag: tag, in: path, admittingNewUser: admission(request, context, isAnonymous))
        } catch DocumentError.noRevision {
            evaluations = FlagEvaluations(revision: 0, flags: [])
        }
        var changes = Self.changesURI(of: path)
        if try await delivery.currentState(of: path).settings.isPrivate {
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

    /// The environment asked for and whether the request is anonymous; `401`/`403`/`404` as OFREP answers.
    private func access(
        _ request: Request, context: FlagpoleRequestContext
    ) async throws -> (
        EnvironmentPath, isAnonymous: Bool
    ) {
        let presented = request.headers[.authorization] ?? request.headers[.xAPIKey].map { "Bearer \($0)" }
        var identity: KeyIdentity?
        if let presented {
            guard presented.count > 7, presented.prefix(7).lowercased() == "bearer ",
                let found = try await delivery.store.identity(ofKey: String(presented.dropFirst(7)))
            else {
                throw OFREPError(
                    .unauthorized, code: "GENERAL", key: nil,
                    "The key is malformed, unknown or revoked. Send a key of the environment's tenant as Authorization: Bearer KEY or X-API-Key: KEY."
                )
            }
            identity = found
        }
        let path: EnvironmentPath
        if context.parameters.get("tenant") != nil {
            path = try context.environmentPath()
        } else {
            guard let identity, case .tenant(let tenant) = identity.owner, let environment = identity.environment else {
                throw OFREPError(
                    identity == nil ? .unauthorized : .forbidden, code: "GENERAL", key: nil,
                    "At the host's root, OFREP needs a delivery key scoped to one environment (`flagpole key create --role delivery --env ENV`); or set the provider's base URL to http://HOST/t/TENANT/ENV."
                )
            }
            path = EnvironmentPath(tenant: tenant, environment: environment)
        }
        let state = try await delivery.currentState(of: path)
        if state.settings.isPrivate || context.parameters.get("tenant") == nil {
            guard let identity else {
                throw OFREPError(
                    .unauthorized, code: "GENERAL", key: nil,
                    "\(path) is private: send a key of its tenant as Authorization: Bearer KEY or X-API-Key: KEY.")
            }
            // OFREP has no "looks like an unknown environment": a key that is not for it is refused.
            guard identity.reaches(path), identity.permits(.delivery, on: path.tenant) else {
                throw OFREPError(
                    .forbidden, code: "GENERAL", key: nil,
                    "This key is not for \(path): use a key of tenant \(path.tenant) (a delivery key scoped to another environment won't do)."
                )
            }
        }
        return (path, identity == nil)
    }

    /// The limit on new users for an anonymous client, as `?user=` delivery has it.
    private func admission(
        _ request: Request, _ context: FlagpoleRequestContext, _ isAnonymous: Bool
    )
        -> @Sendable () -> Bool
    {
        guard isAnonymous else { return { true } }
        let limiter = delivery.newUsers
        let client = NewUserLimiter.Client(
            peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor],
            trustsProxy: delivery.trustsProxy)
        return { limiter.admit(client) }
    }

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

    /// Runs `work`, answering every failure the way OFREP shapes it.
    private func answering(key: String?, logger: Logger, _ work: () async throws -> Response) async -> Response {
        do {
            return try await work()
        } catch let error as OFREPError {
            return Self.response(to: error)
        } catch FlagRefusal.newUserLimited {
            var error = OFREPError(
                .tooManyRequests, code: "GENERAL", key: key,
                "Too many users new to this environment from one client: try again in a second.")
            error.headers[.retryAfter] = String(Int(max(1, (1 / delivery.newUsers.limit.rate).rounded(.up))))
            return Self.response(to: error)
        } catch let error as TenancyError {
            // The spec's single-flag 404 is a flag not found, which is what a provider makes of any 404.
            return Self.response(
                to: OFREPError(.notFound, code: key == nil ? "GENERAL" : "FLAG_NOT_FOUND", key: key, error.description))
        } catch let error as APIError {
            return Self.response(to: OFREPError(error.status, code: "GENERAL", key: key, error.message))
        } catch let error as StorageError where error.isUnavailable {
            // Nothing was recorded; the provider keeps its defaults until the database is back.
            var error = OFREPError(
                .serviceUnavailable, code: "GENERAL", key: key,
                "The server can't reach its database; nothing was recorded. Try again shortly.")
            error.headers[.retryAfter] = "5"
            return Self.response(to: error)
        } catch StorageError.busy {
            // Another writer held the database past the busy timeout: the client may try again.
            var error = OFREPError(
                .serviceUnavailable, code: "GENERAL", key: key,
                "The database is busy with another write; nothing was recorded. Try again in a second.")
            error.headers[.retryAfter] = "1"
            return Self.response(to: error)
        } catch {
            logger.error("OFREP evaluation failed", metadata: ["error": "\(error)"])
            return Self.response(
                to: OFREPError(
                    .internalServerError, code: "GENERAL", key: nil,
                    "The server failed to evaluate; nothing was recorded. The log has the details."))
        }
    }

    private static func response(to error: OFREPError) -> Response {
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

extension HTTPField.Name {
    /// OFREP's second way to present a key.
    static let xAPIKey = HTTPField.Name("X-API-Key")!
}
