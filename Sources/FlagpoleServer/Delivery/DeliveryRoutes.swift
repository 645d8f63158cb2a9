import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore

/// `GET /t/{tenant}/{env}/features.json`: the document apps and CDNs fetch, the same bytes as
/// `flagpole export`, with a strong ETag, `304` on `If-None-Match`, gzip when accepted and
/// `Cache-Control`; `?revision=N` for a past revision (immutable with `&sha256=` its hash), `?user=ID`
/// for the user's pinned document.
struct DeliveryRoutes {
    let store: FeatureStore
    let cache: DeliveryCache
    let defaultCacheControl: String
    /// Limits the users new to the store that each anonymous client may have recorded.
    let newUsers: NewUserLimiter
    /// Whether the client's address is the last of `X-Forwarded-For` rather than the peer's.
    let trustsProxy: Bool
    /// How many attributes, and bytes of them, a user's request may carry.
    var attributeLimits = UserAttributes.Limits.standard
    /// The fetches answered, by environment, revision and client (`CountsService` writes them).
    let fetches = CountsInMemory<FetchKey>()
    /// The `register_events` batches refused whole, by environment, cause and key: a few
    /// thousand keys at most between two writes (`CountsService` writes them).
    let refusedBatches = CountsInMemory<RefusedBatchKey>(maximumKeys: 4096)
    /// The application's counters, shared with the event loop's fast path.
    let metrics: ServerMetrics

    /// A pinned document is one user's: no shared cache may keep it.
    static let pinnedCacheControl = "private, no-store"

    /// Public, but a private environment's key is checked before the handler
    /// (`DeliveryNeeds.Document`), which receives the environment and its current state.
    func register(on router: Router<FlagpoleRequestContext>) {
        router.group().delivery(DeliveryNeeds.Document.self, of: self)
            .get("/t/:tenant/:env/features.json", use: deliver)
            .get("/t/:tenant/:env/configs.json", use: deliverConfigs)
    }

    /// `GET /t/{tenant}/{env}/configs.json`: the configs dictionary of the current revision, by
    /// the same rules as features.json (ETag, `304`, gzip, `Cache-Control`, a private environment's
    /// key); `?user=ID` for the user's own, recorded in the same read as a pinned features.json; `?tag=T` for
    /// the configs tagged `T` only; `?release=R` for those release `R` of a SwiftFeatureConfigs app
    /// declares only (`flagpole config import --release`), the keys its `persist()` can take.
    @Sendable func deliverConfigs(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Document>
    ) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let tag = try query.tag()
        let release = query.string("release")
        if let release, !ConfigsDecoder.isValidRelease(release) {
            throw APIError.invalid("Query parameter \"release\" must be a release such as 5.2: 1 to 64 characters.")
        }
        if let unknown = query.parameters.first(where: {
            !["user", "tag", "release"].contains(String($0.key)) && !$0.key.hasPrefix(UserAttributes.queryPrefix)
        }) {
            throw APIError.invalid(
                "configs.json takes ?user=, ?tag=, ?release= and ?attr.NAME= only, not ?\(unknown.key)=: it is always of the current revision."
            )
        }
        let attributes = try query.attributes(limits: attributeLimits)
        if let user = try query.user() {
            let configs = try await store.assignments.userConfigs(
                for: user, in: path, tag: tag, release: release, attributes: attributes,
                admittingNewUser: admission(request, context))
            fetches.count(path, revision: configs.revision, .configs)
            let (head, body) = pinnedAnswer(
                revision: configs.revision, bytes: configs.bytes, isRecorded: configs.isRecorded, to: request.headers)
            return Response(
                status: head.status, headers: head.headerFields,
                body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
        }
        if attributes != nil {
            throw APIError.invalid("?attr.NAME= describes a user: add ?user=ID, or drop the attributes.")
        }
        let cacheControl = Self.currentCacheControl(context.state, default: defaultCacheControl)
        if tag == nil, release == nil, let revision = context.state.revision,
            let document = cache.document(DeliveryCache.Key(path: path, revision: revision, kind: .configs))
        {
            metrics.cacheHits.increment()
            fetches.count(path, revision: revision, .shared)
            return Self.response(document, to: request, cacheControl: cacheControl)
        }
        metrics.cacheMisses.increment()
        let configs = try await store.catalog.sharedConfigs(in: path, tag: tag, release: release)
        let revision = configs.revision
        fetches.count(path, revision: revision, .shared)
        let document = RenderedDocument(revision: revision, bytes: configs.bytes)
        if tag == nil, release == nil {
            cache.insert(
                document, for: DeliveryCache.Key(path: path, revision: revision, kind: .configs),
                generation: context.state.generation)
        }
        return Self.response(document, to: request, cacheControl: cacheControl)
    }

