import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// Webhooks as the store keeps them: each ramp event queued in the transaction of what it tells,
/// claimed by one sender, retried with backoff, given up, revoked. Sending is FlagpoleWebhooks'.
@Suite("Webhooks in the store")
struct WebhookStoreTests {
    let path = EnvironmentPath.acmeProduction
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    /// What the ramp tests listen to: a webhook that hears every event also hears each step's revision.
    static let rampEvents = try! StoreEventKind.parse("ramp.*,trigger.fired")

    func storeWithWebhooks() async throws -> (FeatureStore, json: CreatedWebhook, slack: CreatedWebhook) {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.assignments.assign(UserID.numbered(200), to: "checkout", in: path)
        let json = try await store.outbound.createWebhook(
            try WebhookURL(validating: "https://hooks.example.com/flagpole/T0K3N"), format: .json,
            events: Self.rampEvents, in: path, actor: "cli:ada", now: start)
        let slack = try await store.outbound.createWebhook(
            try WebhookURL(validating: "https://hooks.slack.com/services/T000/B000/XXXX"), format: .slack,
            events: Self.rampEvents, in: path, actor: "cli:ada", now: start)
        return (store, json, slack)
    }

    /// Every body queued for `webhook`, oldest first, read as JSON.
    func bodies(_ store: FeatureStore, _ webhook: CreatedWebhook) async throws -> [JSONObject] {
        let id = webhook.webhook.id
        let texts = try await store.read { db in
            try db.values(String.self, "SELECT body FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq", [id])
        }
        return try texts.map { text in
            guard case .object(let object) = try JSONValue(storedText: text) else {
                throw WebhookError.invalidFormat("not an object")
            }
            return object
        }
    }

    @Test("A webhook's secret is shown once; lists show its host only, never the secret or the path's token")
    func createdAndListed() async throws {
        let (store, json, slack) = try await storeWithWebhooks()
        #expect(json.secret.hasPrefix("whsec_") && json.secret.count == 70 && json.secret != slack.secret)
        let listed = try await store.outbound.webhooks(in: path)
        #expect(listed.map(\.url.shown) == ["https://hooks.example.com/…", "https://hooks.slack.com/…"])
        #expect(!"\(listed.map(\.jsonValue))".contains("T0K3N") && !"\(listed.map(\.jsonValue))".contains("whsec_"))
    }

