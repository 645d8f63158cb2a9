import FlagpoleCore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer
@testable import FlagpoleStore

/// The stock Bucketeer iOS SDK's two calls, a test per MUST of the client API's §12, each answer
/// decoded the strict way the SDK decodes it (`BucketeerWire`, written from the spec's field
/// tables), from request bodies carrying every field the SDK sends (`Fixtures/bucketeer`).
@Suite("Bucketeer: the stock iOS SDK's get_evaluations and register_events")
struct BucketeerTests {
    static let base = "/t/acme/production"

    /// The SDK's `get_evaluations` body for `user`, as the fixture has it but for what is given.
    static func evaluationsBody(
        user: String = "u-1", data: [String: String] = ["plan": "pro"], tag: String = "", token: String = ""
    ) throws -> String {
        var body = try fixture("get_evaluations.json")
        body.put(
            "user",
            [
                "id": .string(user),
                "data": .object(JSONObject(data.map { JSONObject.Member(key: $0.key, value: .string($0.value)) })),
            ])
        body.put("tag", .string(tag))
        body.put("userEvaluationsId", .string(token))
        return JSONWriter(style: .compact).string(of: .object(body))
    }

    static func fixture(_ name: String) throws -> JSONObject {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/bucketeer/\(name)")
        guard case .object(let object) = try JSONParser.parse(Array(try Data(contentsOf: url))).value else {
            throw BucketeerWire.Failure.notAnObject
        }
        return object
    }

    /// The SDK's headers: the key raw in `Authorization`.
    static func sdkHeaders(_ key: String) -> [HTTPField.Name: String] {
        [.authorization: key, .contentType: "application/json"]
    }

