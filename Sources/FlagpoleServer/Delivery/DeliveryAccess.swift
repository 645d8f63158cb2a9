import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird
import NIOCore

// Who may fetch an environment's delivery is decided here, once, for every delivery route and
// the event loop's fast path, as the admin API decides it in `RequestContexts.swift`: a route is
// registered under `DeliveryContext<Need>`, and the need (`DeliveryNeeds`) says who it admits,
// so a delivery protocol declares what it needs and writes no check. `DeliveryAccessMiddleware`
// reads the request once (its key, whichever header carries it; the environment; its state) and
// the route's context admits it or refuses it, in the order its protocol answers.

/// The key a delivery request presents: `Authorization: Bearer KEY`, else OFREP's
/// `X-API-Key: KEY`; for the Bucketeer SDK, `Authorization: KEY`. The only place delivery reads them.
enum DeliveryCredential: Equatable, Sendable {
    case none
    case key(String)
    /// An `Authorization` header that is not `Bearer KEY` (nor, raw, a key).
    case malformed

    /// How a protocol writes its key in `Authorization`.
    enum Scheme: Sendable {
        /// `Bearer KEY`, as HTTP has it.
        case bearer
        /// The key alone, as the Bucketeer SDK sends it; `Bearer KEY` is read too.
        case raw
    }

    init(_ headers: HTTPFields, scheme: Scheme = .bearer) {
        if let header = headers[.authorization] {
            let key: String? =
                switch scheme {
                case .bearer: Self.bearerKey(header)
                case .raw: Self.bearerKey(header) ?? (header.isEmpty ? nil : header)
                }
            self = key.map(Self.key) ?? .malformed
        } else if let key = headers[.xAPIKey] {
            self = .key(key)
        } else {
            self = .none
        }
    }

    /// The key as a refusal's count shows it: its listing prefix (`fp_1a2b3c4d`), never more.
    var shownPrefix: String {
        switch self {
        case .none: RefusedBatchKey.shownPrefix(of: nil)
        case .key(let key): RefusedBatchKey.shownPrefix(of: key)
        case .malformed: RefusedBatchKey.otherKey
        }
    }

    /// The key of an `Authorization: Bearer KEY` header (the scheme in any case); `nil` for
    /// anything else. The admin API reads its keys with it too.
    static func bearerKey(_ header: String) -> String? {
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }
}

/// Who asks, once their credential is checked.
enum DeliveryCaller: Sendable {
    case anonymous
    /// A malformed, unknown or revoked key.
    case unknownKey
    /// A key the store knows, of whichever tenant and environment.
    case key(KeyIdentity)
    /// A change stream's `?token=` (see `StreamTokens`): whether it opens this environment's.
    case streamToken(isValid: Bool)
}

/// What `DeliveryAccessMiddleware` read of a request, for the route's need to judge: each part
/// with the error that reading it raised, so the need decides which refusal comes first.
struct DeliveryLookup: Sendable {
    let caller: Result<DeliveryCaller, any Error>
    /// The environment of the route's `:tenant/:env`; at the host's root, `nil`: OFREP's
    /// delivery key names it.
    let routePath: Result<EnvironmentPath, any Error>?
    /// The request's path, for refusals that must not say more than the client asked.
    let requestPath: String
    let delivery: DeliveryRoutes

    /// The environment asked for and its current state.
    func state(of path: EnvironmentPath) async throws -> DeliveryState {
        try await delivery.currentState(of: path)
    }
}

/// A delivery request let through: the environment, its state, and who asks.
struct DeliveryAccess: Sendable {
    let path: EnvironmentPath
    let state: DeliveryState
    let caller: DeliveryCaller

    var isPrivate: Bool { state.settings.isPrivate }

    /// The request's key when it is one of this environment's: of its tenant, of any role, and
    /// not scoped to another environment.
    var keyOfEnvironment: KeyIdentity? {
        guard case .key(let key) = caller, key.reaches(path), key.permits(.delivery, on: path.tenant) else {
            return nil
        }
        return key
    }

