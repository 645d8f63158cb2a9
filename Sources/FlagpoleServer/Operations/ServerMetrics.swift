import FlagpoleStore
import Metrics
import Prometheus

/// The application's own counters, made in the registry it was given, which its `/metrics`
/// shows: two applications in one process (a test's, beside another's) count apart.
///
/// `flagpole serve` makes one registry and bootstraps swift-metrics with it too, so Hummingbird's
/// request metrics (`MetricsMiddleware`, which uses the process's factory) land beside these.
struct ServerMetrics: Sendable {
    let factory: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry) {
        factory = PrometheusMetricsFactory(registry: registry)
        imports = Metrics.Counter(label: "flagpole_imports_total", factory: factory)
        assignmentsRecorded = Metrics.Counter(label: "flagpole_assignments_recorded_total", factory: factory)
        cacheHits = Metrics.Counter(label: "flagpole_delivery_cache_hits_total", factory: factory)
        cacheMisses = Metrics.Counter(label: "flagpole_delivery_cache_misses_total", factory: factory)
        unrecordedNewUsers = Metrics.Counter(label: "flagpole_delivery_unrecorded_new_users_total", factory: factory)
        userDocumentsOnEventLoop = Metrics.Counter(
            label: "flagpole_delivery_user_documents_on_event_loop_total", factory: factory)
        evaluationsOnEventLoop = Metrics.Counter(
            label: "flagpole_delivery_evaluations_on_event_loop_total", factory: factory)
        changeSteps = Metrics.Counter(label: "flagpole_change_sequence_steps_total", factory: factory)
        changedUsers = Metrics.Counter(label: "flagpole_change_sequence_users_total", factory: factory)
        wholeEnvironmentChanges = Metrics.Counter(
            label: "flagpole_change_sequence_whole_environments_total", factory: factory)
        bucketeerUnrecordedNewUsers = Metrics.Counter(
            label: "flagpole_bucketeer_unrecorded_new_users_total", factory: factory)
        bucketeerAttributesOverLimit = Metrics.Counter(
            label: "flagpole_bucketeer_attributes_over_limit_total", factory: factory)
        bucketeerClientDefaults = Metrics.Counter(
            label: "flagpole_bucketeer_client_default_evaluations_total", factory: factory)
        bucketeerEventsWithoutID = Metrics.Counter(
            label: "flagpole_bucketeer_events_without_id_total", factory: factory)
        let factory = factory
        bucketeerEventBatchesRefused = Dictionary(
            uniqueKeysWithValues: EventBatchRefusal.allCases.map { cause in
                (
                    cause,
                    Metrics.Counter(
                        label: "flagpole_bucketeer_event_batches_refused_total",
                        dimensions: [("cause", cause.rawValue)], factory: factory)
                )
            })
        fastPathRequests = Dictionary(
            uniqueKeysWithValues: DeliveryFastPath.Route.allCases.map { route in
                let method = route == .features || route == .configs ? "GET" : "POST"
                return (
                    route,
                    Dictionary(
                        uniqueKeysWithValues: [200, 304].map { status in
                            (
                                status,
                                Metrics.Counter(
                                    label: "hb.requests",
                                    dimensions: [
                                        ("http.route", route.rawValue), ("http.request.method", method),
                                        ("http.response.status_code", String(status)),
                                    ], factory: factory)
                            )
                        })
                )
            })
    }

    /// Imports through the API that made a revision.
    let imports: Metrics.Counter
    /// Users recorded through `POST …/assignments`.
    let assignmentsRecorded: Metrics.Counter
    /// Shared documents answered from the delivery cache, and read from the store.
    let cacheHits: Metrics.Counter
    let cacheMisses: Metrics.Counter
    /// Users new to the store answered without being recorded: their client was over its limit.
    let unrecordedNewUsers: Metrics.Counter
    /// Users' own documents answered on the event loop rather than by the router.
    let userDocumentsOnEventLoop: Metrics.Counter
    /// OFREP evaluations and Bucketeer polls answered on the event loop rather than by the router.
    let evaluationsOnEventLoop: Metrics.Counter
    /// What the poller read of the environments' change sequences (any process's writes, this
    /// one's included): steps, the users they named, and readings where any user may have changed.
    let changeSteps: Metrics.Counter
    let changedUsers: Metrics.Counter
    let wholeEnvironmentChanges: Metrics.Counter
    /// New Bucketeer users answered without being recorded: their client was over its limit.
    let bucketeerUnrecordedNewUsers: Metrics.Counter
    /// Bucketeer polls whose `user.data` was over the attribute limits: evaluated with what fits, kept nowhere.
    let bucketeerAttributesOverLimit: Metrics.Counter
    /// Bucketeer evaluation events of the app's own default (`CLIENT`): no exposure.
    let bucketeerClientDefaults: Metrics.Counter
    /// Bucketeer events dropped for having no `id`.
    let bucketeerEventsWithoutID: Metrics.Counter
    /// `register_events` batches refused before any event was read, by why: the app's `track`
    /// calls are lost while its flags keep working, so this is where a wrong key shows.
    let bucketeerEventBatchesRefused: [EventBatchRefusal: Metrics.Counter]
    /// The router's request counts (`hb.requests`) for the routes the event loop answers, so
    /// `/metrics` counts every delivery.
    let fastPathRequests: [DeliveryFastPath.Route: [Int: Metrics.Counter]]
}
