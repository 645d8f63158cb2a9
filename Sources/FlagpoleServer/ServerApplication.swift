import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import FlagpoleWebhooks
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// How `flagpole serve` listens and answers.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The largest request body accepted, in bytes; larger ones get `413`.
    public var maxBodySize: Int
    /// `Cache-Control` of shared documents, unless their environment sets its own.
    public var defaultCacheControl: String
    /// How often the server reads what other processes changed in the database file.
    public var pollInterval: Duration
    /// The level of the per-request access log.
    public var accessLogLevel: Logger.Level
    /// Users new to the store that one anonymous client (an IPv4 address, an IPv6 /64) may have
    /// recorded through `?user=`: this many a second on average…
    public var newUsersPerSecond: Double
    /// …and this many at once.
    public var newUserBurst: Int
    /// Whether the client is the last address of `X-Forwarded-For` (a proxy in front) rather
    /// than the connection's peer.
    public var trustsProxy: Bool

    public static let standardCacheControl = CacheControl.standard
    /// `serve --publish-to`: every new revision to a bucket.
    public var publishing: ServerPublishing?
    /// How many attributes, and bytes of them, a user's request may carry (`serve --attribute-keys`, `--attribute-bytes`).
    public var attributeLimits: UserAttributes.Limits
    /// Which events are accepted and how long raw events are kept (`serve --event-max-age-days`,
    /// `--event-retention-days`).
    public var eventPolicy = EventPolicy.standard
    /// scrypt's cost for the passwords members set: OWASP's always, in the binary. The
    /// in-process tests lower it to set passwords quickly (a hash records its cost, so sign-ins
    /// verify either).
    public var passwordCost = PasswordCost.owasp
    /// How often the server does the scheduled work that is due (ramp steps); `nil`: never.
    public var tickInterval: Duration? = .seconds(15)
    /// The time that scheduled work goes by (`FLAGPOLE_CLOCK_FILE` in tests and rehearsals).
    public var clock = WallClock.system
    /// Whether webhooks may reach loopback, private and link-local addresses (`serve --allow-private-webhooks`).
    public var allowsPrivateWebhooks = false
    /// Where webhooks may be sent: checked alike when one is made (API, dashboard) and at every delivery.
    var webhookAddresses: WebhookAddresses { WebhookAddresses(allowsPrivate: allowsPrivateWebhooks) }
    /// The address people reach the server at (`serve --public-url`): webhook events link under it.
    public var publicURL: String?
    /// How long delivered and given-up webhook deliveries are kept (`serve --keep-deliveries-days`).
    public var deliveriesKept = Changes.deliveriesKept
    /// How often the fetches answered and the event batches refused are added to the store's
    /// counts: `serve`'s tick interval, at most 5 s.
    public var countsInterval: Duration = .seconds(5)
    /// How often a change stream with nothing to say sends a comment, so that proxies keep it open.
    public var changeStreamHeartbeat: Duration = .seconds(15)

    public init(
        host: String = "127.0.0.1", port: Int = 8080, maxBodySize: Int = 5 * 1024 * 1024,
        defaultCacheControl: String = standardCacheControl, pollInterval: Duration = .milliseconds(250),
        accessLogLevel: Logger.Level = .info, newUsersPerSecond: Double = NewUserLimiter.Limit.standard.rate,
        newUserBurst: Int = NewUserLimiter.Limit.standard.burst, trustsProxy: Bool = false,
        publishing: ServerPublishing? = nil, attributeLimits: UserAttributes.Limits = .standard
    ) {
        self.publishing = publishing
        self.attributeLimits = attributeLimits
        self.host = host
        self.port = port
        self.maxBodySize = maxBodySize
        self.defaultCacheControl = defaultCacheControl
        self.pollInterval = pollInterval
        self.accessLogLevel = accessLogLevel
        self.newUsersPerSecond = newUsersPerSecond
        self.newUserBurst = newUserBurst
        self.trustsProxy = trustsProxy
    }
}

/// The HTTP server: delivery, the admin API and operations routes on one Hummingbird router,
/// every route calling the same store operations as the command line.
public enum ServerApplication {
    /// The router alone, for tests that drive it without a socket.
    public static func router(
        store: FeatureStore, configuration: ServerConfiguration, registry: PrometheusCollectorRegistry
    ) -> Router<FlagpoleRequestContext> {
        router(
            delivery: delivery(store: store, configuration: configuration, registry: registry),
            configuration: configuration, registry: registry)
    }

