import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// The app's `register_events`, as the stock SDK queues and resends them, judged by the tests'
/// readouts: a user's exposure and goal events count once in their variation, however often a
/// batch comes and through whichever apiEndpoint; the app's own defaults expose nobody; and
/// each event the server can't take is answered so the SDK drops or keeps it rightly.
@Suite("Bucketeer: the app's events, counted once")
struct BucketeerAppEventTests {
    /// Per test and variation, exposed users and goal events summed over epochs.
    struct Figures: Equatable {
        var exposed = 0
        var events = 0
    }

    /// The readouts of the demo's tests, and that every conversion mean is a rate.
    static func readouts(_ demo: DemoServer) async throws -> [String: [String: Figures]] {
        var figures: [String: [String: Figures]] = [:]
        for test in DemoServer.tests {
            let results = try await demo.store.experiments.results(of: test, in: DemoServer.production)
            for epoch in results.epochs {
                for arm in epoch.arms {
                    figures[test, default: [:]][arm.variation, default: Figures()].exposed += arm.exposedUsers
                }
                for goal in epoch.goals where goal.goal.name == DemoServer.goal {
                    for variation in goal.variations {
                        figures[test, default: [:]][variation.variation, default: Figures()].events += variation.events
                        // The SDK's 9.99 is not a conversion: a rate stays within [0, 1].
                        #expect(
                            (0.0...1.0).contains(variation.mean),
                            "\(test) \(variation.variation): mean \(variation.mean)")
                    }
                }
            }
        }
        return figures
    }

    /// `before` plus `exposed` and `events` in each test's variation of `variations`, nothing elsewhere.
    static func expectCounts(
        _ demo: DemoServer, before: [String: [String: Figures]], variations: [String: String], exposed: Int,
        events: Int, _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) async throws -> [String: [String: Figures]] {
        let after = try await readouts(demo)
        for test in DemoServer.tests {
            let names = Set(after[test, default: [:]].keys).union(before[test, default: [:]].keys)
            for variation in names {
                var expected = before[test]?[variation] ?? Figures()
                if variations[test] == variation {
                    expected.exposed += exposed
                    expected.events += events
                }
                #expect(
                    after[test]?[variation] ?? Figures() == expected, "\(what): \(test) \(variation)",
                    sourceLocation: sourceLocation)
            }
        }
        return after
    }

    @Test(
        "Exposures and a goal in the second of the join count once in the user's variation, however often and wherever sent"
    )
    func goalAndEvaluationEvents() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var app = BucketeerApp(client, key: demo.productionKey, user: "bk-dave", attributes: ["plan": "free"])
            _ = try await app.fetch()
            // The SDK's timestamps are whole seconds: every event here is in the second the user
            // joined the tests, which must read as after the join, not as its first millisecond.
            let joined = try await demo.store.assignments.assignmentEvents(
                in: DemoServer.production, matching: .init(user: UserID(rawValue: "bk-dave"))
            ).map(\.time).min()
            app.eventTime = Int(try #require(joined).timeIntervalSince1970)
            app.readEveryFlag()
            _ = app.variation(BucketeerAppTests.missingFlag, .bool)
            app.track(DemoServer.goal, value: 9.99)
            #expect(Set(app.install.queue.compactMap { $0["type"]?.number }) == [1, 3, 4])
            let variations = Dictionary(
                uniqueKeysWithValues: DemoServer.tests.map { ($0, app.stored()[$0]?.variationName ?? "") })
            var figures = try await Self.readouts(demo)
            let batch = app.install.queue
            #expect(try await app.flush() == [:])
            #expect(app.install.queue.isEmpty, "accepted events leave the queue")
            figures = try await Self.expectCounts(
                demo, before: figures, variations: variations, exposed: 1, events: 1, "the first flush")
            // The SDK resends a whole batch after a failed request.
            #expect(try await app.flush(batch) == [:])
            figures = try await Self.expectCounts(
                demo, before: figures, variations: variations, exposed: 0, events: 0, "the same batch again")
            // A new goal event, a second later, does count: the check above can fail.
            app.eventTime! += 1
            app.track(DemoServer.goal)
            #expect(try await app.flush() == [:])
            figures = try await Self.expectCounts(
                demo, before: figures, variations: variations, exposed: 0, events: 1, "a second goal event")
            // At the host root with the key scoped to demo/production; then that batch at /t/demo/production.
            app.base = ""
            app.eventTime! += 1
            app.track(DemoServer.goal)
            let atRoot = app.install.queue
            #expect(try await app.flush() == [:])
            figures = try await Self.expectCounts(
                demo, before: figures, variations: variations, exposed: 0, events: 1, "a goal event at the root")
            app.base = "/t/demo/production"
            #expect(try await app.flush(atRoot) == [:])
            _ = try await Self.expectCounts(
                demo, before: figures, variations: variations, exposed: 0, events: 0, "that batch at the environment")
        }
    }

    @Test("Evaluation events of the app's own defaults (CLIENT), sent before initialize completed, expose nobody")
    func clientDefaults() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var app = BucketeerApp(client, key: demo.productionKey, user: "bk-erin")
            for (name, getter) in BucketeerGetter.demoApp { #expect(app.variation(name, getter) == nil) }
            #expect(
                app.install.queue.allSatisfy {
                    $0["event"]?["reason"]?["type"] == .string("CLIENT") && $0["event"]?["variationId"] == .string("")
                })
            _ = try await app.fetch()
            let before = try await Self.readouts(demo)
            #expect(try await app.flush() == [:])
            _ = try await Self.expectCounts(
                demo, before: before, variations: [:], exposed: 0, events: 0, "after CLIENT events")
        }
    }

    @Test(
        "An unknown event type is not retriable; past 1 000 events the rest are; metrics never err; older envelopes are taken"
    )
    func eventErrorsAndEnvelopes() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var app = BucketeerApp(client, key: demo.productionKey, user: "bk-heidi")
            _ = try await app.fetch()
            let now = Int(Date().timeIntervalSince1970)
            func metric() -> JSONValue {
                [
                    "id": .string(UUID().uuidString), "type": .number(4),
                    "event": [
                        "@type": .string("type.googleapis.com/bucketeer.event.client.MetricsEvent"),
                        "timestamp": .number(Double(now)), "type": .number(1), "sourceId": .number(2),
                        "sdkVersion": .string("2.2.1"), "metadata": .null,
                        "event": [
                            "@type": .string("type.googleapis.com/bucketeer.event.client.LatencyMetricsEvent"),
                            "apiId": .number(3), "labels": ["tag": .string("")], "latencySecond": .number(0.01),
                        ],
                    ],
                ]
            }
            let unknown: JSONValue = [
                "id": .string(UUID().uuidString), "type": .number(2),
                "event": [
                    "@type": .string("type.googleapis.com/bucketeer.event.client.Unknown"),
                    "timestamp": .number(Double(now)),
                ],
            ]
            let goal = app.track(DemoServer.goal)
            app.install.queue = [metric(), unknown, goal]
            let errors = try await app.flush()
            let unknownID = try #require(unknown["id"]?.string)
            #expect(Set(errors.keys) == [unknownID])
            #expect(errors[unknownID]?.retriable == false, "it can never succeed")
            #expect(app.install.queue.isEmpty, "the accepted events and the unknown one leave the queue")

            // Over the 1 000 events one request takes: the rest are retriable, and stay queued.
            let batch = (0..<999).map { _ in metric() } + [app.track(DemoServer.goal)] + (0..<3).map { _ in metric() }
            app.install.queue = batch
            let over = try await app.flush()
            #expect(Set(over.keys) == Set(batch[1000...].compactMap { $0["id"]?.string }))
            #expect(over.values.allSatisfy { $0.retriable })
            #expect(app.install.queue.count == 3)
            #expect(try await app.flush() == [:], "the retriable ones at the next flush")

            // Envelopes of older SDKs: no top-level sourceId (before 2.1.5), no sdkVersion; metadata null.
            for envelope: [(String, JSONValue)] in [[], [("sdkVersion", .string("2.1.4"))]] {
                var event = app.track(DemoServer.goal)
                if case .object(var object) = event, case .object(var inner)? = object["event"] {
                    inner.members.removeAll { $0.key == "metadata" }
                    inner.append("metadata", .null)
                    object.members.removeAll { $0.key == "event" }
                    object.append("event", .object(inner))
                    event = .object(object)
                }
                #expect(try await app.flush([event], envelope: envelope) == [:], "\(envelope.map(\.0))")
            }
        }
    }
}