    /// Whether the limit on users new to the store applies: to every caller without a key of
    /// this environment, whatever else it sends.
    var isLimited: Bool { keyOfEnvironment == nil }
}

/// What a delivery route admits: a protocol's rules, and the shape of its refusals.
protocol DeliveryNeed: Sendable {
    /// How the protocol's clients present a key.
    static var scheme: DeliveryCredential.Scheme { get }
    /// The access `lookup` gives, or the refusal its protocol answers.
    static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess
}

extension DeliveryNeed {
    static var scheme: DeliveryCredential.Scheme { .bearer }
}

/// The delivery routes' needs.
enum DeliveryNeeds {
    /// features.json and configs.json: anyone in a public environment; a key of the environment
    /// in a private one. Whatever is refused for the path's sake is the one `404` that names no
    /// environment, so another tenant's private environment looks like none at all.
    enum Document: DeliveryNeed {
        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            do {
                let path = try lookup.requireRoutePath()
                let state = try await lookup.state(of: path)
                guard state.settings.isPrivate else {
                    return DeliveryAccess(path: path, state: state, caller: lookup.callerForPublicEnvironment)
                }
                let caller = try lookup.caller.get()
                try caller.authorize(on: path)
                return DeliveryAccess(path: path, state: state, caller: caller)
            } catch TenancyError.tenantNotFound, TenancyError.environmentNotFound {
                throw APIError(
                    .notFound, code: "not_found",
                    "There is no document at \(lookup.requestPath). Check the tenant and environment names.")
            }
        }
    }

    /// The change stream: as a document, and in a private environment a `?token=` a bulk
    /// evaluation advertised opens it too.
    enum Stream: DeliveryNeed {
        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            let path = try lookup.requireRoutePath()
            let state: DeliveryState
            do {
                state = try await lookup.state(of: path)
            } catch TenancyError.tenantNotFound, TenancyError.environmentNotFound {
                throw APIError(.notFound, code: "not_found", "There is no environment at \(lookup.requestPath).")
            }
            guard state.settings.isPrivate else {
                return DeliveryAccess(path: path, state: state, caller: lookup.callerForPublicEnvironment)
            }
            let caller = try lookup.caller.get()
            if case .streamToken(let isValid) = caller {
                guard isValid else {
                    throw APIError(
                        .unauthorized, code: "unauthenticated",
                        "The stream's token has expired or is not this environment's: evaluate the flags again (POST …/ofrep/v1/evaluate/flags) for a new URL."
                    )
                }
            } else {
                try caller.authorize(on: path)
            }
            return DeliveryAccess(path: path, state: state, caller: caller)
        }
    }

    /// Events: writes, so always a key of the environment, public or not (a delivery key is
    /// enough); the key is checked before the environment.
    enum Events: DeliveryNeed {
        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            let path = try lookup.requireRoutePath()
            let caller = try lookup.caller.get()
            try caller.authorize(on: path)
            return DeliveryAccess(path: path, state: try await lookup.state(of: path), caller: caller)
        }
    }

    /// OFREP's evaluations: any key presented must be valid; a private environment, and the host
    /// root, need a key of the environment (at the root, a delivery key scoped to one names it).
    /// OFREP has no "looks like an unknown environment": a key that is not for it is `403`.
    enum Evaluation: DeliveryNeed {
        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            let caller = try lookup.caller.get()
            let key: KeyIdentity?
            switch caller {
            case .unknownKey:
                throw OFREPError(
                    .unauthorized, code: "GENERAL", key: nil,
                    "The key is malformed, unknown or revoked. Send a key of the environment's tenant as Authorization: Bearer KEY or X-API-Key: KEY."
                )
            case .key(let identity): key = identity
            case .anonymous, .streamToken: key = nil
            }
            let path: EnvironmentPath
            if let routePath = lookup.routePath {
                path = try routePath.get()
            } else {
                guard let key, case .tenant(let tenant) = key.owner, let environment = key.environment else {
                    throw OFREPError(
                        key == nil ? .unauthorized : .forbidden, code: "GENERAL", key: nil,
                        "At the host's root, OFREP needs a delivery key scoped to one environment (`flagpole key create --role delivery --env ENV`); or set the provider's base URL to http://HOST/t/TENANT/ENV."
                    )
                }
                path = EnvironmentPath(tenant: tenant, environment: environment)
            }
            let access = DeliveryAccess(path: path, state: try await lookup.state(of: path), caller: caller)
            if access.isPrivate || lookup.routePath == nil {
                guard key != nil else {
                    throw OFREPError(
                        .unauthorized, code: "GENERAL", key: nil,
                        "\(path) is private: send a key of its tenant as Authorization: Bearer KEY or X-API-Key: KEY.")
                }
                guard access.keyOfEnvironment != nil else {
                    throw OFREPError(
                        .forbidden, code: "GENERAL", key: nil,
                        "This key is not for \(path): use a key of tenant \(path.tenant) (a delivery key scoped to another environment won't do)."
                    )
                }
            }
            return access
        }
    }

    /// The Bucketeer SDK's `get_evaluations`: its key comes raw, and it cannot send none, so in a
    /// public environment a key that is not one of the environment's counts as none (the caller
    /// is anonymous, and limited). A private environment, and the host root (where a delivery
    /// key scoped to one environment names it), need a key of the environment: `401` for no such
    /// key, `403` for another's. Refusals are the SDK's error shape (`BucketeerError`).
    enum BucketeerEvaluations: DeliveryNeed {
        static var scheme: DeliveryCredential.Scheme { .raw }

        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            try await bucketeerAccess(lookup, needsKey: false)
        }
    }

    /// Its `register_events`: events are writes, so a key of the environment always, as for
    /// `POST …/events`.
    enum BucketeerEvents: DeliveryNeed {
        static var scheme: DeliveryCredential.Scheme { .raw }

        static func admit(_ lookup: DeliveryLookup) async throws -> DeliveryAccess {
            try await bucketeerAccess(lookup, needsKey: true)
        }
    }

    private static func bucketeerAccess(_ lookup: DeliveryLookup, needsKey: Bool) async throws -> DeliveryAccess {
        let caller = try lookup.caller.get()
        let key: KeyIdentity? = if case .key(let identity) = caller { identity } else { nil }
        let path: EnvironmentPath
        if let routePath = lookup.routePath {
            path = try routePath.get()
        } else {
            guard let key, case .tenant(let tenant) = key.owner, let environment = key.environment else {
                throw BucketeerError(
                    key == nil ? .unauthorized : .forbidden,
                    "At the host's root, set the SDK's API key to a delivery key scoped to one environment (`flagpole key create --role delivery --env ENV`); or set its apiEndpoint to https://HOST/t/TENANT/ENV."
                )
            }
            path = EnvironmentPath(tenant: tenant, environment: environment)
        }
        let state = try await lookup.state(of: path)
        let access = DeliveryAccess(path: path, state: state, caller: caller)
        if needsKey || access.isPrivate || lookup.routePath == nil {
            guard key != nil else {
                throw BucketeerError(
                    .unauthorized,
                    "\(needsKey ? "Events need" : "\(path) is private: it needs") a key of the environment as the SDK's API key (`flagpole key create --role delivery --env \(path.environment)`)."
                )
            }
            guard access.keyOfEnvironment != nil else {
                throw BucketeerError(
                    .forbidden,
                    "This key is not for \(path): use a key of tenant \(path.tenant) that is not scoped to another environment."
                )
            }
        }
        return access
    }
}

