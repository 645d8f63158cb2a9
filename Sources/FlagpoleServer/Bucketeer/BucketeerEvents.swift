import FlagpoleCore
import FlagpoleStore
import Foundation
import Metrics

/// A `register_events` body read: the goal and evaluation events for the store, the SDK's own
/// metrics (kept as Prometheus series, never refused), and an answer for every event that can't
/// be taken. The SDK deletes from its queue what the answer doesn't list and what it lists with
/// `retriable: false`, and keeps `retriable: true` ones for the next flush, so an event is
/// retriable only when trying again can succeed.
struct BucketeerEventBatch {
    /// For `FeatureStore.record(_:refused:in:policy:dialect:)`, with their place in the batch.
    var events: [(index: Int, event: ReceivedEvent)] = []
    /// By event id.
    var errors: [String: BucketeerEventError] = [:]
    /// The ids of evaluation events with reason `CLIENT`: the app showed its own default, which
    /// is no exposure to any variation.
    var clientDefaults: [String] = []
    /// Events without an `id`, which nothing can be answered by.
    var withoutID = 0
    var sdkMetrics: [(id: String, metric: BucketeerSDKMetric)] = []

    /// The most events one request is taken from (`FeatureStore.eventsPerBatch`); the rest are
    /// answered retriable, and the SDK sends them with its next flush.
    static let limit = Experiments.eventsPerBatch

    /// Reads `{"events": [{"id", "type", "event": {"@type", …}}, …], "sdkVersion"?, "sourceId"?}`.
    ///
    /// - throws: `BucketeerError` `400` when the envelope can't be read; an event that can't is
    ///   answered in `errors`.
    init(_ bytes: [UInt8], receivedAt: Date) throws {
        let root = try BucketeerError.parse(bytes)
        guard case .object = root.content, case .array(let elements)? = root.member("events")?.node.content else {
            throw BucketeerError(.badRequest, #"The body must be {"events": [{"id", "type", "event": {…}}, …]}."#)
        }
        let sdkVersion: String? =
            if case .string(let text)? = root.member("sdkVersion")?.node.content { text } else { nil }
        for (index, element) in elements.enumerated() {
            guard case .string(let id)? = element.member("id")?.node.content, !id.isEmpty, id.utf8.count <= 200 else {
                // Nothing to answer it by: the SDK, which always sends a UUID, never sends such an event.
                withoutID += 1
                continue
            }
            guard index < Self.limit else {
                errors[id] = BucketeerEventError(
                    retriable: true, "Over the \(Self.limit) events one request takes: sent again with the next flush.")
                continue
            }
            switch Self.read(element, id: id, sdkVersion: sdkVersion, receivedAt: receivedAt) {
            case .stored(let event): events.append((index, event))
            case .clientDefault: clientDefaults.append(id)
            case .metric(let metric): sdkMetrics.append((id, metric))
            case .refused(let message): errors[id] = BucketeerEventError(retriable: false, message)
            }
        }
    }

    /// Marks the events for the store retriable: the store could not take them now.
    mutating func storeWasBusy() {
        for (_, event) in events {
            errors[event.id] = BucketeerEventError(
                retriable: true,
                "The database is busy; nothing of this event was recorded. Sent again with the next flush.")
        }
    }

    /// What the store refused, which it will refuse again.
    mutating func add(_ report: EventBatchReport) {
        for refused in report.refused {
            guard let id = refused.id else { continue }
            errors[id] = BucketeerEventError(retriable: false, "\(refused.reason.rawValue): \(refused.message)")
        }
    }

    /// `{"errors": {"ID": {"retriable": Bool, "message": "…"}}}`; `{"errors": {}}` when all were taken.
    var answer: JSONValue {
        let members = errors.sorted { $0.key < $1.key }.map { id, error in
            JSONObject.Member(
                key: id, value: ["retriable": .bool(error.retriable), "message": .string(error.message)])
        }
        return ["errors": .object(JSONObject(members))]
    }

    // MARK: Events

    private enum Read {
        case stored(ReceivedEvent)
        case clientDefault
        case metric(BucketeerSDKMetric)
        case refused(String)
    }

    /// The SDK's event types (`type`, or the `@type` of `event` when a body has none).
    private enum EventType: Int {
        case goal = 1
        case evaluation = 3
        case metrics = 4

        init?(_ element: JSONNode) {
            if case .number(let number)? = element.member("type")?.node.content {
                guard let type = Int(exactly: number).flatMap(EventType.init(rawValue:)) else { return nil }
                self = type
                return
            }
            guard case .string(let type)? = element.member("event")?.node.member("@type")?.node.content else {
                return nil
            }
            switch type.split(separator: ".").last {
            case "GoalEvent": self = .goal
            case "EvaluationEvent": self = .evaluation
            case "MetricsEvent": self = .metrics
            default: return nil
            }
        }
    }

    private static func read(_ element: JSONNode, id: String, sdkVersion: String?, receivedAt: Date) -> Read {
        guard let type = EventType(element) else {
            return .refused(
                "Unknown event type: Flagpole takes goal (1), evaluation (3) and metrics (4) events.")
        }
        guard let event = element.member("event")?.node, case .object = event.content else {
            return .refused("\"event\" must be an object.")
        }
        if type == .metrics {
            return .metric(BucketeerSDKMetric(event, sdkVersion: sdkVersion))
        }
        // The ids get_evaluations takes.
        guard case .string(let text)? = event.member("userId")?.node.content, let user = try? UserID(validating: text)
        else {
            return .refused("\"event.userId\" must be the id of a user get_evaluations answered.")
        }
        // Whole seconds: read as the second's last millisecond, so an event of the second the
        // user was assigned in falls after the assignment, as it happened.
        guard case .number(let seconds)? = event.member("timestamp")?.node.content, seconds.isFinite,
            let time = Int64(exactly: (seconds * 1000).rounded(.down) + 999)
        else {
            return .refused("\"event.timestamp\" must be Unix seconds.")
        }
        var received = ReceivedEvent(
            id: id, user: user, goal: Goal.exposure, time: time,
            receivedAt: receivedAt.unixMilliseconds)
        switch type {
        case .goal:
            guard case .string(let goal)? = event.member("goalId")?.node.content, !goal.isEmpty else {
                return .refused("\"event.goalId\" must name one of the environment's goals.")
            }
            received.goal = goal
            switch event.member("value")?.node.content {
            case nil, .null?: break
            case .number(let value)?: received.value = value
            default: return .refused("\"event.value\" must be a number.")
            }
        case .evaluation:
            guard case .string(let feature)? = event.member("featureId")?.node.content, !feature.isEmpty else {
                return .refused("\"event.featureId\" must name a feature or config.")
            }
            if case .string("CLIENT")? = event.member("reason")?.node.member("type")?.node.content {
                return .clientDefault
            }
            received.feature = feature
        case .metrics: break
        }
        return .stored(received)
    }
}

/// An event the answer lists, and whether the SDK should send it again.
struct BucketeerEventError: Equatable {
    let retriable: Bool
    let message: String