/// Refusals as the app meets them: a real status, and `{"error": {"code": N, "message": "…"}}`
/// (§10, §12 MUST 2 and 7), on both calls at both forms of apiEndpoint; never a 2xx with a
/// partial body, never a 3xx.
@Suite("Bucketeer: refusals as the app meets them")
struct BucketeerAppRefusalTests {
    static let evaluations =
        #"{"sdkVersion": "2.2.1", "sourceId": 2, "tag": "", "user": {"data": {}, "id": "bk-ivan"}, "userEvaluationCondition": {"evaluatedAt": "0", "userAttributesUpdated": false}, "userEvaluationsId": ""}"#
    static let events = #"{"sdkVersion": "2.2.1", "sourceId": 2, "events": []}"#

    static func call(
        _ client: any TestClientProtocol, _ path: String, key: String?, body: String
    ) async throws -> TestResponse {
        try await client.send(.post, path, headers: BucketeerApp.headers(key), body: body)
    }

    @Test("Malformed bodies are 400 with the error shape, on both calls and both apiEndpoint forms")
    func malformedBodies() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            for base in ["/t/demo/production", ""] {
                for body in ["{bad", "", "[]", #"{"user": {"id": ""}, "tag": ""}"#] {
                    let response = try await Self.call(
                        client, "\(base)/get_evaluations", key: demo.productionKey, body: body)
                    try BucketeerApp.expectError(response, .badRequest)
                }
                for body in ["{bad", "", "[]", #"{"events": {}}"#] {
                    let response = try await Self.call(
                        client, "\(base)/register_events", key: demo.productionKey, body: body)
                    try BucketeerApp.expectError(response, .badRequest)
                }
            }
        }
    }

    @Test(
        "Keys: 401 without or with an unknown key, 403 with another environment's; what is refused, the right key gets")
    func keys() async throws {
        let demo = try await DemoServer()
        let unknown = "fp_" + String(repeating: "0", count: 48)
        let cases: [(String, String?, String, [HTTPResponse.Status])] = [
            // The private environment: a key of its own, nothing else.
            ("/t/demo/staging/get_evaluations", nil, Self.evaluations, [.unauthorized]),
            ("/t/demo/staging/get_evaluations", unknown, Self.evaluations, [.unauthorized]),
            ("/t/demo/staging/get_evaluations", "not-a-key", Self.evaluations, [.unauthorized]),
            ("/t/demo/staging/get_evaluations", demo.productionKey, Self.evaluations, [.forbidden]),
            // Events always need a key of the environment.
            ("/t/demo/production/register_events", nil, Self.events, [.unauthorized]),
            ("/t/demo/production/register_events", unknown, Self.events, [.unauthorized]),
            ("/t/demo/production/register_events", demo.stagingKey, Self.events, [.unauthorized, .forbidden]),
            ("/t/demo/staging/register_events", demo.productionKey, Self.events, [.unauthorized, .forbidden]),
            // The host root needs a key scoped to one environment.
            ("/get_evaluations", unknown, Self.evaluations, [.unauthorized]),
            ("/get_evaluations", nil, Self.evaluations, [.unauthorized]),
            ("/register_events", unknown, Self.events, [.unauthorized]),
        ]
        try await demo.test { client in
            for (path, key, body, statuses) in cases {
                let response = try await Self.call(client, path, key: key, body: body)
                try BucketeerApp.expectError(response, statuses[0], statuses.count > 1 ? statuses[1] : statuses[0])
            }
            let staged = try await Self.call(
                client, "/t/demo/staging/get_evaluations", key: demo.stagingKey, body: Self.evaluations)
            _ = try BucketeerApp.decodeEvaluations(staged, user: "bk-ivan")
            for (path, key) in [
                ("/t/demo/staging/register_events", demo.stagingKey), ("/register_events", demo.productionKey),
            ] {
                let response = try await Self.call(client, path, key: key, body: Self.events)
                #expect(response.status == .ok, "\(path)")
                #expect(try BucketeerApp.strict(BucketeerWire.RegisterEventsResponse.self, response).errors.isEmpty)
            }
        }
    }

    @Test("Bodies of 2 MiB are 413 with the error shape, on both calls and at the host root")
    func tooLarge() async throws {
        let demo = try await DemoServer()
        let padding = String(repeating: "x", count: 2 << 20)
        try await demo.test { client in
            for (path, body) in [
                ("/t/demo/production/get_evaluations", Self.evaluations), ("/get_evaluations", Self.evaluations),
                ("/t/demo/production/register_events", Self.events), ("/register_events", Self.events),
            ] {
                let large = body.dropLast() + #", "padding": "\#(padding)"}"#
                let response = try await Self.call(client, path, key: demo.productionKey, body: String(large))
                try BucketeerApp.expectError(response, .contentTooLarge)
            }
        }
    }

    @Test("An unknown tenant or environment is a 4xx with the error shape")
    func unknownPlaces() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            for path in [
                "/t/nobody/production/get_evaluations", "/t/demo/nowhere/get_evaluations",
                "/t/nobody/production/register_events",
            ] {
                let response = try await Self.call(client, path, key: demo.productionKey, body: Self.evaluations)
                try BucketeerApp.expectError(response, .unauthorized, .forbidden, .notFound)
            }
        }
    }
}