extension DeliveryLookup {
    /// The route's environment; every route but OFREP's at the host root has one.
    func requireRoutePath() throws -> EnvironmentPath {
        guard let routePath else { throw ContextError.notAuthenticated("a delivery route without :tenant/:env") }
        return try routePath.get()
    }

    /// Who asks a public environment, which needs no key: a key the store could not look up
    /// (the database is away; the document comes from the cache) counts as none of its.
    var callerForPublicEnvironment: DeliveryCaller {
        (try? caller.get()) ?? .unknownKey
    }

}

extension DeliveryCaller {
    /// Refuses anyone but a key of the environment at `path`, in the order that leaks nothing:
    /// no key or an unknown one is `401`; another tenant's key, or one scoped to another
    /// environment, gets the `404` of an unknown one.
    func authorize(on path: EnvironmentPath) throws {
        switch self {
        case .anonymous, .streamToken: throw APIError.unauthenticated
        case .unknownKey: throw APIError.unknownKey
        case .key(let key): try key.authorize(.delivery, on: path)
        }
    }
}

/// Reads a delivery request once (its credential, looked up in the store; the route's
/// environment; with `tokens`, a change stream's `?token=`) and lets it through only as `Need`
/// admits it, for the route's `DeliveryContext<Need>`.
struct DeliveryAccessMiddleware<Need: DeliveryNeed>: RouterMiddleware {
    typealias Context = FlagpoleRequestContext
    let delivery: DeliveryRoutes
    var tokens: StreamTokens? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let routePath: Result<EnvironmentPath, any Error>? =
            context.parameters.get("tenant") == nil ? nil : Result { try context.environmentPath() }
        let lookup = DeliveryLookup(
            caller: await caller(of: request, routePath: routePath), routePath: routePath,
            requestPath: request.uri.path, delivery: delivery)
        context.deliveryAccess = (try await Need.admit(lookup), ObjectIdentifier(Need.self))
        return try await next(request, context)
    }

    private func caller(
        of request: Request, routePath: Result<EnvironmentPath, any Error>?
    ) async -> Result<DeliveryCaller, any Error> {
        do {
            switch DeliveryCredential(request.headers, scheme: Need.scheme) {
            case .malformed: return .success(.unknownKey)
            case .key(let secret):
                return .success(
                    try await delivery.store.access.identity(ofKey: secret).map(DeliveryCaller.key) ?? .unknownKey)
            case .none:
                if let tokens, let token = Query(request).string("token"), case .success(let path)? = routePath {
                    return .success(.streamToken(isValid: try await tokens.isValid(token, for: path)))
                }
                return .success(.anonymous)
            }
        } catch {
            return .failure(error)
        }
    }
}