    @Sendable func deliver(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Document>
    ) async throws -> Response {
        let path = context.path
        let state = context.state
        let query = Query(request)
        let requested = try query.int("revision")
        let contentHash = try query.sha256()
        let attributes = try query.attributes(limits: attributeLimits)
        if let user = try query.user() {
            guard requested == nil, contentHash == nil else {
                throw APIError.invalid(
                    "A pinned document (?user=) is always of the current revision; drop ?revision= and ?sha256=.")
            }
            // A request with a key of the environment is the team's own: not limited.
            let client = context.access.isLimited ? client(of: request, context: context) : nil
            return try await pinned(for: user, in: path, attributes: attributes, request, anonymousClient: client)
        }
        if attributes != nil {
            throw APIError.invalid("?attr.NAME= describes a user: add ?user=ID, or drop the attributes.")
        }
        guard let revision = requested ?? state.revision else { throw DocumentError.noRevision(path) }
        let document = try await rendered(revision, of: path, generation: state.generation)
        fetches.count(path, revision: revision, .shared)
        var cacheControl = Self.currentCacheControl(state, default: defaultCacheControl)
        if let contentHash {
            guard requested != nil else {
                throw APIError.invalid(
                    "?sha256= names the document of one revision: add ?revision=N, as Content-Location gives it.")
            }
            // A restore can put other bytes under a revision number, so only a URL that names the
            // bytes may be kept for good.
            guard document.sha256.hasPrefix(contentHash) else {
                throw APIError(
                    .notFound, code: "not_found",
                    """
                    Revision \(revision) of \(path) no longer holds the document with SHA-256 \(contentHash): the database \
                    was restored from a backup since. Fetch ?revision=\(revision) for what it holds now.
                    """)
            }
            // A shared cache must never keep a private document, however old.
            cacheControl = CacheControl.revision(state.settings)
        }
        var response = Self.response(document, to: request, cacheControl: cacheControl)
        if requested != nil {
            response.headers[.contentLocation] = "\(request.uri.path)?revision=\(revision)&sha256=\(document.sha256)"
        }
        return response
    }

    /// The environment's current revision and settings, from the cache when it has them.
    func currentState(of path: EnvironmentPath) async throws -> DeliveryState {
        if let state = cache.current(path) { return state }
        let state = try await store.access.deliveryState(of: path)
        cache.setCurrent(state, of: path)
        return state
    }

    private func rendered(_ revision: Int, of path: EnvironmentPath, generation: Int64) async throws -> RenderedDocument
    {
        let key = DeliveryCache.Key(path: path, revision: revision)
        if let document = cache.document(key) {
            metrics.cacheHits.increment()
            return document
        }
        metrics.cacheMisses.increment()
        let document = RenderedDocument(
            revision: revision, bytes: try await store.catalog.revision(revision, of: path).document)
        cache.insert(document, for: key, generation: generation)
        return document
    }

