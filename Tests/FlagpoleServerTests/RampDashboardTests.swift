import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// The ramp page: a ramp planned then started from its form, its timeline, and each action
/// planned before it is done.
@Suite("The dashboard's ramp page")
struct RampDashboardTests {
    static let feature = "/tenants/acme/production/features/checkout"
    static let page = "\(feature)/ramp"

    @Test("A ramp is planned, started, paused, resumed, advanced and aborted from its page, each action planned first")
    func lifecycle() async throws {
        let server = try await RampAPITests.server()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let empty = try await browser.get(Self.page)
            #expect(empty.status == .ok && empty.text.contains("checkout has no ramp yet."))
            #expect(empty.text.contains(#"<option value="Enabled" selected>Enabled</option>"#))
            let csrf = DashboardBrowser.csrf(in: empty)
            #expect(try await browser.get(Self.feature).text.contains(#"id="ramp-link""#))

            // Planned: every step's plan, nothing written.
            let fields: KeyValuePairs<String, String> = [
                "csrf": csrf, "do": "create", "variation": "Enabled", "steps": "1, 5, 20, 50, 100", "hold": "24h",
                "action": "preview",
            ]
            let plan = try await browser.post(Self.page, fields)
            #expect(plan.status == .ok)
            for step in ["Step 1: Enabled 1 %", "Step 3: Enabled 20 %", "Step 5: Enabled 100 %", "Start the ramp"] {
                #expect(plan.text.contains(step), "\(step)")
            }
            #expect(try await server.store.rollouts.ramps(in: TestServer.acme).isEmpty)

            let started = try await browser.post(
                Self.page,
                [
                    "csrf": csrf, "do": "create", "variation": "Enabled", "steps": "1, 5, 20, 50, 100", "hold": "24h",
                    "action": "apply",
                ])
            #expect(
                started.status == .seeOther && started.headers[.location] == "\(Self.page)?notice=ramp-changed#notice")
            let timeline = try await browser.get(started.headers[.location]!)
            #expect(timeline.text.contains("Step 1: 1 %</strong> · Applied as revision"))
            #expect(timeline.text.contains("Step 2: 5 %</strong> · Due"))
            #expect(timeline.text.contains("Created by") && timeline.text.contains("Plan pausing"))
            #expect(timeline.text.contains("Steps to come") && !timeline.text.contains("Start a ramp"))
            #expect(try await browser.get(Self.feature).text.contains("<strong>Ramp 1 is running.</strong>"))

            for (action, label, state) in [
                ("pause", "Pause the ramp", RampState.paused), ("resume", "Resume the ramp", .running),
                ("advance", "Apply the next step now", .running),
            ] {
                let planned = try await browser.post(Self.page, ["csrf": csrf, "do": action, "action": "preview"])
                #expect(planned.status == .ok && planned.text.contains(label), "\(action)")
                let done = try await browser.post(Self.page, ["csrf": csrf, "do": action, "action": "apply"])
                #expect(done.status == .seeOther, "\(action)")
                #expect(try await server.store.rollouts.ramp(of: "checkout", in: TestServer.acme).ramp.state == state)
            }
            #expect(try await server.store.rollouts.ramp(of: "checkout", in: TestServer.acme).ramp.applied.count == 2)

