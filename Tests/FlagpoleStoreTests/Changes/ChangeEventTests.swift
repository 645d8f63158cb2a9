import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// What a write tells as it commits (`Transaction.finish`): a `revision.created` event for every
/// revision, queued for the webhooks that hear it, and a step of the environment's change
/// sequence naming the users a per-user write changed, which every server reads.
@Suite("What a write tells")
struct ChangeEventTests {
    let path = EnvironmentPath.acmeProduction
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A store with the ramp tests' document, 50 users recorded, and a JSON webhook hearing `events`.
    func store(hearing events: String = "revision.created") async throws -> (FeatureStore, Webhook) {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.assignments.assign(UserID.numbered(50), to: "checkout", in: path)
        let webhook = try await store.outbound.createWebhook(
            try WebhookURL(validating: "https://hooks.example.com/flagpole"), format: .json,
            events: try StoreEventKind.parse(events), in: path, actor: "cli:ada", now: start
        ).webhook
        return (store, webhook)
    }

    /// The bodies queued for `webhook`, oldest first.
    func queued(_ store: FeatureStore, _ webhook: Webhook) async throws -> [JSONObject] {
        try await store.read { db in
            try db.values(
                String.self, "SELECT body FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq", [webhook.id])
        }.map { text in
            guard case .object(let object) = try JSONValue(storedText: text) else { return [:] }
            return object
        }
    }

