import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// The feature page's targeting rules and the segment pages: rules in words for readers, the
/// JSON editor with its plan (a dry run) for editors, applying what was planned, and refusals
/// placed where they are.
@Suite("Dashboard targeting")
struct DashboardTargetingTests {
    static let base = DashboardTests.base
    static let abTest = DashboardTests.abTest
    static let rules = "\(abTest)/rules"
    static let segments = "\(base)/segments"
    static let newSegment = "\(base)/new-segment"
    static let everyoneInB = #"{"rules": [{"id": "everyone-b", "serve": {"variation": "Group B"}}]}"#
    static let userCount = 40
    static let appCount = 20

    /// Recorded users of the A/B test: `userCount` by assignment (they follow rules) and
    /// `appCount` by a FeatureFlags app's first fetch (they keep their point).
    static func recordUsers(in server: TestServer) async throws {
        _ = try await server.store.assignments.assign(
            (1...userCount).map { UserID(rawValue: "user-\($0)") }, to: TestServer.abTest, in: TestServer.acme)
        for index in 1...appCount {
            _ = try await server.store.assignments.pinnedDocument(
                for: UserID(rawValue: "app-\(index)"), in: TestServer.acme)
        }
    }

    static func rules(of server: TestServer) async throws -> [TargetingRule] {
        try await server.store.catalog.targeting(in: TestServer.acme).featureRules[TestServer.abTest] ?? []
    }

    static func events(in server: TestServer) async throws -> Int {
        try await server.store.assignments.assignmentEvents(
            in: TestServer.acme, matching: AssignmentEventQuery(feature: TestServer.abTest, limit: 1_000)
        ).count
    }

    /// `fields` and `extra` as the pairs a form posts.
    static func pairs(
        _ fields: KeyValuePairs<String, String>, _ extra: (String, String)...
    ) -> [(key: String, value: String)] {
        fields.map { (key: $0.key, value: $0.value) } + extra.map { (key: $0.0, value: $0.1) }
    }