    /// A poll, decoded as the SDK decodes it.
    static func poll(
        _ client: any TestClientProtocol, key: String, body: String, base: String = base
    ) async throws -> BucketeerWire.GetEvaluationsResponse {
        let response = try await client.send(
            .post, "\(base)/get_evaluations", headers: sdkHeaders(key), body: body)
        #expect(response.status == .ok, "\(response.text)")
        return try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, response.bytes)
    }

    // MARK: MUST 1 and 2: the paths, and the key

    @Test("Both calls answer under the environment's base URL, and at the host root with a key scoped to it")
    func paths() async throws {
        let server = try await OFREPTests.server()
        let scoped = try await server.store.access.createKey(
            for: .tenant(TenantSlug(rawValue: "acme")), role: .delivery, environment: .production
        ).secret
        try await server.test { client in
            let underBase = try await Self.poll(client, key: "any-key", body: try Self.evaluationsBody())
            let atRoot = try await Self.poll(client, key: scoped, body: try Self.evaluationsBody(), base: "")
            #expect(underBase.userEvaluationsId == atRoot.userEvaluationsId)
            #expect(!underBase.evaluations.evaluations.isEmpty)
            for base in [Self.base, ""] {
                let events = try await client.send(
                    .post, "\(base)/register_events", headers: Self.sdkHeaders(scoped), body: #"{"events": []}"#)
                #expect(events.status == .ok)
                #expect(
                    try BucketeerWire.decode(BucketeerWire.RegisterEventsResponse.self, events.bytes).errors.isEmpty)
            }
            // At the root, a key that names no one environment can't be placed.
            let unscoped = try await client.send(
                .post, "/get_evaluations", headers: Self.sdkHeaders(server.key("acme", .delivery)),
                body: try Self.evaluationsBody())
            #expect(unscoped.status == .forbidden)
            #expect(try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, unscoped.bytes).error.code == 403)
        }
    }

    @Test("The key is raw; a public environment takes any, a private one a key of its own: 401, 403, nothing recorded")
    func keys() async throws {
        let server = try await OFREPTests.server()
        try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = true }
        let acme = server.key("acme", .delivery)
        let globex = server.key("globex", .delivery)
        try await server.test { client in
            let body = try Self.evaluationsBody(user: "private-user")
            for (key, status) in [("nonsense", HTTPResponse.Status.unauthorized), (globex, .forbidden)] {
                let response = try await client.send(
                    .post, "\(Self.base)/get_evaluations", headers: Self.sdkHeaders(key), body: body)
                #expect(response.status == status)
                let error = try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, response.bytes).error
                #expect(error.code == Int(status.code) && error.message.contains("acme/production"))
            }
            #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 0)
            // The SDK's raw key, and the Bearer form, of the environment.
            _ = try await Self.poll(client, key: acme, body: body)
            _ = try await Self.poll(client, key: "Bearer \(acme)", body: body)
            #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 1)
        }
        try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = false }
        try await server.test { client in
            // Public: any key is none, and the caller is answered.
            _ = try await Self.poll(client, key: "fp_not-a-key", body: try Self.evaluationsBody())
            // Events are writes: always a key of the environment.
            let events = try await client.send(
                .post, "\(Self.base)/register_events", headers: Self.sdkHeaders("fp_not-a-key"),
                body: #"{"events": []}"#)
            #expect(events.status == .unauthorized)
            #expect(try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, events.bytes).error.code == 401)
        }
    }

    // MARK: MUST 3 and 5: the answer, its types, reasons and values

    @Test("Every flag and config, typed as the getters parse them, with the reasons and values evaluate gives")
    func answer() async throws {
        let server = try await OFREPTests.server()
        let user = UserID(rawValue: "u-1")
        let response = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody())
        }
        let evaluations = response.evaluations
        #expect(evaluations.forceUpdate && evaluations.archivedFeatureIds.isEmpty)
        #expect(Int64(evaluations.createdAt).map { abs($0 - Int64(Date().timeIntervalSince1970)) < 60 } == true)
        #expect(evaluations.id == response.userEvaluationsId)
        let flags = try await server.store.assignments.evaluateFlags(
            for: FlagContext(user: user, attributes: try UserAttributes(["plan": .string("pro")])), in: TestServer.acme)
        #expect(evaluations.evaluations.map(\.featureId) == flags.flags.map { try! $0.get().key })
        #expect(Set(evaluations.evaluations.map(\.id)).count == evaluations.evaluations.count)
        for (evaluation, result) in zip(evaluations.evaluations, flags.flags) {
            let flag = try result.get()
            #expect(evaluation.id == "\(flag.key):\(flags.revision):u-1")
            #expect(evaluation.userId == "u-1" && evaluation.featureVersion == flags.revision)
            #expect(evaluation.variationId == flag.variant && evaluation.variationName == flag.variant)
            #expect(evaluation.variationValue == flag.value.text)
        }
        let byKey = Dictionary(uniqueKeysWithValues: evaluations.evaluations.map { ($0.featureId, $0) })
        // The getters, as §9 has them.
        #expect(byKey["Example Feature Flag"]?.bool == true && byKey["Example Feature Flag"]?.reason.type == .DEFAULT)
        #expect(byKey["Example Development Flag"]?.bool == false)
        #expect(byKey["Example Development Flag"]?.reason.type == .OFF_VARIATION)
        #expect(byKey["Example Unlock Flag"]?.bool == false)
        #expect(byKey["Example Feature On/Off A/B Test"]?.bool != nil)
        #expect(["Group A", "Group B"].contains(byKey[TestServer.abTest]?.variationValue ?? ""))
        #expect(byKey["count"]?.int == 15 && byKey["ratio"]?.double == 2.0 && byKey["on"]?.bool == true)
        #expect(byKey["Größentabelle"]?.variationValue == "EU")
        #expect(byKey["theme"]?.object == ["accent": "blue"])
        #expect(byKey["title"]?.reason.type == .DEFAULT)
        // A tag selects what carries it.
        let tagged = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody(tag: "ios"))
        }
        #expect(tagged.evaluations.evaluations.map(\.featureId) == ["title"])
        #expect(tagged.userEvaluationsId != response.userEvaluationsId)
    }

    @Test("TARGET only for this user's own records, RULE with its id, OFF_VARIATION for a disabled test")
    func reasons() async throws {
        let server = try await OFREPTests.server()
        let options = EditOptions(actor: "test")
        _ = try await server.store.catalog.setRules(
            [
                TargetingRule(
                    id: "pro-users", clauses: [Clause(attribute: "plan", op: .equals, values: [.string("pro")])],
                    serve: .variation("Group B"))
            ], ofFeature: TestServer.abTest, in: TestServer.acme, options: options)
        _ = try await server.store.assignments.setOverride(
            "Example MVT Test", user: UserID(rawValue: "u-1"), variation: "Group C", in: TestServer.acme)
        _ = try await server.store.assignments.setUnlocked(
            true, feature: "Example Unlock Flag", user: UserID(rawValue: "u-1"), source: nil, actor: "test",
            in: TestServer.acme)
        _ = try await server.store.catalog.setEnabled(
            false, feature: "Example Feature On/Off A/B Test", in: TestServer.acme, options: options)
        let byKey = try await server.test { client in
            Dictionary(
                uniqueKeysWithValues: try await Self.poll(client, key: "k", body: try Self.evaluationsBody())
                    .evaluations.evaluations.map { ($0.featureId, $0) })
        }
        #expect(byKey[TestServer.abTest]?.reason == BucketeerWire.Reason(type: .RULE, ruleId: "pro-users"))
        #expect(byKey[TestServer.abTest]?.variationValue == "Group B")
        // A config following the test takes the rule's variation, with the rule.
        #expect(byKey["title"]?.reason == BucketeerWire.Reason(type: .RULE, ruleId: "pro-users"))
        #expect(byKey["title"]?.variationValue == "Hello" && byKey["title"]?.variationId == "Group B")
        #expect(
            byKey["Example MVT Test"]?.reason.type == .TARGET && byKey["Example MVT Test"]?.variationValue == "Group C")
        #expect(byKey["Example Unlock Flag"]?.reason.type == .TARGET && byKey["Example Unlock Flag"]?.bool == true)
        #expect(byKey["Example Feature On/Off A/B Test"]?.reason.type == .OFF_VARIATION)
        #expect(byKey.values.allSatisfy { $0.reason.type != .CLIENT && $0.reason.type != .PREREQUISITE })
        // A relaunch without attributes: `{}` is none, not the last on record.
        let relaunched = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody(data: [:]))
        }
        #expect(relaunched.evaluations.evaluations.first { $0.featureId == TestServer.abTest }?.reason.type != .RULE)
    }

    // MARK: MUST 4: the change token

    @Test("The same token for the same user and answer is answered empty; any change, or another user, gets everything")
    func changeToken() async throws {
        let server = try await OFREPTests.server()
        try await server.test { client in
            let first = try await Self.poll(client, key: "k", body: try Self.evaluationsBody())
            let token = first.userEvaluationsId
            let same = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(token: token))
            #expect(same.userEvaluationsId == token && same.evaluations.evaluations.isEmpty)
            // A user switch on the same install presents the last user's token: bob gets all of his.
            let bob = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(user: "bob", token: token))
            #expect(bob.userEvaluationsId != token && bob.evaluations.forceUpdate)
            #expect(bob.evaluations.evaluations.count == first.evaluations.evaluations.count)
            #expect(bob.evaluations.evaluations.allSatisfy { $0.userId == "bob" && $0.id.hasSuffix(":bob") })
            // A relaunch with other attributes.
            let relaunch = try await Self.poll(
                client, key: "k", body: try Self.evaluationsBody(data: ["plan": "free"], token: token))
            #expect(relaunch.userEvaluationsId != token && relaunch.evaluations.forceUpdate)
            // Another tag.
            let tagged = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(tag: "ios", token: token))
            #expect(tagged.userEvaluationsId != token)
        }
        let token = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody()).userEvaluationsId
        }
        // Another server on the same store (a restart): the same token, still nothing to send.
        let restarted = TestServer(sharing: server)
        try await restarted.test { client in
            let poll = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(token: token))
            #expect(poll.userEvaluationsId == token && poll.evaluations.evaluations.isEmpty)
        }
        // The user's own record changes no revision but changes their answer: a new token.
        let group = try await server.store.assignments.pinnedDocument(for: UserID(rawValue: "u-1"), in: TestServer.acme)
            .assignments.first { $0.feature == TestServer.abTest }!.variation
        _ = try await server.store.assignments.setOverride(
            TestServer.abTest, user: UserID(rawValue: "u-1"), variation: group == "Group A" ? "Group B" : "Group A",
            in: TestServer.acme)
        let afterOverride = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody(token: token))
        }
        #expect(afterOverride.userEvaluationsId != token && afterOverride.evaluations.forceUpdate)
        #expect(
            afterOverride.evaluations.evaluations.first { $0.featureId == TestServer.abTest }?.reason.type == .TARGET)
        // A revision too.
        _ = try await server.store.catalog.setBiases(
            [30, 70], of: "Example Feature On/Off A/B Test", in: TestServer.acme, options: EditOptions(actor: "test"))
        let afterRevision = try await server.test { client in
            try await Self.poll(
                client, key: "k", body: try Self.evaluationsBody(token: afterOverride.userEvaluationsId))
        }
        #expect(afterRevision.userEvaluationsId != afterOverride.userEvaluationsId)
        #expect(afterRevision.evaluations.evaluations.allSatisfy { $0.featureVersion == 3 })
    }

    @Test("An SDK before 2.1 (no userEvaluationCondition, sdkVersion) is answered as any other")
    func olderSDK() async throws {
        let server = try await OFREPTests.server()
        var legacy = try Self.fixture("get_evaluations-2.0.json")
        let current = try await server.test { client in
            try await Self.poll(client, key: "k", body: try Self.evaluationsBody())
        }
        legacy.put("userEvaluationsId", .string(current.userEvaluationsId))
        let body = JSONWriter(style: .compact).string(of: .object(legacy))
        try await server.test { client in
            let poll = try await Self.poll(client, key: "k", body: body)
            #expect(poll.userEvaluationsId == current.userEvaluationsId && poll.evaluations.evaluations.isEmpty)
        }
    }

    @Test("A new user over an anonymous client's limit is answered 200, unrecorded, with a token no poll matches")
    func newUserLimit() async throws {
        let server = try await OFREPTests.server(
            configuration: ServerConfiguration(accessLogLevel: .debug, newUsersPerSecond: 0.001, newUserBurst: 1))
        try await server.test { client in
            _ = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(user: "first"))
            let limited = try await Self.poll(client, key: "k", body: try Self.evaluationsBody(user: "second"))
            #expect(limited.evaluations.forceUpdate && !limited.evaluations.evaluations.isEmpty)
            let again = try await Self.poll(
                client, key: "k", body: try Self.evaluationsBody(user: "second", token: limited.userEvaluationsId))
            #expect(again.userEvaluationsId != limited.userEvaluationsId && !again.evaluations.evaluations.isEmpty)
            // What it was told is what the store records when it does record the user.
            let recorded = try await server.store.assignments.evaluateFlags(
                for: FlagContext(
                    user: UserID(rawValue: "second"), attributes: try UserAttributes(["plan": .string("pro")])),
                in: TestServer.acme)
            #expect(
                limited.evaluations.evaluations.map(\.variationValue) == recorded.flags.map { try! $0.get().value.text }
            )
        }
        #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 2)
    }

    @Test("Attributes beyond the limits: evaluated with what fits, nothing kept, answered 200")
    func attributesBeyondLimits() async throws {
        let server = try await OFREPTests.server()
        let data = Dictionary(uniqueKeysWithValues: (0..<10_000).map { ("k\($0)", "v\($0)") } + [("plan", "pro")])
        let user = UserID(rawValue: "many")
        try await server.test { client in
            let poll = try await Self.poll(
                client, key: "k", body: try Self.evaluationsBody(user: user.rawValue, data: data))
            #expect(!poll.evaluations.evaluations.isEmpty)
        }
        let kept = try await server.store.read { db in
            try db.userAttributes.attributes(of: user, in: db.environments.scope(of: TestServer.acme))
        }
        #expect(kept == nil)
    }

    // MARK: MUST 6: register_events

    /// The fixture's events, each timestamped now, with fresh ids when `fresh`.
    static func eventsBody(now: Date = Date(), replacing: (inout JSONObject) -> Void = { _ in }) throws -> String {
        var body = try fixture("register_events.json")
        guard case .array(var events)? = body["events"] else { throw BucketeerWire.Failure.notAnObject }
        for index in events.indices {
            guard case .object(var event) = events[index], case .object(var inner)? = event["event"] else { continue }
            inner.put("timestamp", .number(now.timeIntervalSince1970.rounded(.down)))
            event.put("event", .object(inner))
            events[index] = .object(event)
        }
        body.put("events", .array(events))
        replacing(&body)
        return JSONWriter(style: .compact).string(of: .object(body))
    }

    @Test("Goal and evaluation events count in the test's figures once, however often a batch is resent")
    func events() async throws {
        let server = try await OFREPTests.server()
        try await server.store.experiments.createGoal(Goal(name: "purchase", kind: .conversion), in: TestServer.acme)
        let key = server.key("acme", .delivery)
        try await server.test { client in
            // u-1 gets a group first, as an app does before it tracks anything.
            _ = try await Self.poll(client, key: "k", body: try Self.evaluationsBody())
            let body = try Self.eventsBody()
            for _ in 0..<2 {
                let response = try await client.send(
                    .post, "\(Self.base)/register_events", headers: Self.sdkHeaders(key), body: body)
                #expect(response.status == .ok)
                // The SDK's 0.0 value of a conversion goal is no error; CLIENT and metrics events neither.
                #expect(
                    try BucketeerWire.decode(BucketeerWire.RegisterEventsResponse.self, response.bytes).errors == [:])
            }
        }
        let results = try await server.store.experiments.results(of: TestServer.abTest, in: TestServer.acme)
        let epoch = try #require(results.epochs.first)
        #expect(epoch.arms.map(\.exposedUsers).reduce(0, +) == 1)
        let goal = try #require(epoch.goals.first { $0.goal.name == "purchase" })
        #expect(goal.variations.map(\.events).reduce(0, +) == 1)
    }

    @Test("Per-event answers: never-acceptable events are not retriable, events past 1 000 are, metrics never err")
    func eventErrors() async throws {
        let server = try await OFREPTests.server()
        try await server.store.experiments.createGoal(Goal(name: "revenue", kind: .value), in: TestServer.acme)
        let key = server.key("acme", .delivery)
        let now = Int(Date().timeIntervalSince1970)
        func goal(_ id: String, _ goalID: String, user: String = "u-1") -> String {
            #"{"id": "\#(id)", "type": 1, "event": {"@type": "type.googleapis.com/bucketeer.event.client.GoalEvent", "timestamp": \#(now), "goalId": "\#(goalID)", "value": 9.99, "userId": "\#(user)"}}"#
        }
        let many = (0..<2_000).map { goal("E-\($0)", "revenue", user: "user-\($0)") }
        let odd = [
            #"{"id": "T-9", "type": 9, "event": {}}"#, goal("G-unknown", "no-such-goal"),
            #"{"id": "F-unknown", "type": 3, "event": {"timestamp": \#(now), "featureId": "nope", "userId": "u-1", "reason": {"type": "DEFAULT"}}}"#,
            #"{"id": "M-odd", "type": 4, "event": {"event": {"@type": "whatever"}}}"#,
            #"{"id": "G-old", "type": 1, "event": {"timestamp": 1000, "goalId": "revenue", "value": 1, "userId": "u-1"}}"#,
        ]
        let response = try await server.test { client in
            try await client.send(
                .post, "\(Self.base)/register_events", headers: Self.sdkHeaders(key),
                body: #"{"events": [\#((odd + many).joined(separator: ","))]}"#)
        }
        #expect(response.status == .ok)
        let errors = try BucketeerWire.decode(BucketeerWire.RegisterEventsResponse.self, response.bytes).errors
        for id in ["T-9", "G-unknown", "F-unknown", "G-old"] { #expect(errors[id]?.retriable == false, "\(id)") }
        #expect(errors["M-odd"] == nil)
        #expect(errors["G-unknown"]?.message.contains("no-such-goal") == true)
        // 5 odd events and 995 goal events fit the limit; the 1 005 after it are for the next flush.
        let retriable = errors.filter(\.value.retriable).keys
        #expect(retriable.count == 1_005 && retriable.allSatisfy { $0.hasPrefix("E-") })
        #expect(errors["E-994"] == nil && errors["E-995"]?.retriable == true)
        // Nothing of what was refused is kept, nothing of the valid events beside it is lost.
        let kept = try await server.store.read { db in
            try db.value(Int64.self, "SELECT count(*) FROM events") ?? -1
        }
        #expect(kept == 995)
    }

    @Test(
        "While the database is busy, the goal and evaluation events are answered retriable; metrics and defaults never")
    func busyStore() throws {
        var batch = try BucketeerEventBatch(Array(try Self.eventsBody().utf8), receivedAt: Date())
        #expect(batch.events.count == 2 && batch.clientDefaults.count == 1 && batch.sdkMetrics.count == 2)
        batch.storeWasBusy()
        #expect(batch.errors.count == 2 && batch.errors.values.allSatisfy(\.retriable))
        #expect(Set(batch.errors.keys) == Set(batch.events.map(\.event.id)))
    }

    // MARK: MUST 7: errors

    @Test("Unreadable bodies get a real status and the SDK's error shape; nothing else does")
    func badInput() async throws {
        let server = try await OFREPTests.server()
        let key = server.key("acme", .delivery)
        try await server.test { client in
            let cases: [(String, String, HTTPResponse.Status)] = [
                ("get_evaluations", "{not json", .badRequest),
                ("get_evaluations", #"{"user": {"id": 42}}"#, .badRequest),
                ("get_evaluations", #"{"user": {"id": "u", "data": {"n": 1}}}"#, .badRequest),
                ("get_evaluations", #"{"user": {"id": "u"}, "tag": 7}"#, .badRequest),
                ("register_events", "[1, 2", .badRequest),
                ("register_events", #"{"events": 3}"#, .badRequest),
                ("register_events", String(repeating: " ", count: 2 << 20) + "{}", .contentTooLarge),
                ("get_evaluations", String(repeating: " ", count: 2 << 20) + "{}", .contentTooLarge),
            ]
            for (call, body, status) in cases {
                let response = try await client.send(
                    .post, "\(Self.base)/\(call)", headers: Self.sdkHeaders(key), body: body)
                #expect(response.status == status, "\(call) \(body.prefix(40))")
                let error = try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, response.bytes).error
                #expect(error.code == Int(status.code) && !error.message.isEmpty)
            }
            let unknown = try await client.send(
                .post, "/t/acme/nowhere/get_evaluations", headers: Self.sdkHeaders(key),
                body: try Self.evaluationsBody())
            #expect(unknown.status == .notFound)
            #expect(try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, unknown.bytes).error.code == 404)
        }
        #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 0)
    }

    @Test("A batch sent again counts its metrics events and the app's own defaults once in /metrics, as stored events")
    func inMemoryCountsOnce() async throws {
        let server = try await OFREPTests.server()
        let batch = try Self.eventsBody()
        let key = server.key("acme", .delivery)
        try await server.live { client in
            /// The sum of a counter's series.
            func total(_ name: String) async throws -> Int {
                try await client.send(.get, "/metrics").text.split(separator: "\n")
                    .filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
                    .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
            }
            for _ in 0..<3 {
                let answer = try await client.send(
                    .post, "\(Self.base)/register_events", headers: Self.sdkHeaders(key), body: batch)
                #expect(answer.status == .ok, "\(answer.text)")
            }
            #expect(try await total("flagpole_bucketeer_sdk_metrics_events_total") == 2)
            #expect(try await total("flagpole_bucketeer_client_default_evaluations_total") == 1)
        }
    }

    @Test("register_events refused for its key is counted by cause in /metrics, where a lost track() call shows")
    func refusedBatchesCounted() async throws {
        let server = try await OFREPTests.server()
        let batch = try Self.eventsBody()
        let globex = server.key("globex", .delivery)
        try await server.live { client in
            for key in ["fp_typo", "fp_typo", globex] {
                let answer = try await client.send(
                    .post, "\(Self.base)/register_events", headers: Self.sdkHeaders(key), body: batch)
                #expect(answer.status == (key == globex ? .forbidden : .unauthorized))
            }
            // get_evaluations in a public environment takes any key: no refusal to count.
            _ = try await client.send(
                .post, "\(Self.base)/get_evaluations", headers: Self.sdkHeaders("fp_typo"),
                body: try Self.evaluationsBody())
            let text = try await client.send(.get, "/metrics").text
            #expect(text.contains(#"flagpole_bucketeer_event_batches_refused_total{cause="unknown_key"} 2"#), "\(text)")
            #expect(text.contains(#"flagpole_bucketeer_event_batches_refused_total{cause="other_environment"} 1"#))
        }
    }

    @Test("The router's own 404 and 405 under a Bucketeer path are in the SDK's error shape, saying what to fix")
    func routerRefusalsInTheSDKShape() async throws {
        let server = try await OFREPTests.server()
        try await server.test { client in
            // An apiEndpoint without the environment, one with a path too many, and a GET.
            for path in ["/t/acme/get_evaluations", "/t/acme/production/v1/register_events", "/api/get_evaluations"] {
                let response = try await client.send(
                    .post, path, headers: Self.sdkHeaders("k"), body: try Self.evaluationsBody())
                #expect(response.status == .notFound, "\(path)")
                let error = try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, response.bytes).error
                #expect(
                    error.code == 404 && error.message.contains("apiEndpoint is https://HOST/t/TENANT/ENV"), "\(path)")
            }
            let get = try await client.send(.get, "\(Self.base)/get_evaluations", headers: Self.sdkHeaders("k"))
            #expect(get.status == .methodNotAllowed && get.headers[.allow] == "POST")
            #expect(try BucketeerWire.decode(BucketeerWire.ErrorResponse.self, get.bytes).error.code == 405)
            // Other paths keep the API's shape.
            let api = try await client.send(.get, "/api/v1/nowhere").json
            #expect(api["error"]?["code"] == .string("not_found"))
        }
    }

    // MARK: The strict decoding, proved strict

    @Test(
        "The mirror fails as the SDK does: a number createdAt, a string featureVersion, an unknown reason, a missing []"
    )
    func mirrorIsStrict() throws {
        let good =
            #"{"userEvaluationsId":"t","evaluations":{"id":"t","createdAt":"1","forceUpdate":true,"archivedFeatureIds":[],"evaluations":[{"id":"f:1:u","featureId":"f","featureVersion":1,"userId":"u","variationId":"v","variationName":"v","variationValue":"true","reason":{"type":"DEFAULT"}}]}}"#
        #expect(throws: Never.self) {
            try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, Array(good.utf8))
        }
        for (from, to) in [
            (#""createdAt":"1""#, #""createdAt":1"#), (#""featureVersion":1"#, #""featureVersion":"1""#),
            (#""type":"DEFAULT""#, #""type":"ERROR_NO_EVALUATIONS""#), (#""archivedFeatureIds":[],"#, ""),
            (#""forceUpdate":true,"#, ""),
        ] {
            let broken = good.replacingOccurrences(of: from, with: to)
            #expect(throws: (any Error).self, "\(to)") {
                try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, Array(broken.utf8))
            }
        }
        #expect(throws: (any Error).self) {
            try BucketeerWire.decode(BucketeerWire.RegisterEventsResponse.self, Array("{}".utf8))
        }
        // The device cache keeps one row per id and reads back the user's own: repeated ids or
        // another user's id lose flags at the next launch.
        let answer = try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, Array(good.utf8))
        var cache = BucketeerWire.DeviceCache()
        cache.store(answer, for: "u")
        #expect(cache.flags(of: "u").count == 1)
        #expect(cache.flags(of: "someone-else").isEmpty)
    }
}