    @Test("Every way of writing a revision tells revision.created once, with who, what and the users moved")
    func everyRevisionIsTold() async throws {
        let (store, webhook) = try await store()
        let options = EditOptions(message: "phase 2", actor: "member:ada@example.com")
        _ = try await store.catalog.setBiases([20, 80], of: "checkout", in: path, options: options)
        _ = try await store.catalog.setEnabled(
            false, feature: "other", in: path, options: EditOptions(actor: "key:abc"))
        _ = try await store.importText(
            #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [20, 80]}, {"name": "other", "test-variations": ["A", "B"]}, {"name": "new", "enabled": true}]}"#
        )
        let ramp = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [30, 100], hold: .duration(seconds: 3_600)),
            in: path, actor: "cli:bob", now: start)
        _ = try await store.catalog.setEnabled(false, feature: "new", in: path, options: EditOptions(actor: "key:abc"))
        let bodies = try await queued(store, webhook)
        #expect(bodies.allSatisfy { $0["event"] == .string("revision.created") })
        #expect(bodies.map { $0["revision"] } == [2, 3, 4, 5, 6].map { .number(Double($0)) })
        #expect(bodies.map { $0["kind"] } == ["bias", "edit", "import", "bias", "edit"].map(JSONValue.string))
        let bias = bodies[0]
        #expect(bias["actor"] == .string("member:ada@example.com") && bias["message"] == .string("phase 2"))
        #expect(bias["features"] == .array([.string("checkout")]) && bias["featureCount"] == .number(1))
        #expect(bias["changes"] == .array([.string("test-biases")]))
        // The plan's totals: the recorded users the bias change moved.
        guard case .number(let moved) = bias["movedUsers"] else { throw WebhookError.invalidFormat("no movedUsers") }
        #expect(moved > 0 && moved < 50)
        #expect(bias["link"] == .string("/tenants/acme/production/revisions?from=1&to=2"))
        #expect(
            bias["text"]
                == .string(
                    "revision 2 (bias) by member:ada@example.com: phase 2 — feature checkout; \(Int(moved)) recorded users moved"
                ))
        #expect(bodies[1]["changes"] == .array([.string("enabled")]))
        // A flag's change moves nobody's group and has no plan: its total is null.
        #expect(bodies[4]["movedUsers"] == .null && bodies[4]["features"] == .array([.string("new")]))
        guard case .array(let imported) = bodies[2]["features"], case .array(let kinds) = bodies[2]["changes"] else {
            throw WebhookError.invalidFormat("no features")
        }
        #expect(imported.contains(.string("new")) && kinds.contains(.string("feature added")))
        #expect(bodies[3]["actor"] == .string("ramp:\(ramp.ramp.id) by cli:bob"))
    }

    @Test("The audit feed tells each revision with the fields its revision.created event had")
    func auditFeed() async throws {
        let (store, webhook) = try await store()
        _ = try await store.catalog.setBiases([20, 80], of: "checkout", in: path, options: EditOptions(actor: "t"))
        _ = try await store.catalog.setEnabled(false, feature: "other", in: path, options: EditOptions(actor: "t"))
        let told = try await queued(store, webhook)
        let fed = try await store.changes.revisionEvents(in: path, since: .distantPast).map { event -> JSONObject in
            guard case .object(let object) = event.jsonValue else { return [:] }
            return object
        }
        #expect(fed.count == 3 && fed[0]["revision"] == .number(1) && fed[0]["kind"] == .string("import"))
        // The same fields as the events, `at` aside (the feed reads it back at a millisecond).
        func withoutTime(_ object: JSONObject) -> JSONObject { JSONObject(object.members.filter { $0.key != "at" }) }
        #expect(fed.dropFirst().map(withoutTime) == told.map(withoutTime))
        #expect(try await store.changes.revisionEvents(in: path, since: .distantPast, limit: 1).count == 1)
        #expect(try await store.changes.revisionEvents(in: path, since: Date().addingTimeInterval(60)).isEmpty)
    }

    @Test("A dry run and a refused change tell nothing; a webhook hears only the events it chose")
    func nothingUnwritten() async throws {
        let (store, webhook) = try await store(hearing: "ramp.*")
        _ = try await store.catalog.setBiases(
            [20, 80], of: "checkout", in: path, options: EditOptions(isDryRun: true, actor: "t"))
        await #expect(throws: (any Error).self) {
            _ = try await store.catalog.setBiases([20, 90], of: "checkout", in: path, options: EditOptions(actor: "t"))
        }
        _ = try await store.catalog.setBiases([20, 80], of: "checkout", in: path, options: EditOptions(actor: "t"))
        #expect(try await queued(store, webhook).isEmpty)
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [30, 100], hold: .duration(seconds: 3_600)),
            in: path, actor: "cli:bob", now: start)
        #expect(try await queued(store, webhook).map { $0["event"] } == [.string("ramp.step_applied")])
    }

    @Test("A 10 000-feature import names its first 100 features and counts them all")
    func largeImportIsCounted() async throws {
        let (store, webhook) = try await store()
        let features = (0..<150).map { #"{"name": "f\#($0)", "enabled": true}"# }.joined(separator: ", ")
        try await store.importText(#"{"features": [\#(features)]}"#)
        let body = try #require(try await queued(store, webhook).last)
        guard case .array(let names) = body["features"] else { throw WebhookError.invalidFormat("no features") }
        // The two features the import dropped are archived: they count too.
        #expect(names.count == 100 && body["featureCount"] == .number(152))
    }

    @Test("Event names: names, families and a star resolve; anything else is refused with the list")
    func eventNames() throws {
        #expect(try StoreEventKind.parse("revision.created") == [.revisionCreated])
        #expect(try StoreEventKind.parse(" ramp.*, trigger.fired ").count == 6)
        #expect(try StoreEventKind.parse("*") == StoreEventKind.allCases)
        for bad in ["", "ramp", "ramps.*", "revision.created,nope", "*.created"] {
            #expect(throws: WebhookError.self) { try StoreEventKind.parse(bad) }
        }
        #expect(WebhookError.unknownEvent("nope").description.contains("revision.created, ramp.step_applied"))
    }

    @Test("Slack's line ends with the link under the public URL; a message's own <…> is escaped")
    func slackLine() throws {
        let event = StoreEvent.revisionCreated(
            number: 7, kind: .edit, actor: "cli:ada", message: "<!channel> & more", changes: [],
            movedUsers: nil, in: path, at: start)
        let delivery = DueDelivery(
            id: "d", webhookID: 1, event: "revision.created", storedBody: Array(event.storedBody.utf8), attempts: 0,
            url: try WebhookURL(validating: "https://hooks.slack.com/x"), format: .slack, secret: "s")
        let line = String(decoding: delivery.body(linkingFrom: "https://flags.example.com/"), as: UTF8.self)
        #expect(
            line
                == #"{"text":"Flagpole · acme/production: revision 7 (edit) by cli:ada: &lt;!channel&gt; &amp; more <https://flags.example.com/tenants/acme/production/revisions?from=6&to=7|what changed>"}"#
        )
        var json = delivery
        json.format = .json
        let body = String(decoding: json.body(linkingFrom: nil), as: UTF8.self)
        #expect(!body.contains("\"link\"") && !body.contains("\"url\""))
        #expect(
            String(decoding: json.body(linkingFrom: "https://f.example"), as: UTF8.self).contains(
                #""url":"https://f.example/tenants/acme/production/revisions?from=6&to=7""#))
    }

    @Test("Each write takes one step of its environment's change sequence, naming the users a per-user write changed")
    func changeSequence() async throws {
        let (store, _) = try await store()
        let start = try await store.changes.since([:])
        #expect(start.map(\.path) == [.acmeProduction, .globexProduction] && start.allSatisfy { $0.users == nil })
        var known = Dictionary(uniqueKeysWithValues: start.map { ($0.path, $0.sequence) })
        var steps: Int64 = 0
        func next() async throws -> EnvironmentChanges? {
            let changes = try await store.changes.since(known)
            steps = changes.first.map { $0.sequence - (known[$0.path] ?? 0) } ?? 0
            for change in changes { known[change.path] = change.sequence }
            #expect(changes.count <= 1)
            return changes.first
        }
        #expect(try await next() == nil)
        _ = try await store.assignments.setOverride(
            "checkout", user: UserID(rawValue: "user-1"), variation: "Disabled", in: path)
        _ = try await store.assignments.setOverride("other", user: UserID(rawValue: "user-2"), variation: "A", in: path)
        let perUser = try #require(try await next())
        #expect(perUser.path == path && perUser.users == [UserID(rawValue: "user-1"), UserID(rawValue: "user-2")])
        #expect(steps == 2)
        // A first assignment through the group commit names its user, in one step (on PostgreSQL,
        // taken by the statement that records the group's first assignments ahead).
        _ = try await store.assignments.assign([UserID(rawValue: "newcomer")], to: "checkout", in: path)
        #expect(try await next()?.users == [UserID(rawValue: "newcomer")])
        #expect(steps == 1)
        // More users than a step names (100): any user.
        _ = try await store.assignments.assign(UserID.numbered(150), to: "checkout", in: path)
        #expect(try await next().map { $0.users == nil } == true)
        #expect(steps == 1)
        // A revision changes what everyone is served.
        _ = try await store.catalog.setBiases([10, 90], of: "checkout", in: path, options: EditOptions(actor: "t"))
        #expect(try await next().map { $0.users == nil } == true)
        // A forget names nobody: the steps kept so far go, and the environment reads as wholly changed.
        _ = try await store.assignments.setOverride(
            "checkout", user: UserID(rawValue: "user-3"), variation: "Disabled", in: path)
        let beforeForget = known
        _ = try await store.assignments.forget(UserID(rawValue: "user-3"), in: path.tenant, actor: "t")
        let kept = try await store.read { db in
            try db.values(String.self, "SELECT coalesce(users, 'any') FROM environment_changes")
        }
        #expect(kept == ["any"])
        known = beforeForget
        #expect(try await next().map { $0.users == nil } == true)
        // A reader behind the steps the tick deleted reads the whole environment as changed.
        _ = try await store.assignments.setOverride(
            "checkout", user: UserID(rawValue: "user-4"), variation: "Disabled", in: path)
        let pruned = try await store.changes.prune(now: Date().addingTimeInterval(Changes.changesKept + 60))
        #expect(pruned.changes >= 1)
        #expect(try await next().map { $0.users == nil } == true)
    }

    @Test("The tick deletes deliveries delivered or given up more than the kept days ago, never a pending one")
    func deliveriesPruned() async throws {
        let (store, webhook) = try await store()
        _ = try await store.catalog.setBiases([20, 80], of: "checkout", in: path, options: EditOptions(actor: "t"))
        _ = try await store.catalog.setBiases([30, 70], of: "checkout", in: path, options: EditOptions(actor: "t"))
        let due = try await store.outbound.claimDueDeliveries(now: .distantFuture)
        try await store.outbound.recordDeliveryAttempt(
            due[0], DeliveryAttempt(status: 200, isWorthRetrying: false), now: start)
        let later = Date().addingTimeInterval(Changes.deliveriesKept + 86_400)
        #expect(try await store.changes.prune(now: later, keepingDeliveries: Changes.deliveriesKept).deliveries == 1)
        let left = try await store.outbound.webhooks(in: path).first { $0.id == webhook.id }!.deliveries
        #expect(left.map(\.state) == [.pending])
    }
}