    /// The revision the first form after `marker` carries.
    static func revision(after marker: String, in text: String) -> String? {
        guard let start = text.range(of: marker),
            let field = text[start.upperBound...].range(of: #"name="revision" value=""#)
        else { return nil }
        return String(text[field.upperBound...].prefix { $0 != "\"" })
    }

    /// The user ids a page lists as `<code>ID</code>`.
    static func codes(in text: String, prefix: String) -> Set<String> {
        Set(text.matches(of: #/<code>([^<]*)</code>/#).map { String($0.output.1) }.filter { $0.hasPrefix(prefix) })
    }

    @Test("A reader sees the rules in words and the segments, without any editor")
    func readersSeeRules() async throws {
        let server = try await TestServer()
        let options = EditOptions(actor: "test")
        _ = try await server.store.catalog.setSegment(
            Segment(name: "beta", description: "Testers", users: [UserID(rawValue: "qa-1"), UserID(rawValue: "qa-2")]),
            in: TestServer.acme,
            options: options)
        let rules = try TargetingDecoder.decodeRules(
            Array(
                #"""
                {"rules": [
                  {"id": "beta-b", "clauses": [{"operator": "inSegment", "values": ["beta"]}], "serve": {"variation": "Group B"}},
                  {"id": "de-split", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]},
                     {"attribute": "appVersion", "operator": "versionGreaterThanOrEqual", "values": ["5.2"]}],
                   "serve": {"split": [{"variation": "Group A", "weight": 20}, {"variation": "Group B", "weight": 80}]}}
                ]}
                """#.utf8)
        ).rules
        _ = try await server.store.catalog.setRules(
            rules, ofFeature: TestServer.abTest, in: TestServer.acme, options: options)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get(Self.abTest)
            #expect(page.status == .ok)
            for text in [
                "Targeting rules", "<td>1</td><td><code>beta-b</code>", "<td>in segment beta</td><td>Group B</td>",
                "<td>country is &quot;DE&quot; and appVersion is a version from &quot;5.2&quot;</td>",
                "<td>Group A 20 %, Group B 80 %</td>",
            ] {
                #expect(page.text.contains(text), "the feature page lacks \(text)")
            }
            #expect(!page.text.contains(#"id="rules-form""#) && !page.text.contains("/rules\""))
            let list = try await browser.get(Self.segments)
            #expect(list.text.contains(#"<a href="\#(Self.segments)/beta">beta</a>"#))
            #expect(list.text.contains("<td>2</td>") && list.text.contains("<code>beta-b</code>"))
            #expect(!list.text.contains("New segment"))
            let segment = try await browser.get("\(Self.segments)/beta")
            #expect(segment.status == .ok)
            #expect(segment.text.contains("<code>qa-1</code> <code>qa-2</code>"))
            #expect(segment.text.contains("<dd>Testers</dd>"))
            #expect(!segment.text.contains(#"id="segment-form""#) && !segment.text.contains("Delete…"))
            #expect(try await browser.get(Self.newSegment).status == .forbidden)
        }
    }

    @Test("Planning rules writes nothing and says who moves, with examples, and which apps keep their group")
    func planningWritesNothing() async throws {
        let server = try await TestServer()
        try await Self.recordUsers(in: server)
        let counts = try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme)
        let events = try await Self.events(in: server)
        // What the store plans, which the page must show.
        let expected = try #require(
            try await server.store.catalog.setRules(
                try TargetingDecoder.decodeRules(Array(Self.everyoneInB.utf8)).rules, ofFeature: TestServer.abTest,
                in: TestServer.acme, options: EditOptions(isDryRun: true, actor: "test")
            ).plans.first)
        let moving = try #require(expected.moves.first)
        let kept = try #require(expected.keptByApps.first)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get(Self.abTest)
            #expect(page.text.contains(#"<textarea id="rules" name="rules""#))
            #expect(page.text.contains("{\n  &quot;rules&quot;: []\n}"))
            let plan = try await browser.post(
                Self.rules,
                ["csrf": DashboardBrowser.csrf(in: page), "rules": Self.everyoneInB, "revision": "1", "action": "plan"])
            #expect(plan.status == .ok)
            let total = Self.userCount + Self.appCount
            // Which users sit in which group is random: one of something is said in the singular.
            let (one, apps) = (kept.users == 1, "\(kept.users) FeatureFlags app\(kept.users == 1 ? "" : "s")")
            let users = "\(moving.users) recorded user\(moving.users == 1 ? "" : "s")"
            for text in [
                "Applying makes revision 2: \(moving.users) of \(total) recorded users change group; \(apps) keep\(one ? "s" : "") theirs.",
                "\(users) move\(moving.users == 1 ? "s" : "") from Group A to Group B",
                "\(apps) stay\(one ? "s" : "") in Group A (the rules would put \(one ? "it" : "them") in Group B)",
                "keeps the point it cached at its first fetch",
                "Apply these rules as revision 2",
                #"<textarea name="rules" hidden aria-hidden="true">{&quot;rules&quot;"#,
            ] {
                #expect(plan.text.contains(text), "the plan lacks \(text)")
            }
            #expect(Self.codes(in: plan.text, prefix: "user-") == Set(moving.examples.map(\.rawValue)))
            #expect(Self.codes(in: plan.text, prefix: "app-") == Set(kept.examples.map(\.rawValue)))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(try await Self.rules(of: server).isEmpty)
        #expect(
            try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme) == counts)
        #expect(try await Self.events(in: server) == events)
    }

    @Test("Applying the planned rules writes one revision that moves the users who follow rules, not the apps")
    func applyWritesOneRevision() async throws {
        let server = try await TestServer()
        try await Self.recordUsers(in: server)
        let before = try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            let plan = try await browser.post(
                Self.rules, ["csrf": csrf, "rules": Self.everyoneInB, "revision": "1", "action": "plan"])
            #expect(Self.revision(after: #"id="rules-plan""#, in: plan.text) == "1")
            let applied = try await browser.post(
                Self.rules, ["csrf": csrf, "rules": Self.everyoneInB, "revision": "1", "action": "apply"])
            #expect(applied.status == .seeOther)
            #expect(applied.headers[.location] == "\(Self.abTest)?notice=applied&revision=2#notice")
            let page = try await browser.get(applied.headers[.location]!)
            #expect(page.text.contains("Applied as revision 2."))
            #expect(page.text.contains("<td>1</td><td><code>everyone-b</code></td><td>everyone</td><td>Group B</td>"))
            #expect(try await client.send(.get, "/t/acme/production/features.json").headers[.revision] == "2")
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)
        #expect(try await Self.rules(of: server).map(\.id) == ["everyone-b"])
        // Everyone who follows rules is in Group B now; those left in Group A are apps keeping their point.
        let after = try await server.store.assignments.assignmentCounts(of: TestServer.abTest, in: TestServer.acme)
        let inA = after.first { $0.variation == "Group A" }?.users ?? 0
        #expect(inA > 0 && inA <= Self.appCount)
        #expect(inA < (before.first { $0.variation == "Group A" }?.users ?? 0))
    }

    @Test(
        "The rule builder's fields become a rule after the current ones, planned and applied as JSON; a user looked up with attributes is placed by it, named"
    )
    func ruleBuilder() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let page = try await browser.get(Self.abTest)
            #expect(page.text.contains(#"<option value="versionGreaterThanOrEqual">is a version from</option>"#))
            let csrf = DashboardBrowser.csrf(in: page)
            let fields: KeyValuePairs<String, String> = [
                "csrf": csrf, "revision": "1", "attribute": " country ", "op": "in", "values": "NZ, AU",
                "serve": "Group B", "action": "plan",
            ]
            let plan = try await browser.post(Self.rules, fields)
            #expect(plan.status == .ok)
            let rule =
                #"{"id": "country-in-nz-au", "clauses": [{"attribute": "country", "operator": "in", "values": ["NZ", "AU"]}], "serve": {"variation": "Group B"}}"#
            let text = try #require(
                plan.text.firstMatch(of: #/<textarea name="rules" hidden aria-hidden="true">([^<]*)</textarea>/#))
            let planned = try JSONParser.parse(
                Array(String(text.output.1).replacingOccurrences(of: "&quot;", with: "\"").utf8)
            ).value
            let expected: JSONValue = ["rules": .array([try JSONParser.parse(Array(rule.utf8)).value])]
            #expect(planned == expected)
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)

            let applied = try await browser.post(
                Self.rules,
                [
                    "csrf": csrf, "revision": "1", "rules": JSONWriter(style: .compact).string(of: planned),
                    "action": "apply",
                ])
            #expect(applied.status == .seeOther)
            let lookup = try await browser.get(
                "\(Self.base)/users?user=kiwi&attributes=country%3DNZ%2C+appVersion%3D5.2")
            #expect(lookup.text.contains("rule country-in-nz-au"))
            #expect(lookup.text.contains("Rules read the attributes typed above"))
            let malformed = try await browser.get("\(Self.base)/users?user=kiwi&attributes=NZ")
            #expect(malformed.status == .unprocessableContent && malformed.text.contains("write it as name=value"))

            // Two mistakes at once (no attribute, a value that is no number): both listed, nothing written.
            let refused = try await browser.post(
                Self.rules,
                [
                    "csrf": csrf, "revision": "2", "attribute": "", "op": "lessThan", "values": "many",
                    "serve": "Group B", "action": "plan",
                ])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.components(separatedBy: "<li class=\"error\">").count - 1 >= 2)
        }
        #expect(try await Self.rules(of: server).map(\.id) == ["country-in-nz-au"])
    }

    @Test(
        "A FeatureFlags app placed before a rule: the user page says it keeps that place, from which revision, and where the rule puts a new user"
    )
    func pinnedAppOutsideANewRule() async throws {
        let server = try await TestServer()
        let newZealand = try UserAttributes(["country": .string("NZ")])
        var app: UserID?
        for index in 1...20 where app == nil {
            let user = UserID(rawValue: "nz-app-\(index)")
            let document = try await server.store.assignments.pinnedDocument(
                for: user, in: TestServer.acme, attributes: newZealand)
            if document.assignments.first(where: { $0.feature == TestServer.abTest })?.variation == "Group A" {
                app = user
            }
        }
        let user = try #require(app)
        let placedAt = try await server.store.catalog.revision(of: TestServer.acme).number
        _ = try await server.store.catalog.setRules(
            [
                TargetingRule(
                    id: "nz-gets-b", clauses: [Clause(attribute: "country", op: .equals, values: [.string("NZ")])],
                    serve: .variation("Group B"))
            ], ofFeature: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get("\(Self.base)/users?user=\(user.rawValue)")
            #expect(page.status == .ok)
            #expect(
                page.text.contains(
                    "their FeatureFlags app keeps the place it was given at revision \(placedAt), in Group A"))
            #expect(page.text.contains("would get Group B by rule nz-gets-b, but not this one"))
            #expect(!page.text.contains("bucket"))
        }
    }

    @Test("A stale rules form gets the conflict, keeps its text for the current revision, and writes nothing")
    func staleRulesFormConflicts() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            // Someone else changes the environment after the page was read.
            _ = try await server.store.catalog.setEnabled(
                false, feature: "Example MVT Test", in: TestServer.acme, options: EditOptions(actor: "someone"))
            for action in ["plan", "apply"] {
                let stale = try await browser.post(
                    Self.rules, ["csrf": csrf, "rules": Self.everyoneInB, "revision": "1", "action": action])
                #expect(stale.status == .conflict, "\(action)")
                #expect(stale.text.contains("is at revision 2, not 1: someone changed it since you read it"))
                #expect(stale.text.contains("your text is kept: plan it again"))
                #expect(stale.text.contains("&quot;everyone-b&quot;"))
                #expect(Self.revision(after: #"id="rules-form""#, in: stale.text) == "2")
                #expect(!stale.text.contains("Apply these rules"))
            }
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 2)
        #expect(try await Self.rules(of: server).isEmpty)
    }

    @Test(
        "Refused rules come back as typed, each problem with its line and column or pointer, and nothing is written",
        arguments: [
            RefusedRules(
                text:
                    "{\"rules\": [\n  {\"id\": \"de\", \"serve\": {\"variation\": \"Group B\"},\n   \"clauses\": [{\"attribute\": \"country\", \"operator\": \"is\", \"values\": [\"DE\"]}]}\n]}",
                place: "line 3, column 53, at /rules/0/clauses/0/operator", message: "&quot;is&quot;"),
            RefusedRules(
                text: "{\"rules\": [\n  {\"id\": \"de\",, }\n]}", place: "line 2, column 15",
                message: ""),
            RefusedRules(
                text: #"{"rules": [{"id": "z", "serve": {"variation": "Group Z"}}]}"#,
                place: "at /rules/0/serve", message: "the feature has no variation &quot;Group Z&quot;"),
            RefusedRules(
                text:
                    #"{"rules": [{"id": "b", "clauses": [{"operator": "inSegment", "values": ["nobody"]}], "serve": {"variation": "Group B"}}]}"#,
                place: "at /rules/0/clauses/0", message: "no segment is named &quot;nobody&quot; in this environment"),
        ])
    func refusedRules(_ refused: RefusedRules) async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.abTest))
            let page = try await browser.post(
                Self.rules, ["csrf": csrf, "rules": refused.text, "revision": "1", "action": "plan"])
            #expect(page.status == .unprocessableContent)
            #expect(page.text.contains("The rules were refused: nothing was written."))
            #expect(page.text.contains("Refused: nothing was written"))
            #expect(page.text.contains("<strong>\(refused.place)</strong>: "), "\(page.text)")
            #expect(refused.message.isEmpty || page.text.contains(refused.message))
            #expect(page.text.contains(#"aria-invalid="true" aria-describedby="rules-issues""#))
            let kept = refused.text.replacingOccurrences(of: "\"", with: "&quot;")
            #expect(page.text.contains(">\(kept)</textarea>"))
            #expect(!page.text.contains("Apply these rules"))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(try await Self.rules(of: server).isEmpty)
    }

    @Test(
        "Segments: created after a plan that writes nothing, replaced after a plan of who moves, deleted only once no rule names it"
    )
    func segmentPages() async throws {
        let server = try await TestServer()
        try await Self.recordUsers(in: server)
        // The recorded users in Group A: listed in the segment, a rule moves them to Group B.
        let inA = try await (1...Self.userCount).asyncFilter { index in
            try await server.store.assignments.evaluate(UserID(rawValue: "user-\(index)"), in: TestServer.acme).first {
                $0.feature == TestServer.abTest
            }?.variation == "Group A"
        }.map { "user-\($0)" }
        try #require(inA.count >= 2)
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let list = try await browser.get(Self.segments)
            #expect(list.text.contains("No segment yet.") && list.text.contains(#"href="\#(Self.newSegment)""#))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.newSegment))

            // Created: planned (nothing written), then applied as planned.
            let fields: KeyValuePairs<String, String> = [
                "csrf": csrf, "revision": "1", "name": "beta", "description": "Early users",
                "users": "\(inA[0])\r\n\r\nnobody-recorded\r\n", "clauses": "",
            ]
            let planned = try await browser.post(Self.newSegment, pairs: Self.pairs(fields, ("action", "plan")))
            #expect(planned.status == .ok)
            #expect(planned.text.contains("Applying makes revision 2. No test&#39;s rules depend on this change"))
            #expect(planned.text.contains("Apply as revision 2"))
            #expect(try await server.store.catalog.targeting(in: TestServer.acme).segments.isEmpty)
            let created = try await browser.post(Self.newSegment, pairs: Self.pairs(fields, ("action", "apply")))
            #expect(created.headers[.location] == "\(Self.segments)/beta?notice=applied&revision=2#notice")
            let again = try await browser.post(Self.newSegment, pairs: Self.pairs(fields, ("action", "plan")))
            #expect(again.status == .conflict)
            #expect(again.text.contains("A segment named &quot;beta&quot; exists already: nothing was written."))
            let listed = try await browser.get(Self.segments).text
            #expect(listed.contains("<td>2</td>") && listed.contains("Early users"))

            // Named by a rule, replacing it is planned as a move of the users it adds.
            let rule =
                #"{"rules": [{"id": "beta-b", "clauses": [{"operator": "inSegment", "values": ["beta"]}], "serve": {"variation": "Group B"}}]}"#
            _ = try await browser.post(Self.rules, ["csrf": csrf, "rules": rule, "revision": "2", "action": "apply"])
            #expect(try await Self.rules(of: server).map(\.id) == ["beta-b"])
            let page = try await browser.get("\(Self.segments)/beta")
            #expect(page.text.contains(#"<a href="\#(Self.abTest)">\#(TestServer.abTest)</a> <code>beta-b</code>"#))
            #expect(page.text.contains(">nobody-recorded\n\(inA[0])</textarea>"))
            let replace: KeyValuePairs<String, String> = [
                "csrf": csrf, "revision": "3", "description": "Early users",
                "users": "\(inA[0])\n\(inA[1])\nnobody-recorded", "clauses": "",
            ]
            let plan = try await browser.post("\(Self.segments)/beta", pairs: Self.pairs(replace, ("action", "plan")))
            #expect(plan.status == .ok)
            #expect(plan.text.contains("1 recorded user moves from Group A to Group B: <code>\(inA[1])</code>"))
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 3)
            let replaced = try await browser.post(
                "\(Self.segments)/beta", pairs: Self.pairs(replace, ("action", "apply")))
            #expect(replaced.headers[.location] == "\(Self.segments)/beta?notice=applied&revision=4#notice")
            let moved = try await server.store.assignments.evaluate(UserID(rawValue: inA[1]), in: TestServer.acme).first
            {
                $0.feature == TestServer.abTest
            }
            #expect(moved?.variation == "Group B")

            // Deleting is refused while the rule names it, then asked, then done.
            let inUse = try await browser.post(
                "\(Self.segments)/beta/delete", ["csrf": csrf, "action": "preview", "revision": "4"])
            #expect(inUse.status == .conflict)
            #expect(inUse.text.contains("is used by \(TestServer.abTest)/beta-b: change those rules first."))
            _ = try await browser.post(
                Self.rules, ["csrf": csrf, "rules": #"{"rules": []}"#, "revision": "4", "action": "apply"])
            let asked = try await browser.post(
                "\(Self.segments)/beta/delete", ["csrf": csrf, "action": "preview", "revision": "5"])
            #expect(asked.status == .ok && asked.text.contains("Deleting makes revision 6"))
            #expect(try await server.store.catalog.targeting(in: TestServer.acme).segments.count == 1)
            let deleted = try await browser.post(
                "\(Self.segments)/beta/delete", ["csrf": csrf, "action": "apply", "revision": "5"])
            #expect(deleted.headers[.location] == "\(Self.segments)?notice=applied&revision=6#notice")
            #expect(try await browser.get("\(Self.segments)/beta").status == .notFound)
        }
        #expect(try await server.store.catalog.targeting(in: TestServer.acme).segments.isEmpty)
    }

    @Test("A refused segment comes back as typed, each problem placed in its field, and nothing is written")
    func refusedSegment() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .editor))
            let csrf = DashboardBrowser.csrf(in: try await browser.get(Self.newSegment))
            let cases: [(fields: KeyValuePairs<String, String>, place: String)] = [
                (["name": "beta", "clauses": "[\n  {\"attribute\": \"email\",, }\n]"], "Clauses, line 2, column 25"),
                (
                    [
                        "name": "beta",
                        "clauses": "[\n  {\"attribute\": \"email\", \"operator\": \"near\", \"values\": [\"x\"]}]",
                    ],
                    "Clauses, line 2, column 38, at /0/operator"
                ),
                (
                    ["name": "beta", "clauses": #"[{"attribute": "email", "operator": "near", "values": ["x"]}]"#],
                    "Clauses, line 1, column 37, at /0/operator"
                ),
                (["name": "beta", "users": "ok-1\n\nbad\u{1}id"], "Users, line 3, column 1"),
                (["name": "not a name"], "Name"),
            ]
            for (fields, place) in cases {
                let refused = try await browser.post(
                    Self.newSegment, pairs: Self.pairs(fields, ("csrf", csrf), ("revision", "1"), ("action", "plan")))
                #expect(refused.status == .unprocessableContent, "\(place)")
                #expect(refused.text.contains("The segment was refused: nothing was written."))
                #expect(refused.text.contains("<strong>\(place)</strong>: "), "\(place): \(refused.text)")
                #expect(!refused.text.contains("Apply as revision"))
            }
            let kept = try await browser.post(
                Self.newSegment,
                [
                    "csrf": csrf, "revision": "1", "name": "beta", "description": "kept", "clauses": "[",
                    "action": "plan",
                ])
            #expect(kept.text.contains(#"name="description" value="kept""#))
            #expect(kept.text.contains(#"name="clauses" rows="6" spellcheck="false""#))
            #expect(kept.text.contains(">[</textarea>"))
        }
        #expect(try await server.store.catalog.revision(of: TestServer.acme).number == 1)
        #expect(try await server.store.catalog.targeting(in: TestServer.acme).segments.isEmpty)
    }
}

/// Rules the editor refuses, where the page must say the problem is, and what it says.
struct RefusedRules: Sendable, CustomTestStringConvertible {
    var text: String
    var place: String
    var message: String

    var testDescription: String { place }
}

extension ClosedRange where Bound == Int {
    /// The numbers `isIncluded` keeps, asked one after the other.
    func asyncFilter(_ isIncluded: (Int) async throws -> Bool) async rethrows -> [Int] {
        var kept: [Int] = []
        for number in self where try await isIncluded(number) { kept.append(number) }
        return kept
    }
}