/// The SDK's side of the wire, written from the client API's field tables (§6, §8, §10): Swift
/// `Decodable` with the SDK's exact types, so a missing key or a wrong type fails the whole
/// answer, as it does in the app.
enum BucketeerWire {
    enum Failure: Error { case notAnObject }

    struct GetEvaluationsResponse: Decodable {
        let userEvaluationsId: String
        let evaluations: UserEvaluations
    }

    struct UserEvaluations: Decodable {
        let id: String
        let createdAt: String
        let forceUpdate: Bool
        let archivedFeatureIds: [String]
        let evaluations: [Evaluation]
    }

    struct Evaluation: Decodable {
        let id: String
        let featureId: String
        let featureVersion: Int
        let userId: String
        let variationId: String
        let variationName: String
        let variationValue: String
        let reason: Reason

        /// The getters' conversions (§9).
        var bool: Bool? { Bool(variationValue) }
        var int: Int? { Double(variationValue).map { Int($0) } }
        var double: Double? { Double(variationValue) }
        var object: [String: String]? {
            try? JSONDecoder().decode([String: String].self, from: Data(variationValue.utf8))
        }
    }

    struct Reason: Decodable, Equatable {
        let type: ReasonType
        var ruleId: String = ""

        init(type: ReasonType, ruleId: String = "") {
            self.type = type
            self.ruleId = ruleId
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(ReasonType.self, forKey: .type)
            ruleId = try container.decodeIfPresent(String.self, forKey: .ruleId) ?? ""
        }