/// A delivery request its route's `Need` admitted: the environment, its current state, who asks,
/// and the peer (the limit on new users keys by it).
struct DeliveryContext<Need: DeliveryNeed>: ChildRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    let access: DeliveryAccess

    var path: EnvironmentPath { access.path }
    var state: DeliveryState { access.state }

    init(context: FlagpoleRequestContext) throws {
        // Only what this need admitted: a route registered without its middleware fails closed.
        guard let (access, need) = context.deliveryAccess, need == ObjectIdentifier(Need.self) else {
            throw ContextError.notAuthenticated(context.endpointPath ?? "?")
        }
        coreContext = context.coreContext
        remoteAddress = context.remoteAddress
        self.access = access
    }
}

extension RouterGroup where Context == FlagpoleRequestContext {
    /// The routes of a delivery protocol that needs `need`: each request is admitted by it once,
    /// and reaches its handler with a `DeliveryContext<Need>`.
    func delivery<Need: DeliveryNeed>(
        _ need: Need.Type, of delivery: DeliveryRoutes, tokens: StreamTokens? = nil
    ) -> RouterGroup<DeliveryContext<Need>> {
        add(middleware: DeliveryAccessMiddleware<Need>(delivery: delivery, tokens: tokens))
            .group(context: DeliveryContext<Need>.self)
    }
}
