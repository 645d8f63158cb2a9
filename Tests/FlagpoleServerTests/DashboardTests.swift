import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Every dashboard page and form through the real router: sign-in and sessions, CSRF,
/// tenants and roles, and each form's effect on the store.
@Suite("Dashboard")
struct DashboardTests {
    static let base = "/tenants/acme/production"
    static let abTest = "\(base)/features/\(segment(TestServer.abTest))"
    /// A config name that needs encoding: a space, a slash, a non-ASCII letter.
    static let title = "welcome / title é"
    static let configs = "\(base)/configs"
    static let titlePage = "\(configs)/\(segment(title))"
    static let pages = [
        "/", base, "\(base)?tag=ios", abTest, "\(base)/users", "\(base)/users?user=qa-1", "\(base)/revisions",
        "\(base)/revisions?from=1&to=1",
        "\(base)/import", "\(base)/export", "\(base)/export/features.json", configs, "\(configs)?tag=ios", titlePage,
        "\(base)/segments", "\(base)/new-segment", "\(abTest)/ramp", webhooks,
    ]

    static let webhooks = "/tenants/acme/settings/environments/production/webhooks"

    /// Every form, with fields that would change the store if the form were accepted.
    static let forms: [(uri: String, fields: KeyValuePairs<String, String>)] = [
        ("\(base)/features/\(segment(TestServer.abTest))/enabled", ["enabled": "false", "action": "apply"]),
        ("\(abTest)/biases", ["biases[]": "30", "biases[]": "70", "planned": "30 70", "action": "apply"]),
        ("\(abTest)/rollout", ["variation": "Group A", "action": "apply"]),
        ("\(abTest)/ramp", ["do": "create", "variation": "Group B", "steps": "60", "hold": "1h", "action": "apply"]),
        ("\(abTest)/ramp/triggers", ["name": "Crashlytics", "triggerAction": "pause"]),
        (webhooks, ["url": "https://hooks.example.com/T0K3N", "format": "json", "events[]": "revision.created"]),
        ("\(webhooks)/revoke", ["id": "1", "action": "apply"]),
        ("\(base)/users/qa-1/overrides", ["feature": TestServer.abTest, "variation": "Group B"]),
        ("\(base)/revisions/rollback", ["to": "1"]),
        ("\(base)/import", ["source": #"{"features": []}"#, "action": "apply"]),
        ("\(abTest)/tags", ["tags": "ios", "revision": "1"]),
        ("\(configs)/items", ["type": "int", "new": "true", "default": "16", "revision": "1"]),
        ("\(configs)/items/delete", ["action": "apply", "revision": "1"]),
        (
            "\(abTest)/rules",
            [
                "rules": #"{"rules": [{"id": "b", "serve": {"variation": "Group B"}}]}"#, "action": "apply",
                "revision": "1",
            ]
        ),
        ("\(base)/new-segment", ["name": "beta", "users": "qa-1", "action": "apply", "revision": "1"]),
        ("\(base)/segments/beta", ["users": "qa-1", "action": "apply", "revision": "1"]),
        ("\(base)/segments/beta/delete", ["action": "apply", "revision": "1"]),
    ]

    /// Configs of every kind beside the fixture's features: one that follows the A/B test, with
    /// a name that needs encoding; the test tagged `ios`. Revision 2.
    static func addConfigs(to server: TestServer) async throws {
        let file = #"""
            {"configs": [
                {"name": "welcome / title é", "type": "string", "tags": ["ios"], "default": "Welcome",
                 "follows": "Example A/B Test", "values": {"Group B": "Hello"}},
                {"name": "items", "type": "int", "tags": ["watch"], "default": 15},
                {"name": "theme", "type": "json", "description": "Colours", "default": {"accent": "blue"}}
            ],
            "feature-tags": {"Example A/B Test": ["ios"]}}
            """#
        _ = try await server.store.catalog.importConfigs(
            try ConfigsDecoder.decode(Array(file.utf8)).0, in: TestServer.acme, options: EditOptions(actor: "test"))
    }

    static func config(_ name: String, in server: TestServer) async throws -> Config? {
        try await server.store.catalog.configs(in: TestServer.acme).document.config(named: name)
    }

    @Test("Signed out, every page sends the browser to sign in and back, and every form changes nothing")
    func signedOut() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            for page in Self.pages {
                let response = try await browser.get(page)
                #expect(response.status == .seeOther, "\(page)")
                #expect(response.headers[.location] == "/login?next=" + EnvironmentURLs.queryValue(page), "\(page)")
            }
            for form in Self.forms {
                #expect(
                    try await browser.post(form.uri, form.fields).headers[.location]?.hasPrefix("/login") == true,
                    "\(form.uri)")
            }
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(
            try await server.store.assignments.evaluate(UserID(rawValue: "qa-1"), in: TestServer.acme).allSatisfy {
                $0.reason != .override
            })
        #expect(try await server.store.outbound.webhooks(in: TestServer.acme).isEmpty)
    }

    @Test(
        "Signing in: the form's own token, a real key (not a delivery key), a cookie that is HttpOnly, SameSite=Strict and Secure behind TLS"
    )
    func signingIn() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            let form = try await browser.get("/login")
            #expect(form.status == .ok)
            #expect(form.text.contains(#"<label for="key">API key</label>"#))

            let forged = try await browser.post("/login", ["csrf": "0000", "key": server.key("acme", .editor)])
            #expect(forged.status == .forbidden)
            let unknown = try await browser.post(
                "/login",
                [
                    "csrf": DashboardBrowser.csrf(in: try await browser.get("/login")),
                    "key": "fp_" + String(repeating: "0", count: 48),
                ])
            #expect(unknown.status == .unauthorized)
            #expect(unknown.text.contains("That key is unknown"))
            let delivery = try await browser.post(
                "/login",
                [
                    "csrf": DashboardBrowser.csrf(in: try await browser.get("/login")),
                    "key": server.key("acme", .delivery),
                ])
            #expect(delivery.status == .unauthorized)
            #expect(browser.cookies[DashboardSession.cookieName] == nil)

            let signedIn = try await browser.signIn(with: server.key("acme", .editor), next: Self.base)
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == Self.base)
            let cookie = try #require(
                signedIn.headers[values: .setCookie].first { $0.hasPrefix(DashboardSession.cookieName) })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && !cookie.contains("Secure"))
            #expect(try await browser.get(Self.base).status == .ok)

            var behindTLS = DashboardBrowser(client)
            behindTLS.extraHeaders[.init("X-Forwarded-Proto")!] = "https"
            let secure = try await behindTLS.signIn(with: server.key("acme", .reader))
            #expect(
                secure.headers[values: .setCookie].contains {
                    $0.hasPrefix(DashboardSession.cookieName) && $0.contains("Secure")
                })
        }
    }

    @Test(
        "After signing in, only a path of this server is followed",
        arguments: ["//evil.example/x", "https://evil.example/", "/\\evil.example", "evil"])
    func nextStaysOnTheServer(next: String) async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            let signedIn = try await browser.signIn(with: server.key("acme", .reader), next: next)
            #expect(signedIn.headers[.location] == "/")
        }
    }

    @Test("Every page renders for an editor, with its content and the headers that keep it out of caches and frames")
    func everyPageRenders() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        _ = try await server.store.assignments.assign(
            [UserID(rawValue: "qa-1")], to: TestServer.abTest, in: TestServer.acme)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let expected: [String: [String]] = [
                "/": ["acme", #"href="/tenants/acme/production""#, "revision 2"],
                Self.base: [
                    "Example MVT Test", "MVT Test", "Remote Config",
                    #"aria-label="Users per variation: Group A 70 %, Group B 20 %, Group C 10 %""#, "Disable",
                ],
                Self.abTest: [
                    "Group A", #"name="biases[]" value="50""#, "Preview the move", "Roll out", "Assignments over time",
                    "qa-1", "Targeting rules", "No rule: every user gets the group of their point.",
                    #"<form method="post" action="\#(Self.abTest)/rules#rules-plan" class="stack" id="rules-form">"#,
                ],
                "\(Self.base)/segments": [
                    "Segments of acme/production", "No segment yet.", #"href="\#(Self.base)/new-segment""#,
                    #"<a href="\#(Self.base)/segments" aria-current="page">Segments</a>"#,
                ],
                "\(Self.base)/new-segment": [#"<input id="segment-name" name="name""#, #"value="plan">Plan</button>"#],
                "\(Self.base)/users": ["Look a user up"],
                "\(Self.base)/users?user=qa-1": [
                    "User <code>qa-1</code>", TestServer.abTest, "the split: their place, ", "History",
                ],
                "\(Self.base)/revisions": ["Revisions of acme/production", "current", "import"],
                "\(Self.base)/revisions?from=1&to=1": ["The two revisions have the same content."],
                "\(Self.base)/import": [#"enctype="multipart/form-data""#, #"<textarea id="source""#],
                "\(Self.base)/export": ["/t/acme/production/features.json", "ETag", "Public"],
                Self.configs: [
                    #"href="\#(Self.titlePage)""#, "<code>&quot;Welcome&quot;</code>", "<code>15</code>", "json",
                    "New config", #"href="\#(Self.configs)?tag=watch""#,
                ],
                "\(Self.configs)?tag=ios": ["Configs tagged <strong>ios</strong>"],
                Self.titlePage: [
                    #"<input type="text" id="default" name="default" value="Welcome""#, "Group A", "Group B",
                    #"value="Hello""#, "Delete…",
                ],
                "\(Self.base)?tag=ios": ["Features tagged <strong>ios</strong>", TestServer.abTest],
            ]
            for page in Self.pages {
                let response = try await browser.get(page)
                #expect(response.status == .ok, "\(page)")
                for text in expected[page] ?? [] { #expect(response.text.contains(text), "\(page) lacks \(text)") }
                #expect(response.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true, "\(page)")
                #expect(response.headers[.cacheControl] == "no-store", "\(page)")
                // The layout names the environment once, after the page's own title.
                let title = response.text.firstRange(of: /<title>(.*)<\/title>/).map { response.text[$0] } ?? ""
                #expect(title.ranges(of: "acme/production").count <= 1, "\(page): \(title)")
            }
            let download = try await browser.get("\(Self.base)/export/features.json")
            #expect(download.bytes == (try await server.store.catalog.revision(of: TestServer.acme)).document)
            #expect(download.headers[.contentDisposition] == #"attachment; filename="features.json""#)
        }
    }

    @Test("A feature's description is edited on its page, as a revision; one too long is refused on the page")
    func describe() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get(Self.abTest)
            #expect(page.text.contains(#"id="description-form""#))
            let csrf = DashboardBrowser.csrf(in: page)
            let saved = try await browser.post(
                "\(Self.abTest)/description",
                ["csrf": csrf, "description": "Which checkout sells more", "revision": "1"])
            #expect(saved.status == .seeOther)
            #expect(
                try await browser.get(Self.abTest).text.contains(
                    #"<p class="description">Which checkout sells more</p>"#))
            let tooLong = try await browser.post(
                "\(Self.abTest)/description",
                ["csrf": csrf, "description": String(repeating: "x", count: 1_001), "revision": "2"])
            #expect(tooLong.status == .unprocessableContent && tooLong.text.contains("kept to 1000"))
        }
    }

    @Test("A comparison names what changed in words: a config by its name, not the document's key order")
    func diffInWords() async throws {
        let server = try await TestServer()
        let config = try ConfigsDecoder.decodeConfig(
            Array(#"{"name": "limit", "type": "int", "default": 3}"#.utf8), name: "limit"
        ).0
        _ = try await server.store.catalog.setConfig(config, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let compare = try await browser.get("\(Self.base)/revisions?from=1&to=2").text
            #expect(
                compare.contains(
                    #"<td data-label="Feature">config limit</td><td data-label="Field">(the whole config)</td>"#))
            #expect(!compare.contains("(document)") && !compare.contains("key order"))
        }
    }

    @Test("Every time reads one way: <time datetime> with a UTC text the page's script writes in the viewer's zone")
    func timesReadOneWay() async throws {
        let server = try await TestServer()
        let created = try await server.store.catalog.revisions(of: TestServer.acme)[0].createdAt
        let time = ShownTime(created)
        #expect(time.text.hasSuffix(" UTC") && time.text.count == "2026-11-27 17:11 UTC".count)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let element = #"<time datetime="\#(time.iso)">\#(time.text)</time>"#
            for page in [Self.base, "\(Self.base)/revisions", Self.abTest] {
                #expect(try await browser.get(page).text.contains(element), "\(page)")
            }
        }
    }

    @Test("The user lookup reads its query as the form sends it: a space as +, a plus as %2B")
    func userLookupDecodesTheForm() async throws {
        let server = try await TestServer()
        for id in ["qa 2", "qa+3"] {
            _ = try await server.store.assignments.assign(
                [UserID(rawValue: id)], to: TestServer.abTest, in: TestServer.acme)
        }
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            #expect(try await browser.get("\(Self.base)/users?user=qa+2").text.contains("User <code>qa 2</code>"))
            #expect(try await browser.get("\(Self.base)/users?user=qa%2B3").text.contains("User <code>qa+3</code>"))
        }
    }

    @Test("The export page shows the ETag delivery sends")
    func exportShowsTheDeliveredETag() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let delivered = try await client.send(.get, "/t/acme/production/features.json")
            let etag = try #require(delivered.headers[.eTag])
            #expect(
                try await browser.get("\(Self.base)/export").text.contains(
                    etag.replacingOccurrences(of: "\"", with: "&quot;")))
        }
    }

    @Test("The environment's page shows how each kind of client connects, at the address the browser used")
    func connections() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get(Self.base).text
            for expected in [
                "/t/acme/production/features.json?user=", "/t/acme/production/configs.json?user=",
                "/t/acme/production/ofrep/v1/evaluate/flags", "/t/acme/production&quot;)\n    .with(featureTag:",
                "data-copy=\"snippet-bucketeer\"",
            ] {
                #expect(page.contains(expected), "\(expected)")
            }
            #expect(!page.contains("DELIVERY_KEY&quot;, forHTTPHeaderField"), "a public environment needs no key")
        }
        try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = true }
        let origin = ClientConnections.origin(
            of: HTTPRequest(
                method: .get, scheme: nil, authority: "flags.example.com", path: "/",
                headerFields: [.xForwardedProto: "https"]))
        #expect(origin == "https://flags.example.com")
        let connections = ClientConnections(TestServer.acme, origin: origin, isPrivate: true)
        #expect(connections.clients.map(\.id) == ["featureflags", "swiftfeatureconfigs", "openfeature", "bucketeer"])
        #expect(connections.clients[2].snippet.contains("Bearer DELIVERY_KEY"))
        #expect(connections.clients[3].url == "https://flags.example.com/t/acme/production")
    }

    @Test("The export page and /metrics show where the environment is published, from the publish log")
    func publishStatus() async throws {
        let server = try await TestServer()
        let revision = try await server.store.catalog.revision(of: TestServer.acme).number
        let started = Date(timeIntervalSince1970: 1_795_000_000)
        try await server.store.outbound.recordPublishes([
            PublishLogEntry(
                target: "s3://flags/ok", environment: TestServer.acme, revision: revision, outcome: .published,
                objectsWritten: 6, purge: .sent, startedAt: started, finishedAt: started),
            PublishLogEntry(
                target: "s3://flags/old", environment: TestServer.acme, revision: revision - 1, outcome: .published,
                objectsWritten: 6, startedAt: started, finishedAt: started),
            PublishLogEntry(
                target: "s3://flags/down", environment: TestServer.acme, revision: revision, outcome: .failed,
                objectsWritten: 0, error: "PUT s3://flags/down/manifest.json failed: 503 SlowDown", startedAt: started,
                finishedAt: started),
        ])
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get("\(Self.base)/export").text
            for text in [
                "Published to object storage", "<code>s3://flags/ok</code>", "Up to date", "Behind by 1 revision",
                "Failing: PUT s3://flags/down/manifest.json failed: 503 SlowDown",
                "revision \(revision), 2026-11-18T11:06:40Z",
            ] {
                #expect(page.contains(text), "the export page lacks \(text)")
            }
            let metrics = try await client.send(.get, "/metrics").text
            let labels = #"target="s3://flags/old",tenant="acme",environment="production""#
            #expect(metrics.contains("flagpole_publish_behind_revisions{\(labels)} 1.0"))
            #expect(metrics.contains("flagpole_publish_revision{\(labels)} \(revision - 1).0"))
            #expect(
                metrics.contains(
                    #"flagpole_publish_failing{target="s3://flags/down",tenant="acme",environment="production"} 1.0"#))
        }
    }

    @Test("A form without the session's CSRF token is refused with 403 and changes nothing")
    func forgedFormsAreRefused() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .admin))
            var other = DashboardBrowser(client)
            try await other.signIn(with: server.key("acme", .admin))
            let othersToken = DashboardBrowser.csrf(in: try await other.get(Self.base))
            for form in Self.forms {
                for token in ["", "forged", othersToken] {
                    var fields = form.fields.map { (key: $0.key, value: $0.value) }
                    if !token.isEmpty { fields.append((key: "csrf", value: token)) }
                    let response = try await browser.post(form.uri, pairs: fields)
                    #expect(
                        response.status == (token.isEmpty ? .badRequest : .forbidden),
                        "\(form.uri) with \(token.isEmpty ? "no token" : token)")
                }
            }
            #expect(try await browser.post("/logout", ["csrf": "forged"]).status == .forbidden)
            #expect(try await browser.get(Self.base).status == .ok)
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(
            try await server.store.assignments.evaluate(UserID(rawValue: "qa-1"), in: TestServer.acme).allSatisfy {
                $0.reason != .override
            })
    }

    @Test(
        "A tenant's session sees another tenant's pages exactly as a tenant that does not exist, and can't post to them"
    )
    func otherTenantsAreInvisible() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .admin))
            #expect(!(try await browser.get("/").text.contains("globex")))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.base))
            for page in Self.pages.dropFirst() {
                let theirs = try await browser.get(page.replacingOccurrences(of: "/acme/", with: "/globex/"))
                let nobodys = try await browser.get(page.replacingOccurrences(of: "/acme/", with: "/nobody/"))
                #expect(theirs.status == .notFound, "\(page)")
                #expect(theirs.text.replacingOccurrences(of: "globex", with: "nobody") == nobodys.text, "\(page)")
            }
            for form in Self.forms {
                let response = try await browser.post(
                    form.uri.replacingOccurrences(of: "/acme/", with: "/globex/"),
                    pairs: form.fields.map { (key: $0.key, value: $0.value) } + [(key: "csrf", value: csrf)])
                #expect(response.status == .notFound, "\(form.uri)")
            }
        }
        #expect(try await server.store.catalog.revision(of: TestServer.globex).number == 1)
    }

    @Test("A reader sees every page without its forms, and each form answers 403")
    func readersOnlyRead() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let feature = try await browser.get(Self.abTest)
            #expect(feature.status == .ok)
            #expect(!feature.text.contains("Preview the move") && !feature.text.contains("/enabled"))
            let overview = try await browser.get(Self.base).text
            #expect(!overview.contains("/enabled") && !overview.contains(#"href="\#(Self.base)/import""#))
            let csrf = DashboardBrowser.csrf(in: feature)
            for form in Self.forms {
                #expect(
                    try await browser.post(
                        form.uri,
                        pairs: form.fields.map { (key: $0.key, value: $0.value) } + [(key: "csrf", value: csrf)]
                    ).status == .forbidden, "\(form.uri)")
            }
            #expect(try await browser.get("\(Self.base)/import").status == .forbidden)
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
    }

    @Test(
        "Biases: the preview states who moves and writes nothing; applying writes a revision delivery serves at once; a stale page gets 409"
    )
    func biasPlanThenApply() async throws {
        let server = try await TestServer()
        let users = (1...200).map { UserID(rawValue: "user-\($0)") }
        _ = try await server.store.assignments.assign(users, to: TestServer.abTest, in: TestServer.acme)
        let before = try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            let preview = try await browser.post(
                "\(Self.abTest)/biases",
                ["csrf": csrf, "biases[]": "80", "biases[]": "20", "revision": "1", "action": "preview"])
            #expect(preview.status == .ok)
            let moving = before.first { $0.variation == "Group B" }!.users
            #expect(preview.text.contains("30 % of all users change group"))
            #expect(preview.text.contains("30 % of users move from Group B to Group A"))
            #expect(preview.text.contains("Apply these biases"))
            #expect(preview.text.contains(#"name="planned" value="80 20""#))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            // Numbers other than the planned ones are not applied, whatever the button says.
            let unplanned = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "biases[]": "70", "biases[]": "30", "planned": "80 20", "revision": "1",
                    "action": "apply",
                ])
            #expect(unplanned.status == .unprocessableContent)
            #expect(unplanned.text.contains("not the ones the plan shown was made for"))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            let applied = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "biases[]": "80", "biases[]": "20", "planned": "80 20", "revision": "1",
                    "action": "apply", "reason": "  phase 2  ",
                ])
            #expect(applied.status == .seeOther)
            #expect(applied.headers[.location] == "\(Self.abTest)?notice=applied&revision=2#notice")
            #expect(try await browser.get(applied.headers[.location]!).text.contains("Applied as revision 2."))
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).first?.message == "phase 2")
            // The feature's history says who, why and what; its latest bias change can go back, plan first.
            let page = try await browser.get(Self.abTest)
            for text in [
                "Revision 2</a>", "phase 2", "Biases: 50 %, 50 % → 80 %, 20 %", "Plan going back to 50 %, 50 %",
            ] {
                #expect(page.text.contains(text), "the history lacks \(text)")
            }
            let back = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "revision": "2", "biases[]": "50", "biases[]": "50", "reason": "Revert revision 2",
                    "action": "preview",
                ])
            #expect(back.status == .ok && back.text.contains("of users move from Group A to Group B"))
            #expect(back.text.contains(#"name="reason" value="Revert revision 2""#))
            let delivered = try await client.send(.get, "/t/acme/production/features.json")
            #expect(delivered.headers[.revision] == "2")
            #expect(delivered.text.contains("80"))
            let after = try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme)
            #expect(after.first { $0.variation == "Group B" }!.users < moving)

            let stale = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "biases[]": "10", "biases[]": "90", "planned": "10 90", "revision": "1",
                    "action": "apply",
                ])
            #expect(stale.status == .conflict)
            #expect(stale.text.contains("not 1"))
            let notANumber = try await browser.post(
                "\(Self.abTest)/biases", ["csrf": csrf, "biases[]": "ten", "biases[]": "90", "action": "preview"])
            #expect(notANumber.status == .unprocessableContent)
            #expect(notANumber.text.contains("is not a number"))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)
    }

    @Test(
        "Biases the app would not apply (over 100, short of it) are refused in the plan's place with their codes and no Apply; forced, the plan shows what the app will do"
    )
    func refusedBiasesHaveNoApply() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            for (biases, code) in [(["20", "90"], "W202"), (["20", "70"], "W201"), (["20"], "W200")] {
                let pairs =
                    [("csrf", csrf), ("revision", "1"), ("action", "preview")] + biases.map { ("biases[]", $0) }
                let refused = try await browser.post("\(Self.abTest)/biases", pairs: pairs)
                #expect(refused.status == .unprocessableContent, "\(biases)")
                let plan = try #require(
                    refused.text.firstRange(of: #"<div id="plan""#).map { refused.text[$0.lowerBound...] })
                #expect(plan.contains(#"id="bias-refusal""#) && plan.contains("<strong>\(code)</strong>"), "\(biases)")
                #expect(!refused.text.contains("Apply these biases"), "\(biases)")
            }
            let forced = try await browser.post(
                "\(Self.abTest)/biases",
                pairs: [
                    ("csrf", csrf), ("revision", "1"), ("action", "preview"), ("force", "true"), ("biases[]", "20"),
                    ("biases[]", "90"),
                ])
            #expect(forced.status == .ok)
            #expect(forced.text.contains("What the app will do with them") && forced.text.contains("W202"))
            #expect(forced.text.contains(#"name="planned" value="20 90 forced""#))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
    }

    @Test(
        "Where the environment asks a reason, a switch confirms first with what changes, and no change is applied without one"
    )
    func reasonsRequired() async throws {
        let server = try await TestServer()
        try await server.store.access.updateMarking(of: TestServer.acme) { $0.requiresReason = true }
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get(Self.abTest)
            #expect(page.text.contains("required in this environment"))
            let csrf = DashboardBrowser.csrf(in: page)
            // The overview's one click asks first, saying what changes.
            let confirm = try await browser.post(
                "\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "false", "back": "overview"])
            #expect(confirm.status == .ok)
            #expect(confirm.text.contains("Disabling \(TestServer.abTest) makes revision 2"))
            #expect(confirm.text.contains(#"<input type="hidden" name="back" value="overview">"#))
            let bare = try await browser.post(
                "\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "false", "action": "apply", "reason": " "])
            #expect(bare.status == .unprocessableContent && bare.text.contains("asks a reason for every change"))
            let biases = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "biases[]": "60", "biases[]": "40", "planned": "60 40", "revision": "1",
                    "action": "apply",
                ])
            #expect(biases.status == .unprocessableContent)
            // Said beside the Reason field, which is marked and focused; the plan and Apply stay.
            #expect(biases.text.contains(#"aria-invalid="true" aria-describedby="bias-reason-missing" autofocus"#))
            #expect(biases.text.contains(#"<p class="error" id="bias-reason-missing" role="alert">"#))
            #expect(biases.text.contains("Apply these biases"))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            let done = try await browser.post(
                "\(Self.abTest)/enabled",
                ["csrf": csrf, "enabled": "false", "action": "apply", "reason": "incident 42", "back": "overview"])
            #expect(done.headers[.location] == "\(Self.base)?notice=applied&revision=2#notice")
        }
        #expect(try await server.store.catalog.revisions(of: TestServer.acme).first?.message == "incident 42")
    }

    @Test(
        "Where the environment asks a reason, roll-back and tags take one too; refused, the roll-back says so beside its button"
    )
    func reasonsOnEveryForm() async throws {
        let server = try await TestServer()
        _ = try await server.store.catalog.setBiases(
            [20, 80], of: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.store.access.updateMarking(of: TestServer.acme) { $0.requiresReason = true }
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let compare = try await browser.get("\(Self.base)/revisions?from=2&to=1")
            #expect(
                compare.text.contains(#"id="rollback-reason""#) && compare.text.contains("required in this environment")
            )
            let csrf = DashboardBrowser.csrf(in: compare)
            let refused = try await browser.post(
                "\(Self.base)/revisions/rollback", ["csrf": csrf, "to": "1", "revision": "2", "reason": ""])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains(#"id="rollback-error">acme/production asks a reason for every change"#))
            #expect(refused.text.contains("Roll back to revision 1"), "the button stays, with its reason field")
            let tags = try await browser.post(
                "\(Self.abTest)/tags", ["csrf": csrf, "tags": "ios", "revision": "2", "reason": ""])
            #expect(tags.status == .unprocessableContent && tags.text.contains(#"id="tags-reason""#))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)

            let rolledBack = try await browser.post(
                "\(Self.base)/revisions/rollback",
                ["csrf": csrf, "to": "1", "revision": "2", "reason": "the 80 % arm crashes"])
            #expect(rolledBack.status == .seeOther)
        }
        #expect(try await server.store.catalog.revisions(of: TestServer.acme).first?.message == "the 80 % arm crashes")
    }

    @Test("Every plan of a test whose ramp is running says applying pauses the ramp; without one, none does")
    func plansSayTheRampPauses() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            let preview: KeyValuePairs<String, String> = [
                "csrf": csrf, "biases[]": "40", "biases[]": "60", "revision": "1", "action": "preview",
            ]
            #expect(try await !browser.post("\(Self.abTest)/biases", preview).text.contains("pauses ramp"))
            _ = try await server.store.rollouts.createRamp(
                RampRequest(
                    feature: TestServer.abTest, variation: "Group B", steps: [60, 100], hold: .duration(seconds: 3600)),
                in: TestServer.acme, actor: "test", now: Date())
            let note = "Applying this pauses ramp 1 at its next step"
            let biases = try await browser.post(
                "\(Self.abTest)/biases",
                [
                    "csrf": csrf, "biases[]": "30", "biases[]": "70", "revision": "2", "action": "preview",
                ])
            #expect(biases.text.contains(note), "\(biases.text)")
            let rollout = try await browser.post(
                "\(Self.abTest)/rollout", ["csrf": csrf, "variation": "Group B", "revision": "2", "action": "preview"])
            #expect(rollout.text.contains(note))
            let toggle = try await browser.post("\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "false"])
            #expect(toggle.text.contains(note))
        }
    }

    @Test(
        "Rolling out an on/off test says the test ends; afterwards the flag links its final results, which offer no roll-out"
    )
    func finalResults() async throws {
        let server = try await TestServer()
        let checkout = "\(Self.base)/features/checkout"
        _ = try await server.store.catalog.importDocument(
            Array(
                #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [10, 90], "labels": ["co-new", "co-old"]}]}"#
                    .utf8),
            into: TestServer.acme, options: ImportOptions(actor: "test"))
        _ = try await server.store.assignments.assign(
            (0..<20).map { UserID(rawValue: "u\($0)") }, to: "checkout", in: TestServer.acme)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            #expect(try await !browser.get("\(checkout)/results").text.contains("final-results"))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(checkout))
            let plan = try await browser.post(
                "\(checkout)/rollout", ["csrf": csrf, "variation": "Enabled", "revision": "2", "action": "preview"])
            #expect(plan.text.contains(#"id="rollout-ending">The test ends: checkout becomes a plain flag"#))
            #expect(plan.text.contains("Its labels “co-new” and “co-old” leave the file"))
            let applied = try await browser.post(
                "\(checkout)/rollout", ["csrf": csrf, "variation": "Enabled", "revision": "2", "action": "apply"])
            #expect(applied.status == .seeOther)
            let flag = try await browser.get(checkout).text
            #expect(flag.contains(#"id="final-results-link""#) && !flag.contains(#"id="results-link""#))
            let results = try await browser.get("\(checkout)/results")
            #expect(results.status == .ok && results.text.contains(#"id="final-results""#))
            #expect(!results.text.contains("Roll out the winner"))
        }
    }

    @Test("The bias editor of a three-way MVT with an equal split pre-fills values that, posted back, are accepted")
    func prefilledBiasesAreAccepted() async throws {
        // Given an MVT whose users split equally three ways (no biases written)
        let server = try await TestServer()
        let name = "Three Way MVT"
        let document = #"{"features": [{"name": "Three Way MVT", "test-variations": ["A", "B", "C"]}]}"#
        _ = try await server.store.catalog.importDocument(
            Array(document.utf8), into: TestServer.acme, options: ImportOptions(actor: "test"))
        let page = "\(Self.base)/features/\(segment(name))"
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))

            // When the feature page's bias form is sent back as it was filled in
            let form = try await browser.get(page)
            let values = form.text.matches(of: #/name="biases\[\]" value="([^"]*)"/#).map { String($0.output.1) }
            try #require(values.count == 3)
            let fields =
                [("csrf", DashboardBrowser.csrf(in: form)), ("revision", "2")] + values.map { ("biases[]", $0) }
            let preview = try await browser.post("\(page)/biases", pairs: fields + [("action", "preview")])

            // Then the plan is shown, not a refusal, and applying writes biases the app keeps
            #expect(preview.status == .ok, "\(values)")
            #expect(preview.text.contains("Apply these biases"))
            let planned = try #require(preview.text.firstMatch(of: #/name="planned" value="([^"]*)"/#)).output.1
            let applied = try await browser.post(
                "\(page)/biases", pairs: fields + [("planned", String(planned)), ("action", "apply")])
            #expect(applied.status == .seeOther, "\(values)")
            #expect(applied.headers[.location] == "\(page)?notice=applied&revision=3#notice")
        }
        let feature = try await server.store.catalog.feature(name, in: TestServer.acme).feature
        #expect(feature.biasReading == .accepted)
        #expect(feature.effectiveShares.allSatisfy { abs($0 - 100.0 / 3) < 0.0001 })
    }

    @Test(
        "A switch confirms first in every environment, saying what changes; enable, disable and roll out make revisions; the overview's switch comes back to the overview"
    )
    func enableDisableRollOut() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.base))
            // One tap asks first, even where changes need no reason: a switch moves everyone.
            let asked = try await browser.post(
                "\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "false", "back": "overview"])
            #expect(asked.status == .ok && asked.text.contains(#"id="confirm-toggle""#))
            #expect(asked.text.contains("Disabling \(TestServer.abTest) makes revision 2"))
            #expect(try await server.store.catalog.feature(TestServer.abTest, in: TestServer.acme).feature.isEnabled)
            let off = try await browser.post(
                "\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "false", "back": "overview", "action": "apply"])
            #expect(off.headers[.location] == "\(Self.base)?notice=applied&revision=2#notice")
            #expect(
                try await server.store.catalog.feature(TestServer.abTest, in: TestServer.acme).feature.isEnabled
                    == false)
            let on = try await browser.post(
                "\(Self.abTest)/enabled", ["csrf": csrf, "enabled": "true", "action": "apply"])
            #expect(on.headers[.location] == "\(Self.abTest)?notice=applied&revision=3#notice")
            let preview = try await browser.post(
                "\(Self.abTest)/rollout", ["csrf": csrf, "variation": "Group B", "revision": "3", "action": "preview"])
            #expect(preview.text.contains("50 % of users move from Group A to Group B"))
            let rolled = try await browser.post(
                "\(Self.abTest)/rollout", ["csrf": csrf, "variation": "Group B", "revision": "3", "action": "apply"])
            #expect(rolled.status == .seeOther)
            #expect(
                try await server.store.catalog.feature(TestServer.abTest, in: TestServer.acme).feature.effectiveBiases
                    == [
                        0, 100,
                    ])
        }
    }

    @Test(
        "Import: a broken file shows its diagnostics beside its lines and writes nothing; a good one is checked, then applied"
    )
    func importCheckThenApply() async throws {
        let server = try await TestServer()
        let broken = String(
            decoding: try TestServer.fixture("vantientu1703-f305791-Features-with-comment.json"), as: UTF8.self)
        let good = try TestServer.fixture("rwbutler-99b0686-Features.json")
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get("\(Self.base)/import"))
            let refused = try await browser.post(
                "\(Self.base)/import", ["csrf": csrf, "source": broken, "action": "check"])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("The file was refused: nothing was written"))
            #expect(refused.text.contains(##"<a href="#L7">line 7, column 9</a>"##))
            #expect(refused.text.contains(#"<li id="L7" class="flagged">"#))
            // Pages without the source say where, without a link to a line they don't have.
            let warning = Diagnostic(
                .biasCountMismatch, feature: "f", pointer: .root, location: SourceLocation(line: 55, column: 3),
                message: "m", fix: "f")
            #expect(DiagnosticList([warning]).diagnostics.first?.location?.lineLink == nil)
            #expect(DiagnosticList([warning], listsLines: true).diagnostics.first?.location?.lineLink == "#L55")
            #expect(!refused.text.contains("Apply as revision"))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            let checked = try await browser.postMultipart(
                "\(Self.base)/import", ["csrf": csrf, "action": "check", "message": "from the test"],
                file: ("file", good))
            #expect(checked.status == .ok)
            #expect(checked.text.contains("applying it makes revision 2"))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            let applied = try await browser.postMultipart(
                "\(Self.base)/import", ["csrf": csrf, "action": "apply", "revision": "1", "message": "from the test"],
                file: ("file", good))
            #expect(applied.headers[.location] == "\(Self.base)?notice=applied&revision=2#notice")
            let stale = try await browser.post(
                "\(Self.base)/import", ["csrf": csrf, "source": broken, "action": "apply", "revision": "1"])
            #expect(stale.status == .unprocessableContent || stale.status == .conflict)
            let empty = try await browser.post("\(Self.base)/import", ["csrf": csrf, "source": "", "action": "check"])
            #expect(empty.text.contains("There is no file"))
        }
        let revisions = try await server.store.catalog.revisions(of: TestServer.acme)
        #expect(revisions.map(\.number).sorted() == [1, 2])
        #expect(revisions.first { $0.number == 2 }?.message == "from the test")
    }

    @Test("Revisions: the difference between two, and a roll-back that a stale page can't make")
    func revisionsDiffAndRollBack() async throws {
        let server = try await TestServer()
        _ = try await server.store.catalog.setEnabled(
            false, feature: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let diff = try await browser.get("\(Self.base)/revisions?from=2&to=1")
            #expect(diff.text.contains("From revision 2 to revision 1"))
            #expect(
                diff.text.contains(
                    #"<td data-label="Feature">\#(TestServer.abTest)</td><td data-label="Field">enabled</td>"#))
            #expect(diff.text.contains("Roll back to revision 1"))
            #expect(try await browser.get("\(Self.base)/revisions?from=2&to=9").status == .notFound)
            let csrf = DashboardBrowser.csrf(in: diff)
            #expect(
                try await browser.post("\(Self.base)/revisions/rollback", ["csrf": csrf, "to": "1", "revision": "1"])
                    .status == .conflict)
            let rolled = try await browser.post(
                "\(Self.base)/revisions/rollback", ["csrf": csrf, "to": "1", "revision": "2"])
            #expect(rolled.headers[.location] == "\(Self.base)/revisions?notice=applied&revision=3#notice")
        }
        #expect(try await server.store.catalog.feature(TestServer.abTest, in: TestServer.acme).feature.isEnabled)
    }

    @Test("User page: what the app shows and why, without recording; a QA override is set and cleared")
    func userPageAndOverrides() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get("\(Self.base)/users?user=qa-1")
            #expect(page.text.contains("(would get)"))
            #expect(
                try await server.store.assignments.assignmentEvents(
                    in: TestServer.acme, matching: AssignmentEventQuery(user: UserID(rawValue: "qa-1"))
                ).isEmpty)
            let csrf = DashboardBrowser.csrf(in: page)
            let set = try await browser.post(
                "\(Self.base)/users/qa-1/overrides",
                ["csrf": csrf, "feature": TestServer.abTest, "variation": "Group B"])
            #expect(set.headers[.location] == "\(Self.base)/users?user=qa-1&notice=override-set#notice")
            let overridden = try await server.store.assignments.evaluate(UserID(rawValue: "qa-1"), in: TestServer.acme)
                .first {
                    $0.feature == TestServer.abTest
                }
            #expect(overridden?.reason == .override && overridden?.variation == "Group B")
            #expect(try await browser.get(set.headers[.location]!).text.contains("The QA override is set"))
            _ = try await browser.post(
                "\(Self.base)/users/qa-1/overrides", ["csrf": csrf, "feature": TestServer.abTest, "variation": ""])
            let cleared = try await server.store.assignments.evaluate(UserID(rawValue: "qa-1"), in: TestServer.acme)
                .first {
                    $0.feature == TestServer.abTest
                }
            #expect(cleared?.reason == .bucket)
            #expect(
                try await browser.get("\(Self.base)/users?user=\(String(repeating: "x", count: 300))").status
                    == .unprocessableContent)
        }
    }

    @Test("Signing out ends the session on the server; revoking its key ends it at once")
    func sessionsEnd() async throws {
        let server = try await TestServer()
        let key = try await server.store.access.createKey(for: .tenant(TestServer.acme.tenant), role: .editor)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let token = try #require(browser.cookies[DashboardSession.cookieName])
            let signedOut = try await browser.post(
                "/logout", ["csrf": DashboardBrowser.csrf(in: try await browser.get("/"))])
            #expect(signedOut.headers[.location] == "/login")
            #expect(try await server.store.access.sessionIdentity(token) == nil)

            var revoked = DashboardBrowser(client)
            try await revoked.signIn(with: key.secret)
            #expect(try await revoked.get(Self.base).status == .ok)
            try await server.store.access.revokeKey(key.info.prefix, of: .tenant(TestServer.acme.tenant))
            #expect(try await revoked.get(Self.base).status == .seeOther)
        }
    }

    @Test("Names from a file are escaped, never markup")
    func namesAreEscaped() async throws {
        let server = try await TestServer()
        let hostile = #"{"features": [{"name": "<img src=x onerror=alert(1)>", "section": "<b>s</b>"}]}"#
        _ = try await server.store.catalog.importDocument(
            Array(hostile.utf8), into: TestServer.acme, options: ImportOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get(Self.base).text
            #expect(!page.contains("<img src=x") && !page.contains("<b>s</b>"))
            #expect(page.contains("&lt;img src=x onerror=alert(1)&gt;"))
        }
    }

    @Test("A reader sees the configs and each config, filtered by tag, without the forms; creating is for editors")
    func readersSeeConfigs() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let list = try await browser.get(Self.configs)
            #expect(list.status == .ok)
            #expect(list.text.contains(#"<a href="\#(Self.titlePage)">welcome / title é</a>"#))
            #expect(list.text.contains(#"<a href="\#(Self.abTest)">Example A/B Test</a>"#))
            #expect(list.text.contains("<td><code>{&quot;accent&quot;:&quot;blue&quot;}</code></td>"))
            #expect(!list.text.contains("New config"))
            #expect(list.text.contains(#"aria-current="page">Configs</a>"#))
            let page = try await browser.get(Self.titlePage)
            #expect(page.status == .ok)
            #expect(page.text.contains("<dt>Group B</dt><dd><code>&quot;Hello&quot;</code></dd>"))
            #expect(!page.text.contains("<form method=\"post\" action=\"\(Self.titlePage)"))
            #expect(try await browser.get("\(Self.configs)/nothing").status == .notFound)
            #expect(try await browser.get("\(Self.configs)/nothing?type=int").status == .notFound)
            #expect(try await browser.get("\(Self.base)/new-config?name=x&type=int").status == .forbidden)
            let csrf = DashboardBrowser.csrf(in: page)
            let save = try await browser.post(
                Self.titlePage, ["csrf": csrf, "type": "string", "default": "Hi", "revision": "2"])
            #expect(save.status == .forbidden)
            let delete = try await browser.post(
                "\(Self.titlePage)/delete", ["csrf": csrf, "action": "apply", "revision": "2"])
            #expect(delete.status == .forbidden)

            let watch = try await browser.get("\(Self.configs)?tag=watch").text
            let others = ["theme", Self.title].flatMap { CatalogPageTests.items(named: $0, in: watch) }
            #expect(watch.contains(">items</a>") && others.count == 2 && others.allSatisfy { $0.contains(" hidden") })
            #expect(
                watch.contains(#"<a class="label" href="\#(Self.configs)?tag=watch" aria-current="page">watch</a>"#))
            #expect(try await browser.get("\(Self.configs)?tag=none").text.contains("No config is tagged none."))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)
    }

    @Test(
        "An editor creates a config of each type through the typed editor; the store has it typed, as a revision",
        arguments: [
            TypedInput(name: "enabled", type: "bool", text: "true", expected: .bool(true), input: #"role="switch""#),
            TypedInput(name: "limit", type: "int", text: "12", expected: .int(12), input: #"type="number" step="1""#),
            TypedInput(
                name: "rate", type: "double", text: "2", expected: .double(2), input: #"type="number" step="any""#),
            TypedInput(
                name: "greeting", type: "string", text: "Hello,\r\nworld", expected: .string("Hello,\nworld"),
                input: #"type="text""#),
            TypedInput(
                name: "theme", type: "json", text: #"{"accent": "red"}"#, expected: .json(["accent": .string("red")]),
                input: "data-json"),
        ])
    func createEachType(_ typed: TypedInput) async throws {
        let (name, type, expected, input) = (typed.name, typed.type, typed.expected, typed.input)
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let started = try await browser.get("\(Self.base)/new-config?name=\(name)&type=\(type)")
            #expect(started.status == .seeOther)
            let editorURL = try #require(started.headers[.location])
            #expect(editorURL == "\(Self.configs)/\(name)?type=\(type)")
            let editor = try await browser.get(editorURL)
            #expect(editor.status == .ok)
            #expect(editor.text.contains(input), "\(type)")
            #expect(editor.text.contains(#"<input type="hidden" name="new" value="true">"#))
            var pairs: [(key: String, value: String)] = [
                ("csrf", DashboardBrowser.csrf(in: editor)), ("revision", "1"), ("type", type), ("new", "true"),
                ("follows", ""), ("followed", ""), ("description", "made in a test"), ("tags", "ios, beta,, "),
            ]
            pairs.append(("default", typed.text))
            // The plan first: what saving would write, in words, and nothing written.
            let preview = try await browser.post("\(Self.configs)/\(name)", pairs: pairs + [("action", "preview")])
            #expect(preview.status == .ok, "\(preview.text)")
            #expect(preview.text.contains("Saving creates \(name) as revision 2"))
            #expect(preview.text.contains("<li><code>description: set to &quot;made in a test&quot;</code></li>"))
            let planned = try #require(preview.text.firstMatch(of: #/name="planned" value="([^"]*)"/#)).output.1
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
            #expect(try await Self.config(name, in: server) == nil)
            // A field changed after the plan is not saved under it.
            let unplanned = try await browser.post(
                "\(Self.configs)/\(name)",
                pairs: pairs.map { $0.key == "description" ? ($0.key, "changed after the plan") : $0 }
                    + [("planned", planned), ("action", "apply")])
            #expect(unplanned.status == .unprocessableContent && unplanned.text.contains("not the one the plan"))
            let saved = try await browser.post(
                "\(Self.configs)/\(name)", pairs: pairs + [("planned", planned), ("action", "apply")])
            #expect(saved.status == .seeOther, "\(saved.text)")
            #expect(saved.headers[.location] == "\(Self.configs)/\(name)?notice=applied&revision=2#notice")
            #expect(try await browser.get(saved.headers[.location]!).text.contains("Applied as revision 2."))
            // Delivery serves it at once, in its type: a double keeps its decimal point.
            let delivered = try await client.send(.get, "/t/acme/production/configs.json")
            #expect(try delivered.json[name] == expected.jsonValue, "\(delivered.text)")
            if type == "double" { #expect(delivered.text.contains(#""rate": 2.0"#)) }
        }
        let config = try #require(try await Self.config(name, in: server))
        #expect(config.defaultValue == expected)
        #expect(config.type.rawValue == type)
        #expect(config.tags == ["ios", "beta"] && config.description == "made in a test")
        let revision = try #require(
            try await server.store.catalog.revisions(of: TestServer.acme).first { $0.number == 2 })
        #expect(revision.changeCount > 0 && revision.actor.contains("key"))
    }

    @Test(
        "Saving the editor keeps the config's rules and declaration; a declared type is enforced unless the Force box is ticked"
    )
    func declaredConfigEditor() async throws {
        let server = try await TestServer()
        let declarations = try ConfigDeclarations.decode(
            Array(
                #"{"configCollectionName": "App", "features": [{"type": "Float", "name": "zoom", "default": "0.5"}]}"#
                    .utf8))
        _ = try await server.store.catalog.importDeclarations(
            DeclarationsMerge(declarations.configs, into: ConfigsDocument()), in: TestServer.acme,
            options: EditOptions(actor: "test"))
        var zoom = try #require(try await Self.config("zoom", in: server))
        zoom.rules = [
            TargetingRule(
                id: "nz", clauses: [Clause(attribute: "country", op: .equals, values: [.string("NZ")])],
                serve: .value(.double(2)))
        ]
        _ = try await server.store.catalog.setConfig(zoom, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let editor = try await browser.get("\(Self.configs)/zoom")
            #expect(
                editor.text.contains("Float in the app&#39;s featureConfigs.json")
                    || editor.text.contains("Float in the app's featureConfigs.json"), "\(editor.text)")
            #expect(editor.text.contains(#"name="force""#))
            let csrf = DashboardBrowser.csrf(in: editor)
            let refused = try await browser.post(
                "\(Self.configs)/zoom", ["csrf": csrf, "revision": "3", "type": "double", "default": "0.1"])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("as? Float"), "\(refused.text)")
            let forced = try await browser.post(
                "\(Self.configs)/zoom",
                ["csrf": csrf, "revision": "3", "type": "double", "default": "0.1", "force": "true"])
            #expect(forced.status == .seeOther, "\(forced.text)")
        }
        let saved = try #require(try await Self.config("zoom", in: server))
        #expect(saved.defaultValue == .double(0.1))
        #expect(saved.rules.map(\.id) == ["nz"], "the editor has no rules: saving keeps them")
        #expect(saved.declaration?.type == .float)
    }

    @Test("An unchecked switch saves false; values per variation are typed, a blank one is none")
    func switchAndVariations() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let editor = try await browser.get("\(Self.configs)/flag?type=bool")
            let csrf = DashboardBrowser.csrf(in: editor)
            let created = try await browser.post(
                "\(Self.configs)/flag",
                ["csrf": csrf, "revision": "1", "type": "bool", "new": "true", "default": "true"])
            #expect(created.status == .seeOther)
            // Following the test: its variations become rows (after a save, without JavaScript).
            let followed = try await browser.post(
                "\(Self.configs)/flag",
                ["csrf": csrf, "revision": "2", "type": "bool", "default": "true", "follows": TestServer.abTest])
            #expect(followed.status == .seeOther)
            let page = try await browser.get("\(Self.configs)/flag").text
            #expect(page.contains(#"<input type="hidden" name="variations[]" value="Group A">"#))
            #expect(page.contains(#"<option value="" selected>(the default)</option>"#))
            let saved = try await browser.post(
                "\(Self.configs)/flag",
                pairs: [
                    ("csrf", csrf), ("revision", "3"), ("type", "bool"), ("follows", TestServer.abTest),
                    ("followed", TestServer.abTest), ("variations[]", "Group A"), ("values[]", "false"),
                    ("variations[]", "Group B"), ("values[]", ""), ("variations[]", "Enabled"), ("values[]", ""),
                    ("variations[]", "Disabled"), ("values[]", ""),
                ])
            #expect(saved.status == .seeOther)
        }
        let config = try #require(try await Self.config("flag", in: server))
        #expect(config.defaultValue == .bool(false))
        #expect(config.follows == TestServer.abTest)
        #expect(config.values == [Config.Variant(variation: "Group A", value: .bool(false))])
    }

    @Test(
        "A value that is not of the type comes back with its issue beside the field, as typed, and writes nothing",
        arguments: [
            WrongInput(type: "int", text: "12x", message: "expected an integer", kept: #"value="12x""#),
            WrongInput(type: "json", text: "{", message: "the JSON value does not parse", kept: "\n{</textarea>"),
            WrongInput(type: "json", text: "[1]", message: "expected a JSON object", kept: "\n[1]</textarea>"),
            WrongInput(type: "double", text: "two", message: "expected a number", kept: #"value="two""#),
        ])
    func wrongValuesAreRefused(_ wrong: WrongInput) async throws {
        let (type, text, message, kept) = (wrong.type, wrong.text, wrong.message, wrong.kept)
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get("\(Self.configs)/value?type=\(type)"))
            let refused = try await browser.post(
                "\(Self.configs)/value",
                ["csrf": csrf, "revision": "1", "type": type, "new": "true", "default": text, "tags": "kept"])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("Refused: nothing was written"))
            #expect(refused.text.contains(message), "\(refused.text)")
            #expect(refused.text.contains("<code>/default</code>"))
            #expect(refused.text.contains(#"<span id="default-issues" class="field-issue">"#))
            #expect(refused.text.contains(kept), "\(type) \(text)")
            #expect(refused.text.contains(#"name="tags" value="kept""#))
            #expect(refused.text.contains(#"<input type="hidden" name="new" value="true">"#))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(try await Self.config("value", in: server) == nil)
    }

    @Test("What the store refuses (a variation the feature lacks, a bad tag) is shown with its pointer in the config")
    func storeRefusalsAreShown() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.titlePage))
            let refused = try await browser.post(
                Self.titlePage,
                pairs: [
                    ("csrf", csrf), ("revision", "2"), ("type", "string"), ("default", "Welcome"),
                    ("follows", TestServer.abTest), ("followed", TestServer.abTest),
                    ("variations[]", "Group Z"), ("values[]", "Hey"),
                    ("tags", "ios, \(String(repeating: "x", count: 65))"),
                ])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("is not a tag"))
            #expect(refused.text.contains("<code>/tags/1</code>"))
            let variation = try await browser.post(
                Self.titlePage,
                pairs: [
                    ("csrf", csrf), ("revision", "2"), ("type", "string"), ("default", "Welcome"),
                    ("follows", TestServer.abTest), ("followed", TestServer.abTest),
                    ("variations[]", "Group Z"), ("values[]", "Hey"),
                ])
            #expect(variation.status == .unprocessableContent)
            #expect(variation.text.contains("has no variation &quot;Group Z&quot;"))
            #expect(variation.text.contains("<code>/values/Group Z</code>"))
            #expect(variation.text.contains(#"value="Hey""#))
            #expect(variation.text.contains("not a variation of Example A/B Test"))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)
    }

    @Test("What the store could not keep (U+0000 in a name or a description) is refused before it reaches it")
    func unkeepableTextIsRefused() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get("\(Self.configs)/x?type=int"))
            let description = try await browser.post(
                "\(Self.configs)/x",
                ["csrf": csrf, "revision": "1", "type": "int", "new": "true", "default": "1", "description": "a\u{0}b"])
            #expect(description.status == .unprocessableContent)
            #expect(description.text.contains("<code>/description</code>"))
            let name = try await browser.post(
                "\(Self.configs)/a%00b", ["csrf": csrf, "revision": "1", "type": "int", "new": "true", "default": "1"])
            #expect(name.status == .unprocessableContent)
            #expect(name.text.contains("<code>/name</code>"))
        }
        #expect(try await server.store.catalog.configs(in: TestServer.acme).document.configs.isEmpty)
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
    }

    @Test("A stale config form is a conflict: the input is kept, the saved config shown, nothing written")
    func staleConfigFormConflicts() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        _ = try await server.store.catalog.setEnabled(
            false, feature: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get("\(Self.configs)/items"))
            let stale = try await browser.post(
                "\(Self.configs)/items", ["csrf": csrf, "revision": "2", "type": "int", "default": "99"])
            #expect(stale.status == .conflict)
            #expect(stale.text.contains("someone changed it since you read it"))
            #expect(stale.text.contains(#"value="99""#))
            #expect(stale.text.contains("<dt>Default</dt><dd><code>15</code></dd>"))
            #expect(stale.text.contains(#"<input type="hidden" name="revision" value="3">"#))
            // A new config's page, sent after someone made a config of that name: nothing is replaced.
            let made = try await browser.post(
                "\(Self.configs)/theme", ["csrf": csrf, "revision": "3", "type": "int", "new": "true", "default": "1"])
            #expect(made.status == .conflict)
            #expect(made.text.contains("was made since this page was loaded"))
            #expect(!made.text.contains(#"name="new""#))
            let deleteStale = try await browser.post(
                "\(Self.configs)/items/delete", ["csrf": csrf, "action": "apply", "revision": "2"])
            #expect(deleteStale.status == .conflict)
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 3)
        #expect(try await Self.config("items", in: server)?.defaultValue == .int(15))
    }

    @Test("Deleting asks first and writes nothing; confirmed, it deletes as a revision")
    func deleteAsksFirst() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get(Self.titlePage)
            let csrf = DashboardBrowser.csrf(in: page)
            let asked = try await browser.post(
                "\(Self.titlePage)/delete", ["csrf": csrf, "action": "preview", "revision": "2"])
            #expect(asked.status == .ok)
            #expect(asked.text.contains("Delete welcome / title é?"))
            #expect(asked.text.contains("Deleting makes revision 3"))
            #expect(asked.text.contains(#"<button type="submit" name="action" value="apply" class="danger">"#))
            #expect(try await Self.config(Self.title, in: server) != nil)
            let deleted = try await browser.post(
                "\(Self.titlePage)/delete", ["csrf": csrf, "action": "apply", "revision": "2"])
            #expect(deleted.headers[.location] == "\(Self.configs)?notice=applied&revision=3#notice")
            #expect(try await browser.get("\(Self.titlePage)/delete").status != .ok)
            #expect(try await browser.get(Self.titlePage).status == .notFound)
        }
        #expect(try await Self.config(Self.title, in: server) == nil)
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 3)
    }

    @Test("Creating a config whose name exists opens it; a name is required")
    func newConfigNames() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let existing = try await browser.get(
                "\(Self.base)/new-config?name=\(EnvironmentURLs.queryValue(Self.title))&type=int")
            #expect(existing.headers[.location] == "\(Self.titlePage)?notice=config-exists#notice")
            let empty = try await browser.get("\(Self.base)/new-config?name=&type=int")
            #expect(empty.status == .unprocessableContent)
            #expect(empty.text.contains("A config needs a name"))
            // A GET form sends a space as `+`.
            let spaced = try await browser.get("\(Self.base)/new-config?name=max+items%2B1&type=int")
            #expect(spaced.headers[.location] == "\(Self.configs)/max%20items+1?type=int")
            let dots = try await browser.get("\(Self.base)/new-config?name=..&type=int")
            #expect(dots.headers[.location] == "\(Self.configs)/%2E%2E?type=int")
            #expect(try await browser.get(dots.headers[.location]!).status == .ok)
        }
    }

    @Test("The overview filters features by tag; the feature page sets the tags the store gives it")
    func featureTags() async throws {
        let server = try await TestServer()
        try await Self.addConfigs(to: server)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let tagged = try await browser.get("\(Self.base)?tag=ios").text
            // The others are on the page, hidden, for the search as you type to bring back.
            let mvt = CatalogPageTests.items(named: "Example MVT Test", in: tagged)
            #expect(
                tagged.contains(">\(TestServer.abTest)</a>") && !mvt.isEmpty
                    && mvt.allSatisfy { $0.contains(" hidden") })
            #expect(tagged.contains(#"<a class="label" href="\#(Self.base)?tag=ios" aria-current="page">ios</a>"#))
            let feature = try await browser.get(Self.abTest)
            #expect(feature.text.contains(#"name="tags" value="ios""#))
            #expect(feature.text.contains(#"Configs that follow it: <a href="\#(Self.titlePage)">"#))
            let csrf = DashboardBrowser.csrf(in: feature)
            let set = try await browser.post(
                "\(Self.abTest)/tags", ["csrf": csrf, "tags": "beta, ios", "revision": "2"])
            #expect(set.headers[.location] == "\(Self.abTest)?notice=applied&revision=3#notice")
            let beta = try await browser.get("\(Self.base)?tag=beta").text
            #expect(beta.contains(">\(TestServer.abTest)</a>"))
            #expect(try await browser.get("\(Self.base)?tag=nothing").text.contains("No feature is tagged nothing."))
            let bad = try await browser.post(
                "\(Self.abTest)/tags", ["csrf": csrf, "tags": String(repeating: "x", count: 65), "revision": "3"])
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains("is not a tag"))
            #expect(bad.text.contains(#"value="\#(String(repeating: "x", count: 65))""#))
            let stale = try await browser.post("\(Self.abTest)/tags", ["csrf": csrf, "tags": "", "revision": "2"])
            #expect(stale.status == .conflict)
        }
        let document = try await server.store.catalog.configs(in: TestServer.acme).document
        #expect(document.featureTags[TestServer.abTest] == ["beta", "ios"])
    }
}

/// A value typed into a new config's editor, and what the store must then hold.
struct TypedInput: Sendable, CustomTestStringConvertible {
    var name: String
    var type: String
    var text: String
    var expected: ConfigValue
    /// What the editor's input for the type looks like.
    var input: String

    var testDescription: String { type }
}

/// A value that is not of its config's type, the issue it gets, and how the page keeps it.
struct WrongInput: Sendable, CustomTestStringConvertible {
    var type: String
    var text: String
    var message: String
    var kept: String

    var testDescription: String { "\(type) \(text)" }
}