    /// The application: the router, and the poller that notices other processes' writes.
    ///
    /// `onServerRunning` receives the port actually bound (useful with port 0).
    public static func make(
        store: FeatureStore, configuration: ServerConfiguration, registry: PrometheusCollectorRegistry, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        // One delivery, with one cache and one limit on new users, for the router and the fast path.
        let delivery = delivery(store: store, configuration: configuration, registry: registry)
        let poller = DeliveryPoller(
            store: store, cache: delivery.cache, interval: configuration.pollInterval, metrics: delivery.metrics,
            logger: logger)
        return Application(
            router: router(delivery: delivery, configuration: configuration, registry: registry),
            server: .http1(configuration: .init(additionalChannelHandlers: [DeliveryFastPath(delivery: delivery)])),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "flagpole"),
            services: [
                poller, ChangeBroadcasterService(broadcaster: delivery.cache.changes, store: store, logger: logger),
                CountsService(
                    fetches: delivery.fetches, refusedBatches: delivery.refusedBatches, store: store,
                    interval: configuration.countsInterval,
                    clock: configuration.clock, logger: logger),
            ]
                + (configuration.publishing.map {
                    [
                        PublishService(
                            publishing: $0, store: store, changes: delivery.cache.changes.watch(), logger: logger)
                    ]
                } ?? [])
                + (configuration.tickInterval.map {
                    [
                        TickService(
                            store: store, interval: $0, deliveriesKept: configuration.deliveriesKept,
                            clock: configuration.clock, logger: logger),
                        WebhookService(
                            store: store,
                            sender: WebhookSender(
                                addresses: configuration.webhookAddresses, publicURL: configuration.publicURL),
                            interval: $0, clock: configuration.clock, logger: logger),
                    ]
                } ?? []),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    static func delivery(
        store: FeatureStore, configuration: ServerConfiguration, registry: PrometheusCollectorRegistry
    ) -> DeliveryRoutes {
        let cache = DeliveryCache(changes: ChangeBroadcaster(heartbeat: configuration.changeStreamHeartbeat))
        // What the server delivers follows each of its writes, before the write is answered.
        store.observeChanges { path, store in await cache.refresh(path, from: store) }
        return DeliveryRoutes(
            store: store, cache: cache,
            defaultCacheControl: configuration.defaultCacheControl,
            newUsers: NewUserLimiter(
                limit: .init(rate: configuration.newUsersPerSecond, burst: configuration.newUserBurst)),
            trustsProxy: configuration.trustsProxy, attributeLimits: configuration.attributeLimits,
            metrics: ServerMetrics(registry: registry))
    }

    static func router(
        delivery: DeliveryRoutes, configuration: ServerConfiguration, registry: PrometheusCollectorRegistry
    ) -> Router<FlagpoleRequestContext> {
        let store = delivery.store
        let cache = delivery.cache
        let router = Router(context: FlagpoleRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Middlewares first: the router wraps each route as it is added, and unmatched paths too.
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: AccessLogMiddleware(level: configuration.accessLogLevel))
        // Before the error middleware: a browser's preflight is answered, not refused as a method.
        router.add(middleware: OpenFeatureCORS())
        let allowedMethods = AllowedMethods()
        router.add(middleware: ErrorMiddleware(allowedMethods: allowedMethods))
        delivery.register(on: router)
        let tokens = StreamTokens(store: store)
        OFREPRoutes(
            delivery: delivery, tokens: tokens,
            exposures: ExposureRecorder(store: store, logger: Logger(label: "flagpole.exposures"))
        ).register(on: router)
        EventRoutes(delivery: delivery, policy: configuration.eventPolicy, clock: configuration.clock).register(
            on: router)
        BucketeerRoutes(delivery: delivery, policy: configuration.eventPolicy).register(on: router)
        ChangeStreamRoutes(delivery: delivery, tokens: tokens, broadcaster: cache.changes).register(on: router)
        AdminAPI(
            store: store, maxBodySize: configuration.maxBodySize, clock: configuration.clock,
            webhookAddresses: configuration.webhookAddresses, metrics: delivery.metrics
        ).register(on: router)
        OperationsRoutes(store: store, registry: registry).register(on: router)
        TriggerCallRoute(store: store, clock: configuration.clock, trustsProxy: configuration.trustsProxy).register(
            on: router)
        Dashboard(
            store: store, templates: DashboardTemplates(), maxBodySize: configuration.maxBodySize,
            defaultCacheControl: configuration.defaultCacheControl, trustsProxy: configuration.trustsProxy,
            passwordCost: configuration.passwordCost, clock: configuration.clock,
            webhookAddresses: configuration.webhookAddresses
        ).register(on: router)
        allowedMethods.record(router)
        return router
    }
}