        enum CodingKeys: String, CodingKey { case type, ruleId }
    }

    // The SDK's own spelling.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    enum ReasonType: String, Decodable {
        case TARGET, RULE, DEFAULT, CLIENT, OFF_VARIATION, PREREQUISITE
    }

    struct RegisterEventsResponse: Decodable {
        let errors: [String: EventError]
    }

    struct EventError: Decodable, Equatable {
        let retriable: Bool
        let message: String
    }

    struct ErrorResponse: Decodable {
        struct Body: Decodable {
            let code: Int
            let message: String
        }
        let error: Body
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) throws -> Value {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// The SDK's device cache: one row per evaluation id (`INSERT OR REPLACE`), read back by user.
    struct DeviceCache {
        private var rows: [String: Evaluation] = [:]

        mutating func store(_ answer: GetEvaluationsResponse, for user: String) {
            if answer.evaluations.forceUpdate { rows = rows.filter { $0.value.userId != user } }
            for evaluation in answer.evaluations.evaluations { rows[evaluation.id] = evaluation }
        }

        func flags(of user: String) -> [Evaluation] { rows.values.filter { $0.userId == user } }
    }
}

extension JSONObject {
    /// Sets `key`, in its place when present.
    fileprivate mutating func put(_ key: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            append(key, value)
        }
    }
}