    /// The user's pinned document; a user new to the store is recorded unless `anonymousClient`
    /// is over its limit, and then served the same groups without a record (`Flagpole-Recorded: false`).
    private func pinned(
        for user: UserID, in path: EnvironmentPath, attributes: UserAttributes?, _ request: Request,
        anonymousClient client: NewUserLimiter.Client?
    ) async throws -> Response {
        let limiter = newUsers
        let pinned: PinnedDocument
        do {
            pinned = try await store.assignments.pinnedDocument(for: user, in: path, attributes: attributes) {
                client.map { limiter.admit($0) } ?? true
            }
        } catch let error as StorageError where error.isUnavailable {
            // Without the database the user's groups are unknown: the shared document, marked
            // unrecorded, rather than a group the store might not honour once it is back.
            guard let state = cache.current(path), let revision = state.revision,
                let shared = cache.document(DeliveryCache.Key(path: path, revision: revision))
            else { throw error }
            fetches.count(path, revision: revision, .pinned)
            let (head, body) = pinnedAnswer(
                revision: revision, bytes: Array(shared.body.readableBytesView), isRecorded: false, to: request.headers)
            return Response(
                status: head.status, headers: head.headerFields,
                body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
        }
        fetches.count(path, revision: pinned.revision, .pinned)
        let (head, body) = pinnedAnswer(pinned, to: request.headers)
        return Response(
            status: head.status, headers: head.headerFields,
            body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }

    /// The answer to a GET of a user's pinned document, as `answer` gives it for a shared one:
    /// private, with `Flagpole-Recorded`, compressed only for a client that takes gzip.
    func pinnedAnswer(_ pinned: PinnedDocument, to requestHeaders: HTTPFields) -> (HTTPResponse, ByteBuffer?) {
        pinnedAnswer(revision: pinned.revision, bytes: pinned.bytes, isRecorded: pinned.isRecorded, to: requestHeaders)
    }

    /// The answer to a GET of one user's document (features.json or configs.json).
    func pinnedAnswer(
        revision: Int, bytes: [UInt8], isRecorded: Bool, to requestHeaders: HTTPFields
    ) -> (HTTPResponse, ByteBuffer?) {
        if !isRecorded { metrics.unrecordedNewUsers.increment() }
        let gzip = requestHeaders[.acceptEncoding].map(Self.acceptsGzip) ?? false
        let document = RenderedDocument(revision: revision, bytes: bytes, includesGzip: gzip)
        var (head, body) = Self.answer(document, to: requestHeaders, cacheControl: Self.pinnedCacheControl)
        head.headerFields[.recorded] = isRecorded ? "true" : "false"
        return (head, body)
    }

    /// Whether a user new to the store may be recorded for this request: always with a key of
    /// the environment; otherwise as the limit on new users allows the client.
    func admission<Need>(_ request: Request, _ context: DeliveryContext<Need>) -> @Sendable () -> Bool {
        guard context.access.isLimited else { return { true } }
        let limiter = newUsers
        let client = client(of: request, context: context)
        return { limiter.admit(client) }
    }

    /// Who is asking, for the limit on new users: the peer, or with `--trust-proxy` the address
    /// the proxy in front named.
    func client(of request: Request, context: some RemoteAddressRequestContext) -> NewUserLimiter.Client {
        NewUserLimiter.Client(
            peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustsProxy: trustsProxy)
    }

    static func response(_ document: RenderedDocument, to request: Request, cacheControl: String) -> Response {
        let (head, body) = answer(document, to: request.headers, cacheControl: cacheControl)
        return Response(
            status: head.status, headers: head.headerFields,
            body: body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }

    /// The answer to a GET of `document` with `requestHeaders`: a 304 head alone, or a 200 head
    /// and the body in the encoding asked for. Shared by the router and `DeliveryFastPath`.
    static func answer(
        _ document: RenderedDocument, to requestHeaders: HTTPFields, cacheControl: String
    ) -> (HTTPResponse, ByteBuffer?) {
        let gzipBody = requestHeaders[.acceptEncoding].map(acceptsGzip) ?? false ? document.gzipBody : nil
        let gzip = gzipBody != nil
        var headers: HTTPFields = [
            .eTag: gzip ? document.gzipETag : document.etag,
            .cacheControl: cacheControl,
            .vary: "Accept-Encoding",
            .revision: String(document.revision),
        ]
        if let tags = requestHeaders[.ifNoneMatch], document.matches(tags) {
            return (HTTPResponse(status: .notModified, headerFields: headers), nil)
        }
        headers[.contentType] = "application/json"
        if gzip { headers[.contentEncoding] = "gzip" }
        return (HTTPResponse(status: .ok, headerFields: headers), gzipBody ?? document.body)
    }

    /// `Cache-Control` of the current revision of an environment in `state`.
    static func currentCacheControl(_ state: DeliveryState, default defaultCacheControl: String) -> String {
        CacheControl.current(state.settings, default: defaultCacheControl)
    }

    /// Whether an `Accept-Encoding` value admits gzip (`gzip`, or `*`, with a non-zero q).
    static func acceptsGzip(_ value: String) -> Bool {
        return value.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first, coding == "gzip" || coding == "*" else { return false }
            return !parts.dropFirst().contains { $0 == "q=0" || $0 == "q=0.0" || $0 == "q=0.00" || $0 == "q=0.000" }
        }
    }
}

extension HTTPField.Name {
    /// The revision a document renders, for operators and tests.
    static let revision = HTTPField.Name("Flagpole-Revision")!
    /// On a user's pinned document: whether the store has the user's groups on record.
    static let recorded = HTTPField.Name("Flagpole-Recorded")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
