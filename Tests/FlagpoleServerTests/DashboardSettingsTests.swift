import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// A tenant's settings page and its forms (keys, environments, goals), and the environment's
/// marking on every page of the environment.
@Suite("Dashboard settings")
struct DashboardSettingsTests {
    static let settings = "/tenants/acme/settings"
    static let overview = "/tenants/acme/production"
    static let acme = TenantSlug(rawValue: "acme")

    /// Signs a browser in with acme's key of `role`; returns it and its CSRF token.
    static func signedIn(
        _ client: any TestClientProtocol, _ server: TestServer, as role: KeyRole
    ) async throws -> (DashboardBrowser, String) {
        var browser = DashboardBrowser(client)
        try await browser.signIn(with: server.key("acme", role))
        return (browser, DashboardBrowser.csrf(in: try await browser.get(Self.settings)))
    }

    // MARK: The page

    @Test("An admin sees keys, environments and goals with their forms; a reader reads environments and goals only")
    func page() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (admin, _) = try await Self.signedIn(client, server, as: .admin)
            let page = try await admin.get(Self.settings)
            #expect(page.status == .ok)
            #expect(page.text.contains("<title>Settings of acme · Flagpole</title>"))
            #expect(page.text.contains(#"<h2 id="keys">Keys</h2>"#))
            #expect(page.text.contains(#"action="/tenants/acme/settings/keys""#))
            #expect(page.text.contains(#"<label for="key-name">Name</label>"#))
            #expect(page.text.contains(#"action="/tenants/acme/settings/environments/production""#))
            #expect(page.text.contains(#"action="/tenants/acme/settings/goals""#))
            // The tenant's own keys, by prefix; never a secret.
            let prefixes = try await server.store.access.keys(of: .tenant(Self.acme)).map(\.prefix)
            #expect(prefixes.allSatisfy { page.text.contains("<code>\($0)…</code>") })
            #expect(!page.text.contains(server.key("acme", .admin)))
            #expect(
                try await server.store.access.keys(of: .tenant(TenantSlug(rawValue: "globex"))).allSatisfy {
                    !page.text.contains($0.prefix)
                })

            var (reader, _) = try await Self.signedIn(client, server, as: .reader)
            let read = try await reader.get(Self.settings)
            #expect(read.status == .ok)
            #expect(read.text.contains("Only an admin of acme sees and manages its keys."))
            #expect(
                !prefixes.contains { read.text.contains("keys/\($0)/revoke") || read.text.contains("<td><code>\($0)") })
            #expect(!read.text.contains(#"<table class="keys">"#))
            #expect(read.text.contains(#"<a href="/tenants/acme/production">production</a>"#))
            #expect(!read.text.contains("<form method=\"post\" action=\"/tenants/acme/settings"))

            // Linked from the tenant's home and every environment page.
            #expect(try await reader.get("/").text.contains(#"<a href="/tenants/acme/settings">"#))
            #expect(
                try await reader.get(Self.overview).text.contains(#"<a href="/tenants/acme/settings">Settings</a>"#))
            var signedOut = DashboardBrowser(client)
            #expect(
                try await signedOut.get(Self.settings).headers[.location] == "/login?next="
                    + EnvironmentURLs.queryValue(Self.settings))
            // Another tenant's settings are as absent as an unknown tenant's.
            #expect(try await reader.get("/tenants/globex/settings").status == .notFound)
        }
    }

    // MARK: Keys

    @Test("Creating a key shows its secret once, and the key works")
    func createKey() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let answer = try await browser.post(
                "\(Self.settings)/keys", ["csrf": csrf, "name": "ci import", "role": "editor", "environment": ""])
            #expect(answer.status == .created)
            let key = try #require(
                try await server.store.access.keys(of: .tenant(Self.acme)).first { $0.name == "ci import" })
            #expect(key.role == .editor && key.environment == nil)
            let secret = try #require(
                answer.text.range(of: #"<code id="new-key-secret">"#).map {
                    String(answer.text[$0.upperBound...].prefix { $0 != "<" })
                })
            #expect(secret.hasPrefix(key.prefix))
            #expect(answer.text.contains(#"data-copy="new-key-secret""#))
            #expect(try await server.store.access.identity(ofKey: secret)?.role == .editor)
            // Never again.
            #expect(!(try await browser.get(Self.settings)).text.contains(secret))

            let delivery = try await browser.post(
                "\(Self.settings)/keys",
                ["csrf": csrf, "name": "tv app", "role": "delivery", "environment": "production"])
            #expect(delivery.status == .created)
            #expect(
                try await server.store.access.keys(of: .tenant(Self.acme)).first { $0.name == "tv app" }?.environment
                    == .production)
        }
    }

    @Test(
        "A key form without a name, with an unknown role, or with a scope that does not fit its role is refused, and no key is made",
        arguments: [
            (["name": " ", "role": "editor", "environment": ""], "give the new key a name"),
            (["name": "x", "role": "server-admin", "environment": ""], "choose the new key&#39;s role"),
            (["name": "x", "role": "delivery", "environment": ""], "choose the environment the delivery key"),
            (["name": "x", "role": "reader", "environment": "production"], "only a delivery key is scoped"),
            (["name": "x", "role": "delivery", "environment": "nope"], "has no environment"),
        ])
    func refusedKey(fields: [String: String], message: String) async throws {
        let server = try await TestServer()
        let before = try await server.store.access.keys(of: .tenant(Self.acme)).map(\.prefix)
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let answer = try await browser.post(
                "\(Self.settings)/keys",
                pairs: [("csrf", csrf)] + fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            #expect(answer.status == .unprocessableContent)
            #expect(answer.text.contains(message), "\(answer.text)")
            #expect(answer.text.contains(#"role="alert""#))
        }
        #expect(try await server.store.access.keys(of: .tenant(Self.acme)).map(\.prefix) == before)
    }

    @Test("Revoking asks first, then revokes; the key stops working")
    func revokeKey() async throws {
        let server = try await TestServer()
        let victim = try await server.store.access.createKey(for: .tenant(Self.acme), role: .reader, name: "old laptop")
        let url = "\(Self.settings)/keys/\(victim.info.prefix)/revoke"
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let confirm = try await browser.post(url, ["csrf": csrf, "action": "preview"])
            #expect(confirm.status == .ok)
            #expect(confirm.text.contains("Revoke old laptop (<code>\(victim.info.prefix)…</code>)?"))
            #expect(try await server.store.access.identity(ofKey: victim.secret) != nil)

            let done = try await browser.post(url, ["csrf": csrf, "action": "apply"])
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(Self.settings)?notice=key-revoked#notice")
            #expect(try await server.store.access.identity(ofKey: victim.secret) == nil)
            #expect(try await browser.get(done.headers[.location]!).text.contains("The key is revoked"))

            let unknown = try await browser.post(
                "\(Self.settings)/keys/fp_nothing/revoke", ["csrf": csrf, "action": "apply"])
            #expect(unknown.status == .notFound)
        }
    }

    // MARK: Environments

    @Test("Creating an environment; a bad or taken name is refused with 422")
    func createEnvironment() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let done = try await browser.post("\(Self.settings)/environments", ["csrf": csrf, "name": "staging"])
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(Self.settings)?notice=environment-created#notice")
            #expect(
                try await server.store.access.environments(of: Self.acme).map(\.path.environment.rawValue) == [
                    "production", "staging",
                ])

            let bad = try await browser.post("\(Self.settings)/environments", ["csrf": csrf, "name": "Staging 2"])
            #expect(bad.status == .unprocessableContent)
            #expect(
                bad.text.contains("New environment: ") && bad.text.contains("lowercase letters, digits and hyphens"))
            #expect(bad.text.contains(#"value="Staging 2""#))
            let taken = try await browser.post("\(Self.settings)/environments", ["csrf": csrf, "name": "production"])
            #expect(taken.status == .unprocessableContent)
            #expect(taken.text.contains("already has an environment"))
        }
        #expect(try await server.store.access.environments(of: Self.acme).count == 2)
    }

    @Test("Saving an environment's settings: delivery, colour and reason; the header shows the colour")
    func updateEnvironment() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let done = try await browser.post(
                "\(Self.settings)/environments/production",
                [
                    "csrf": csrf, "private": "on", "cache-control": "private, max-age=30", "colour": "#C0392B",
                    "requires-reason": "on",
                ])
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(Self.settings)?notice=environment-saved#notice")
            let environment = try await server.store.access.environment(TestServer.acme)
            #expect(environment.delivery == DeliverySettings(isPrivate: true, cacheControl: "private, max-age=30"))
            #expect(environment.marking.colour?.rawValue == "#c0392b" && environment.marking.requiresReason)

            // A new colour alone leaves the delivery settings, and their version, as they were.
            let version = try await server.store.access.deliveryState(of: TestServer.acme).settingsVersion
            let recoloured = try await browser.post(
                "\(Self.settings)/environments/production",
                [
                    "csrf": csrf, "private": "on", "cache-control": "private, max-age=30", "colour": "#c0392b",
                    "requires-reason": "on",
                ])
            #expect(recoloured.status == .seeOther)
            #expect(try await server.store.access.deliveryState(of: TestServer.acme).settingsVersion == version)

            let overview = try await browser.get(Self.overview)
            #expect(overview.text.contains(#"<link rel="stylesheet" href="/tenants/acme/marking.css">"#))
            #expect(overview.text.contains(#"<p class="marking" data-environment="production">"#))
            #expect(overview.text.contains("acme/production · changes need a reason"))
            #expect(overview.text.contains("<title>Features · acme/production · Flagpole</title>"))
            let css = try await browser.get("/tenants/acme/marking.css")
            #expect(css.headers[.contentType] == "text/css; charset=utf-8")
            #expect(
                css.text.contains(
                    #".marking[data-environment="production"] { background-color: #c0392b; color: #ffffff; }"#))

            // Unticked boxes and blank fields: public, the default Cache-Control, no colour.
            let cleared = try await browser.post(
                "\(Self.settings)/environments/production", ["csrf": csrf, "cache-control": "", "colour": ""])
            #expect(cleared.status == .seeOther)
            let after = try await server.store.access.environment(TestServer.acme)
            #expect(after.delivery == DeliverySettings() && after.marking == EnvironmentMarking())
            #expect(!(try await browser.get(Self.overview)).text.contains("marking.css"))
        }
    }

    @Test(
        "A bad colour or Cache-Control is refused with 422 beside its form, and nothing is written",
        arguments: [
            (
                ["colour": "red", "cache-control": ""],
                "Colour of production: The environment&#39;s colour &quot;red&quot; is not a colour"
            ),
            (["colour": "#00ff00", "cache-control": "public\u{7}"], "Delivery of production: "),
            (
                ["colour": "#00ff00", "cache-control": "public, max-age=60", "private": "on"],
                "cannot be served with Cache-Control"
            ),
        ])
    func refusedEnvironment(fields: [String: String], message: String) async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .admin)
            let answer = try await browser.post(
                "\(Self.settings)/environments/production",
                pairs: [("csrf", csrf)] + fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            #expect(answer.status == .unprocessableContent)
            #expect(answer.text.contains(message), "\(answer.text)")
            #expect(answer.text.contains(#"value="\#(fields["colour"]!)""#))
        }
        let environment = try await server.store.access.environment(TestServer.acme)
        #expect(environment.delivery == DeliverySettings() && environment.marking == EnvironmentMarking())
    }

    // MARK: Goals

    @Test("Creating a goal; a reserved or taken name is refused with 422")
    func createGoal() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var (browser, csrf) = try await Self.signedIn(client, server, as: .editor)
            let fields: KeyValuePairs<String, String> = [
                "csrf": csrf, "environment": "production", "name": "purchase", "kind": "value", "better": "higher",
            ]
            let done = try await browser.post("\(Self.settings)/goals", fields)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == "\(Self.settings)?notice=goal-created#notice")
            #expect(
                try await server.store.experiments.goals(in: TestServer.acme) == [Goal(name: "purchase", kind: .value)])
            #expect(try await browser.get(Self.settings).text.contains("<td>purchase</td><td>value</td>"))

            let taken = try await browser.post("\(Self.settings)/goals", fields)
            #expect(taken.status == .unprocessableContent)
            #expect(taken.text.contains("New goal: "))
            let reserved = try await browser.post(
                "\(Self.settings)/goals",
                ["csrf": csrf, "environment": "production", "name": "$exposure", "kind": "count", "better": "lower"])
            #expect(reserved.status == .unprocessableContent)
            #expect(reserved.text.contains(#"value="$exposure""#))
            let kindless = try await browser.post(
                "\(Self.settings)/goals",
                ["csrf": csrf, "environment": "production", "name": "signup", "kind": "sum", "better": "higher"])
            #expect(kindless.status == .unprocessableContent)
            #expect(kindless.text.contains("choose its kind: conversion, count or value"))
        }
        #expect(try await server.store.experiments.goals(in: TestServer.acme).map(\.name) == ["purchase"])
    }

    // MARK: Roles and CSRF

    /// Every form of the page, with fields it would accept.
    static let forms: [(uri: String, fields: KeyValuePairs<String, String>, role: KeyRole)] = [
        ("\(settings)/keys", ["name": "x", "role": "reader", "environment": ""], .admin),
        ("\(settings)/environments", ["name": "staging"], .admin),
        ("\(settings)/environments/production", ["colour": "#000000", "requires-reason": "on"], .admin),
        (
            "\(settings)/goals", ["environment": "production", "name": "g", "kind": "count", "better": "higher"],
            .editor
        ),
    ]

    /// What any of the forms would have written.
    static func fingerprint(_ server: TestServer) async throws -> String {
        let keys = try await server.store.access.keys(of: .tenant(acme))
        let environments = try await server.store.access.environments(of: acme)
        let goals = try await server.store.experiments.goals(in: TestServer.acme)
        return
            "\(keys.map { "\($0.prefix)\($0.revokedAt == nil)" }) \(environments.map { "\($0.path)\($0.marking)" }) \(goals)"
    }

    @Test(
        "Signed out, a form sends the browser to sign in; a role below a form's gets 403, and a form without the session's token 403; nothing is written"
    )
    func refusals() async throws {
        let server = try await TestServer()
        let before = try await Self.fingerprint(server)
        let someKey = try await server.store.access.keys(of: .tenant(Self.acme)).first!.prefix
        try await server.test { client in
            var (reader, readerCSRF) = try await Self.signedIn(client, server, as: .reader)
            var (editor, editorCSRF) = try await Self.signedIn(client, server, as: .editor)
            var (admin, _) = try await Self.signedIn(client, server, as: .admin)
            var signedOut = DashboardBrowser(client)
            let revoke = "\(Self.settings)/keys/\(someKey)/revoke"
            let revocation: (uri: String, fields: KeyValuePairs<String, String>, role: KeyRole) = (
                revoke, ["action": "apply"], .admin
            )
            for form in Self.forms + [revocation] {
                let pairs = form.fields.map { ($0.key, $0.value) }
                let anonymous = try await signedOut.post(form.uri, pairs: [("csrf", readerCSRF)] + pairs)
                #expect(anonymous.headers[.location]?.hasPrefix("/login") == true, "\(form.uri)")
                let asReader = try await reader.post(form.uri, pairs: [("csrf", readerCSRF)] + pairs)
                #expect(asReader.status == .forbidden, "\(form.uri)")
                if form.role == .admin {
                    let asEditor = try await editor.post(form.uri, pairs: [("csrf", editorCSRF)] + pairs)
                    #expect(asEditor.status == .forbidden, "\(form.uri)")
                }
                let forged = try await admin.post(form.uri, pairs: [("csrf", readerCSRF)] + pairs)
                #expect(forged.status == .forbidden, "\(form.uri)")
                #expect(forged.text.contains("did not come from this session&#39;s page"), "\(form.uri)")
            }
        }
        #expect(try await Self.fingerprint(server) == before)
    }

    // MARK: The colour's text

    @Test(
        "Black or white text on any colour contrasts at least 4.5:1",
        arguments: [
            "#000000", "#ffffff", "#c0392b", "#767676", "#777777", "#7f7f7f", "#808080", "#ffff00", "#0000ff",
            "#00ff00", "#ff0000", "#1f6feb", "#2ecc71", "#f1c40f", "#8e44ad", "#959595", "#6b8e23",
        ])
    func textContrast(_ text: String) throws {
        let colour = try EnvironmentColour(validating: text)
        let background = MarkingStyle.luminance(colour)
        let foreground = MarkingStyle.text(on: colour) == "#000000" ? 0.0 : 1.0
        #expect(MarkingStyle.contrast(background, foreground) >= 4.5)
    }

    @Test("Over a grid of colours (every 15th level of each channel), the worst case stays above 4.5:1")
    func worstContrast() throws {
        var worst = 21.0
        for red in stride(from: 0, through: 255, by: 15) {
            for green in stride(from: 0, through: 255, by: 15) {
                for blue in stride(from: 0, through: 255, by: 15) {
                    let text = String(format: "#%02x%02x%02x", red, green, blue)
                    let colour = try EnvironmentColour(validating: text)
                    let foreground = MarkingStyle.text(on: colour) == "#000000" ? 0.0 : 1.0
                    worst = min(worst, MarkingStyle.contrast(MarkingStyle.luminance(colour), foreground))
                }
            }
        }
        #expect(worst >= 4.5)
    }
}