    init(retriable: Bool, _ message: String) {
        self.retriable = retriable
        self.message = message
    }
}

/// One of the SDK's metrics events: how a call went, by API and kind, as Prometheus series
/// whose labels take a bounded set of values (an SDK version Flagpole doesn't know is `other`).
struct BucketeerSDKMetric {
    /// The inner event's name (`LatencyMetricsEvent`, `TimeoutErrorMetricsEvent`, …), or `other`.
    let kind: String
    /// `get_evaluations`, `register_events` or `other`.
    let api: String
    let sdkVersion: String
    let latencySeconds: Double?
    let sizeBytes: Double?

    init(_ event: JSONNode, sdkVersion: String?) {
        let inner = event.member("event")?.node
        let type = inner?.member("@type")?.node.text?.split(separator: ".").last.map(String.init)
        kind = type.map { Self.kinds.contains($0) ? $0 : "other" } ?? "other"
        switch inner?.member("apiId")?.node.content {
        case .number(2)?: api = "get_evaluations"
        case .number(3)?: api = "register_events"
        default: api = "other"
        }
        let version = event.member("sdkVersion")?.node.text ?? sdkVersion
        self.sdkVersion = version.map { Self.isKnown(version: $0) ? $0 : "other" } ?? "other"
        latencySeconds = inner?.member("latencySecond")?.node.number
        sizeBytes = inner?.member("sizeByte")?.node.number
    }

    /// Adds the event to the application's series.
    func record(in metrics: ServerMetrics) {
        let factory = metrics.factory
        let dimensions = [("kind", kind), ("api", api), ("sdk_version", sdkVersion)]
        Counter(label: "flagpole_bucketeer_sdk_metrics_events_total", dimensions: dimensions, factory: factory)
            .increment()
        let call = [("api", api), ("sdk_version", sdkVersion)]
        if let latencySeconds, latencySeconds.isFinite, latencySeconds >= 0, latencySeconds < 3600 {
            Metrics.Timer(label: "flagpole_bucketeer_sdk_latency_seconds", dimensions: call, factory: factory)
                .recordNanoseconds(Int64(latencySeconds * 1e9))
        }
        if let sizeBytes, sizeBytes.isFinite, sizeBytes >= 0 {
            Recorder(label: "flagpole_bucketeer_sdk_response_bytes", dimensions: call, factory: factory)
                .record(sizeBytes)
        }
    }

    /// The SDK's metrics events (`Model/MetricsEventData.swift`).
    static let kinds: Set<String> = [
        "LatencyMetricsEvent", "SizeMetricsEvent", "TimeoutErrorMetricsEvent", "NetworkErrorMetricsEvent",
        "BadRequestErrorMetricsEvent", "UnauthorizedErrorMetricsEvent", "ForbiddenErrorMetricsEvent",
        "NotFoundErrorMetricsEvent", "ClientClosedRequestErrorMetricsEvent", "UnavailableErrorMetricsEvent",
        "ServiceUnavailableErrorMetricsEvent", "InternalServerErrorMetricsEvent", "InternalSdkErrorMetricsEvent",
        "UnknownErrorMetricsEvent", "PayloadTooLargeExceptionEvent", "RedirectionRequestExceptionEvent",
    ]

    /// Versions 2.x.y with one-digit minor and patch: at most a hundred label values.
    static func isKnown(version: String) -> Bool {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "2" && parts[1...].allSatisfy { $0.count == 1 && $0.first!.isNumber }
    }
}

extension JSONNode {
    /// The string this node is, if it is one.
    fileprivate var text: String? {
        if case .string(let text) = content { text } else { nil }
    }

    /// The number this node is, if it is one.
    fileprivate var number: Double? {
        if case .number(let number) = content { number } else { nil }
    }
}