            let abort = try await browser.post(
                Self.page, ["csrf": csrf, "do": "abort", "rollBack": "true", "action": "preview"])
            #expect(abort.text.contains("Rolling back to 0 %") && abort.text.contains("Abort and roll back to 0 %"))
            _ = try await browser.post(Self.page, ["csrf": csrf, "do": "abort", "rollBack": "true", "action": "apply"])
            let over = try await browser.get(Self.page)
            #expect(over.text.contains("Aborted") && over.text.contains("Start a ramp"))
            #expect(
                try await server.store.catalog.feature("checkout", in: TestServer.acme).feature.testBiases == [0, 100])
        }
    }

    @Test("Bad steps are refused on the page with what to fix; a reader sees the timeline but no form")
    func refusals() async throws {
        let server = try await RampAPITests.server()
        try await server.test { client in
            var editor = DashboardBrowser(client)
            try await editor.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await editor.get(Self.page))
            let bad = try await editor.post(
                Self.page, ["csrf": csrf, "do": "create", "steps": "5, 1", "hold": "24h", "action": "preview"])
            #expect(bad.status == .unprocessableContent && bad.text.contains("is not above step 1"))
            #expect(bad.text.contains(#"value="5, 1""#))
            let word = try await editor.post(
                Self.page, ["csrf": csrf, "do": "create", "steps": "1, five", "hold": "24h", "action": "preview"])
            #expect(word.status == .unprocessableContent && word.text.contains("“five” is not a share"))
            #expect(try await server.store.rollouts.ramps(in: TestServer.acme).isEmpty)

            _ = try await editor.post(
                Self.page, ["csrf": csrf, "do": "create", "steps": "10, 100", "hold": "1h", "action": "apply"])
            var reader = DashboardBrowser(client)
            try await reader.signIn(with: server.key("acme", .reader))
            let read = try await reader.get(Self.page)
            #expect(read.text.contains("Step 1: 10 %") && !read.text.contains("Plan pausing"))
            let refused = try await reader.post(
                Self.page, ["csrf": DashboardBrowser.csrf(in: read), "do": "pause", "action": "apply"])
            #expect(refused.status == .forbidden)
        }
    }

    @Test("Guards are written in the form, kept as typed when refused, and shown on the timeline with the defaults")
    func guards() async throws {
        let server = try await RampAPITests.server()
        try await server.test { client in
            var editor = DashboardBrowser(client)
            try await editor.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await editor.get(Self.page))
            let unknown = try await editor.post(
                Self.page,
                [
                    "csrf": csrf, "do": "create", "steps": "10, 100", "hold": "1h", "guards": "crashes:+0.2pt",
                    "action": "preview",
                ])
            #expect(unknown.status == .unprocessableContent && unknown.text.contains("has no goal “crashes”"))
            #expect(unknown.text.contains(#"value="crashes:+0.2pt""#))
            try await server.store.experiments.createGoal(
                Goal(name: "crashes", kind: .conversion, better: .lower), in: TestServer.acme)
            func form(_ action: String) -> KeyValuePairs<String, String> {
                [
                    "csrf": csrf, "do": "create", "steps": "10, 100", "hold": "1h", "guards": "crashes:+0.2pt",
                    "onFailure": "rollback", "action": action,
                ]
            }
            let plan = try await editor.post(Self.page, form("preview"))
            #expect(plan.text.contains(#"name="guards" value="crashes:+0.2pt""#))
            // The dry run lists the guards the ramp would run with, what a failure does, and when each step comes.
            #expect(
                plan.text.contains("<li>Guard crashes:+0.2pt</li>") && plan.text.contains("<li>Guard sample-ratio</li>")
            )
            #expect(plan.text.contains("Step 1: Enabled 10 % <small>· applies now</small>"))
            #expect(plan.text.contains("Step 2: Enabled 100 % <small>· due <time datetime="))
            #expect(plan.text.contains(#"name="onFailure" value="rollback""#))
            let applied = try await editor.post(Self.page, form("apply"))
            let started = try await editor.get(try #require(applied.headers[.location]))
            #expect(started.text.contains("<code>crashes:+0.2pt</code> · not looked at yet"))
            #expect(
                started.text.contains("<code>sample-ratio</code>")
                    && started.text.contains(
                        "A failed goal guard rolls Enabled back to 0 %; any other failed guard pauses the ramp.")
            )
            let ramp = try #require(try await server.store.rollouts.ramps(in: TestServer.acme).first)
            #expect(ramp.onFailure == .rollback && ramp.guards.count == 4)
        }
    }

    @Test(
        "The form takes a start time with its zone: the plan says when, applying waits for it, a bad time is refused in place"
    )
    func startLater() async throws {
        let server = try await RampAPITests.server()
        try await server.test { client in
            var editor = DashboardBrowser(client)
            try await editor.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await editor.get(Self.page))
            func form(_ start: String, _ action: String) -> KeyValuePairs<String, String> {
                ["csrf": csrf, "do": "create", "steps": "10, 100", "hold": "1h", "start": start, "action": action]
            }
            let refused = try await editor.post(Self.page, form("tomorrow", "preview"))
            #expect(
                refused.status == .unprocessableContent && refused.text.contains("The start “tomorrow” is not a time"))
            #expect(refused.text.contains(#"id="ramp-start" name="start" value="tomorrow""#))
            let plan = try await editor.post(Self.page, form("2027-01-16T09:00:00Z", "preview"))
            #expect(plan.status == .ok && plan.text.contains("would be applied at 2027-01-16 09:00 UTC"))
            #expect(plan.text.contains(#"<input type="hidden" name="start" value="2027-01-16T09:00:00Z">"#))
            _ = try await editor.post(Self.page, form("2027-01-16T09:00:00Z", "apply"))
            let ramp = try #require(try await server.store.rollouts.ramps(in: TestServer.acme).first)
            #expect(ramp.applied.isEmpty && ramp.dueAt == Date(timeIntervalSince1970: 1_800_090_000))
        }
    }

    @Test(
        "A trigger made on the ramp page shows its URL once; an alert's call pauses the ramp; revoking is confirmed first"
    )
    func triggers() async throws {
        let server = try await RampAPITests.server()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.page))
            _ = try await browser.post(
                Self.page, ["csrf": csrf, "do": "create", "steps": "10, 100", "hold": "1h", "action": "apply"])
            let made = try await browser.post(
                "\(Self.page)/triggers", ["csrf": csrf, "name": "Crashlytics velocity", "triggerAction": "pause"])
            #expect(made.status == .created)
            let url = try #require(made.text.firstMatch(of: /id="new-trigger-url">([^<]+)</).map { String($0.1) })
            let token = try #require(url.split(separator: "token=").last.map(String.init))
            #expect(url.hasSuffix("/triggers?token=\(token)"))
            let reloaded = try await browser.get(Self.page)
            #expect(!reloaded.text.contains(token) && reloaded.text.contains("Crashlytics velocity"))

            #expect(try await client.send(.post, "/triggers?token=\(token)", body: "{}").status == .ok)
            let paused = try await browser.get(Self.page)
            #expect(
                paused.text.contains("paused ramp 1") && paused.text.contains("Paused: trigger Crashlytics velocity"))

            let prefix = String(token.prefix(12))
            let confirm = try await browser.post(
                "\(Self.page)/triggers/revoke", ["csrf": csrf, "prefix": prefix, "action": "preview"])
            #expect(confirm.text.contains("Revoke Crashlytics velocity (<code>\(prefix)…</code>)?"))
            #expect(try await server.store.rollouts.triggers(in: TestServer.acme).first?.revokedAt == nil)
            let revoked = try await browser.post(
                "\(Self.page)/triggers/revoke", ["csrf": csrf, "prefix": prefix, "action": "apply"])
            #expect(revoked.status == .seeOther)
            #expect(try await server.store.rollouts.triggers(in: TestServer.acme).first?.revokedAt != nil)
            #expect(try await client.send(.post, "/triggers?token=\(token)", body: "{}").status == .gone)
        }
    }

    @Test(
        "Settings › Environments › Webhooks: one added shows its secret once and hears the events ticked; an inside address is refused unless allowed; revoking is confirmed first; the ramp page links there"
    )
    func webhooks() async throws {
        let page = "/tenants/acme/settings/environments/production/webhooks"
        let refusing = try await RampAPITests.server()
        try await refusing.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: refusing.key("acme", .editor))
            #expect(try await browser.get(Self.page).text.contains(#"<a href="\#(page)" id="webhooks-link">"#))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(page))
            let loopback = try await browser.post(
                page,
                ["csrf": csrf, "url": "http://127.0.0.1:9/hook", "format": "json", "events[]": "ramp.paused"])
            #expect(loopback.status == .forbidden)
            #expect(
                loopback.text.contains(#"id="webhook-error">"#) && loopback.text.contains("--allow-private-webhooks"))
            #expect(loopback.text.contains(#"value="http://127.0.0.1:9/hook""#))
            #expect(loopback.text.contains(#"<option value="json" selected>"#))
            // What was ticked stays ticked, and only that.
            #expect(loopback.text.contains(#"value="ramp.paused" checked>"#))
            #expect(!loopback.text.contains(#"value="revision.created" checked>"#))
            let badFormat = try await browser.post(
                page, ["csrf": csrf, "url": "https://example.com/", "format": "xml", "events[]": "ramp.paused"])
            #expect(badFormat.status == .unprocessableContent && badFormat.text.contains("is not a webhook format"))
            let noEvent = try await browser.post(page, ["csrf": csrf, "url": "https://example.com/", "format": "json"])
            #expect(noEvent.status == .unprocessableContent && noEvent.text.contains("Choose at least one event"))
        }
        #expect(try await refusing.store.outbound.webhooks(in: TestServer.acme).isEmpty)

        let server = try await RampAPITests.server(allowsPrivateWebhooks: true)
        try await server.test { client in
            var reader = DashboardBrowser(client)
            try await reader.signIn(with: server.key("acme", .reader))
            let read = try await reader.get(page).text
            #expect(read.contains("No webhook.") && !read.contains(#"id="webhook-form""#))
            #expect(try await reader.get("/tenants/acme/settings").text.contains(#"<a href="\#(page)">Webhooks</a>"#))

            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(page))
            // Under an environment the tenant lacks: refused before anything is added.
            let nowhere = "/tenants/acme/settings/environments/nope/webhooks"
            let misplaced = try await browser.post(
                nowhere, ["csrf": csrf, "url": "http://127.0.0.1:9/hook", "format": "json", "events[]": "ramp.paused"])
            #expect(misplaced.status == .notFound)
            #expect(try await server.store.outbound.webhooks(in: TestServer.acme).isEmpty)
            let made = try await browser.post(
                page,
                [
                    "csrf": csrf, "url": "http://127.0.0.1:9/hook/T0K3N", "format": "slack",
                    "events[]": "revision.created", "events[]": "ramp.finished",
                ])
            #expect(made.status == .created, "\(made.text)")
            let secret = try #require(
                made.text.firstMatch(of: /id="new-webhook-secret">(whsec_[^<]+)</).map { String($0.1) })
            let stored = try #require(try await server.store.outbound.webhooks(in: TestServer.acme).first)
            #expect(stored.format == .slack && stored.url.shown == "http://127.0.0.1:9/…")
            #expect(stored.events == [.revisionCreated, .rampFinished])
            // A bias change made by hand on the dashboard is queued for it, naming who and what.
            let biased = try await browser.post(
                "\(Self.feature)/biases",
                ["csrf": csrf, "biases[]": "10", "biases[]": "90", "planned": "10 90", "action": "apply"])
            #expect(biased.status == .seeOther, "\(biased.text)")
            let due = try await server.store.outbound.claimDueDeliveries(now: .distantFuture)
            let line = String(
                decoding: try #require(due.first { $0.webhookID == stored.id }).body(linkingFrom: nil), as: UTF8.self)
            #expect(line.contains(" (bias) by key:") && line.contains("— feature checkout"), "\(line)")
            let reloaded = try await browser.get(page)
            #expect(!reloaded.text.contains(secret) && !reloaded.text.contains("T0K3N"))
            #expect(reloaded.text.contains("Webhook \(stored.id): <code>http://127.0.0.1:9/…</code> · slack · active"))
            #expect(reloaded.text.contains("Hears revision.created, ramp.finished."))

            let confirm = try await browser.post(
                "\(page)/revoke", ["csrf": csrf, "id": "\(stored.id)", "action": "preview"])
            #expect(confirm.text.contains("Revoke webhook \(stored.id) (<code>http://127.0.0.1:9/…</code>)?"))
            #expect(try await server.store.outbound.webhooks(in: TestServer.acme).first?.revokedAt == nil)
            let misplacedRevoke = try await browser.post(
                "\(nowhere)/revoke", ["csrf": csrf, "id": "\(stored.id)", "action": "apply"])
            #expect(misplacedRevoke.status == .notFound)
            #expect(try await server.store.outbound.webhooks(in: TestServer.acme).first?.revokedAt == nil)
            let revoked = try await browser.post(
                "\(page)/revoke", ["csrf": csrf, "id": "\(stored.id)", "action": "apply"])
            #expect(revoked.status == .seeOther && revoked.headers[.location]?.contains("webhook-revoked") == true)
            #expect(try await server.store.outbound.webhooks(in: TestServer.acme).first?.revokedAt != nil)
            let again = try await browser.post(
                "\(page)/revoke", ["csrf": csrf, "id": "\(stored.id)", "action": "preview"])
            #expect(again.status == .notFound)
        }
    }
}