    @Test(
        "Each step, pause, roll-back, finish and trigger is queued for every webhook, in its own transaction's commit")
    func rampEventsQueued() async throws {
        let (store, json, slack) = try await storeWithWebhooks()
        let request = RampRequest(
            feature: "checkout", variation: nil, steps: [10, 50, 100], hold: .duration(seconds: 3600))
        // A dry run queues nothing.
        _ = try await store.rollouts.createRamp(request, in: path, actor: "cli:ada", now: start, isDryRun: true)
        #expect(try await bodies(store, json).isEmpty)

        _ = try await store.rollouts.createRamp(request, in: path, actor: "cli:ada", now: start)
        _ = try await store.rollouts.pauseRamp(
            of: "checkout", in: path, actor: "cli:bob", now: start.addingTimeInterval(60))
        _ = try await store.rollouts.resumeRamp(
            of: "checkout", in: path, actor: "cli:bob", now: start.addingTimeInterval(120))
        _ = try await store.rollouts.advanceRamp(
            of: "checkout", in: path, actor: "cli:bob", now: start.addingTimeInterval(180))
        _ = try await store.rollouts.advanceRamp(
            of: "checkout", in: path, actor: "cli:bob", now: start.addingTimeInterval(240))
        let bodies = try await bodies(store, json)
        #expect(
            bodies.map { $0["event"] }
                == [
                    "ramp.step_applied", "ramp.paused", "ramp.step_applied", "ramp.step_applied", "ramp.finished",
                ].map(JSONValue.string))
        let first = try #require(bodies.first)
        #expect(first["tenant"] == .string("acme") && first["environment"] == .string("production"))
        #expect(first["feature"] == .string("checkout") && first["ramp"] == .number(1))
        #expect(
            first["share"] == .number(10) && first["step"] == .number(0) && first["appliedBy"] == .string("schedule"))
        let applied = try await store.rollouts.ramp(of: "checkout", in: path).ramp.applied
        #expect(first["revision"] == .number(Double(applied[0].revision)))
        #expect(
            bodies[2]["appliedBy"] == .string("cli:bob")
                && bodies[2]["revision"] == .number(Double(applied[1].revision)))
        #expect(bodies[1]["actor"] == .string("cli:bob") && bodies[1]["reason"] != nil)

        // Slack's body is its text alone, made as it is sent.
        let slackBodies = try await store.outbound.claimDueDeliveries(now: start.addingTimeInterval(300), limit: 100)
            .filter { $0.webhookID == slack.webhook.id }.map { delivery in
                guard
                    case .object(let object) = try JSONValue(
                        storedText: String(decoding: delivery.body(linkingFrom: nil), as: UTF8.self))
                else { throw WebhookError.invalidFormat("not an object") }
                return object
            }
        #expect(slackBodies.count == 5 && slackBodies.allSatisfy { $0.keys == ["text"] })
        guard case .string(let text) = slackBodies[0]["text"] else { throw WebhookError.invalidFormat("no text") }
        #expect(
            text.hasPrefix(
                "Flagpole · acme/production: ramp 1 of checkout: step 1 of 3 applied by schedule, Enabled 10 %, as revision \(applied[0].revision); \(applied[0].movedUsers) recorded users moved"
            ))
    }

    @Test("A trigger that acts is told, with what it did; a roll-back is told as one")
    func triggerAndRollback() async throws {
        let (store, json, _) = try await storeWithWebhooks()
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [10, 100], hold: .duration(seconds: 3600)),
            in: path, actor: "cli:ada", now: start)
        let trigger = try await store.rollouts.createTrigger(
            for: "checkout", action: .rollback, name: "Sentry", in: path, actor: "t", now: start)
        _ = try await store.rollouts.callTrigger(trigger.token, address: "198.51.100.1", userAgent: nil, now: start)
        let events = try await bodies(store, json).map { $0["event"] }
        #expect(events == ["ramp.step_applied", "ramp.rolled_back", "trigger.fired"].map(JSONValue.string))
        let fired = try #require(try await bodies(store, json).last)
        #expect(fired["trigger"] == .string("Sentry") && fired["caller"] == .string("198.51.100.1"))
    }

    @Test("A due delivery is claimed by one sender until its claim runs out; attempts back off, then give up")
    func claimRetryGiveUp() async throws {
        let (store, json, slack) = try await storeWithWebhooks()
        try await store.outbound.revokeWebhook(slack.webhook.id, in: path, now: start)
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [10, 100], hold: .duration(seconds: 3600)),
            in: path, actor: "cli:ada", now: start)
        let first = try await store.outbound.claimDueDeliveries(now: start)
        #expect(first.count == 1 && first[0].url == json.webhook.url && first[0].secret == json.secret)
        #expect(try await store.outbound.claimDueDeliveries(now: start.addingTimeInterval(59)).isEmpty)
        var delivery = try #require(
            try await store.outbound.claimDueDeliveries(now: start.addingTimeInterval(60)).first)
        #expect(delivery.id == first[0].id)

        // Each failed attempt that another could mend waits longer: 30 s, 2 min, 10 min, 1 h, 6 h.
        var now = start.addingTimeInterval(60)
        for (attempt, wait) in Outbound.webhookRetryDelays.enumerated() {
            #expect(delivery.attempts == attempt)
            try await store.outbound.recordDeliveryAttempt(
                delivery, DeliveryAttempt(status: 503, answer: "busy", error: "answered 503", isWorthRetrying: true),
                now: now)
            #expect(try await store.outbound.claimDueDeliveries(now: now.addingTimeInterval(wait - 1)).isEmpty)
            now = now.addingTimeInterval(wait)
            delivery = try #require(try await store.outbound.claimDueDeliveries(now: now).first)
        }
        try await store.outbound.recordDeliveryAttempt(
            delivery, DeliveryAttempt(status: 503, error: "answered 503", isWorthRetrying: true), now: now)
        #expect(try await store.outbound.claimDueDeliveries(now: .distantFuture).isEmpty)
        let log = try #require(try await store.outbound.webhooks(in: path).first?.deliveries.first)
        #expect(log.state == .failed && log.attempts == 6 && log.status == 503)
        #expect(log.summary == "failed after 6 attempts: answered 503")
        // The revoked webhook was told nothing.
        #expect(try await store.outbound.webhooks(in: path).last?.deliveries.isEmpty == true)
    }

    @Test("A refused address or a redirect is given up at once; a 2xx is delivered; revoking gives up what is pending")
    func notWorthRetrying() async throws {
        let (store, json, slack) = try await storeWithWebhooks()
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [10, 100], hold: .duration(seconds: 3600)),
            in: path, actor: "cli:ada", now: start)
        let due = try await store.outbound.claimDueDeliveries(now: start)
        let toJSON = try #require(due.first { $0.url == json.webhook.url })
        try await store.outbound.recordDeliveryAttempt(
            toJSON,
            DeliveryAttempt(
                status: 302, error: "answered 302 to http://10.0.0.1/: redirects are not followed",
                isWorthRetrying: false),
            now: start)
        _ = try await store.rollouts.pauseRamp(of: "checkout", in: path, actor: "cli:bob", now: start)
        let paused = try #require(
            try await store.outbound.claimDueDeliveries(now: start.addingTimeInterval(61)).first {
                $0.url == json.webhook.url
            })
        try await store.outbound.recordDeliveryAttempt(
            paused, DeliveryAttempt(status: 204, answer: "", isWorthRetrying: false), now: start)
        try await store.outbound.revokeWebhook(slack.webhook.id, in: path, now: start)
        #expect(try await store.outbound.claimDueDeliveries(now: .distantFuture).isEmpty)
        let webhooks = try await store.outbound.webhooks(in: path)
        #expect(webhooks[0].deliveries.map(\.state) == [.delivered, .failed])
        #expect(webhooks[1].deliveries.map(\.error) == ["the webhook was revoked", "the webhook was revoked"])
        await #expect(throws: WebhookError.webhookNotFound(path, id: slack.webhook.id)) {
            try await store.outbound.revokeWebhook(slack.webhook.id, in: path, now: start)
        }
    }

    @Test("Bad URLs are refused with what is wrong")
    func badURLs() throws {
        for (text, reason) in [
            ("ftp://example.com/", "is not an http:// or https:// URL"), ("https:///nohost", "names no host"),
            ("https://user:pw@example.com/", "carries a user or password: put a token in the path instead"),
            ("https://example.com/#x", "has a #fragment"), ("not a url", "is not an http:// or https:// URL"),
        ] {
            #expect(throws: WebhookError.invalidURL(text, reason: reason)) { try WebhookURL(validating: text) }
        }
        #expect(throws: WebhookError.invalidFormat("xml")) { try WebhookFormat(validating: "xml") }
        #expect(try WebhookURL(validating: "http://[::1]:8080/hook").host == "::1")
    }

    @Test("Fetch counts add up across servers, by revision span and client")
    func fetchCounts() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        let key = { (revision: Int, client: FetchClient) in FetchKey(path: path, revision: revision, client: client) }
        try await store.outbound.addFetchCounts([key(1, .shared): 5, key(1, .pinned): 2], now: start)
        try await store.outbound.addFetchCounts([key(1, .shared): 3, key(2, .ofrep): 4], now: start)
        // An environment that is gone drops its counts, not the others'.
        try await store.outbound.addFetchCounts(
            [
                FetchKey(
                    path: EnvironmentPath(
                        tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "gone")),
                    revision: 1, client: .shared): 9
            ],
            now: start)
        #expect(try await store.outbound.fetchCounts(in: path, revisions: 1..<2).byClient == [.shared: 8, .pinned: 2])
        #expect(try await store.outbound.fetchCounts(in: path, revisions: 1..<Int.max).total == 14)
        #expect(
            try await store.outbound.fetchCounts(in: path, revisions: 2..<Int.max).description == "4 fetches (ofrep 4)")
        #expect(try await store.outbound.fetchCounts(in: path, revisions: 3..<Int.max).description == "no fetch yet")
    }

    @Test(
        "Refused event batches from several servers add up by hour; a day's summary reads them, and counts two days old go"
    )
    func keptByTheStore() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let acme = EnvironmentPath.acmeProduction
        let noon = Date(timeIntervalSince1970: 1_795_003_200)
        let typo = RefusedBatchKey(path: acme, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d")
        let none = RefusedBatchKey(path: acme, cause: .unknownKey, keyPrefix: "")
        let gone = RefusedBatchKey(
            path: EnvironmentPath(tenant: acme.tenant, environment: EnvironmentName(rawValue: "gone")),
            cause: .unknownKey, keyPrefix: "")
        try await store.outbound.addRefusedEventBatches([typo: 2, none: 1, gone: 5], now: noon)
        try await store.outbound.addRefusedEventBatches([typo: 7], now: noon.addingTimeInterval(60))
        let day = try await store.outbound.refusedEventBatches(
            of: acme.tenant, since: noon.addingTimeInterval(-86_400))
        #expect(day.keys.map(\.rawValue) == ["production"])
        let production = try #require(day[.production])
        #expect(production.batches == [.unknownKey: ["fp_1a2b3c4d": 9, "": 1]])
        #expect(
            production.summary(span: "the last 24 h")
                == "10 event batches refused in the last 24 h: unknown key 10 (fp_1a2b3c4d… 9, no key 1)")
        #expect(
            try await store.outbound.refusedEventBatches(of: EnvironmentPath.globexProduction.tenant, since: noon)
                .isEmpty)

        let later = noon.addingTimeInterval(49 * 3600)
        try await store.outbound.addRefusedEventBatches([none: 1], now: later)
        let since = try await store.outbound.refusedEventBatches(of: acme.tenant, since: .distantPast)
        #expect(since[.production]?.batches == [.unknownKey: ["": 1]], "rows two days old are dropped")
    }
}
