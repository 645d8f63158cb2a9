import FlagpoleCore
import FlagpoleStore
import FlagpoleTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Rules and segments over the API, the attributes delivery and OFREP take, and forgetting a user.
@Suite("Targeting over the API")
struct TargetingAPITests {
    static let environment = "/api/v1/tenants/acme/environments/production"
    static let rules = "\(environment)/features/\(segment(TestServer.abTest))/rules"
    static let features = "/t/acme/production/features.json"
    static let ofrep = "\(OFREPTests.base)/\(segment(TestServer.abTest))"
    /// Users in Germany get Group B.
    static let germanyRule =
        #"{"id": "de-gets-b", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "Group B"}}"#

    /// The group `user` has without rules nor attributes, read without recording anything.
    static func naturalGroup(of user: String, in server: TestServer) async throws -> String? {
        try await server.store.assignments.evaluate(UserID(rawValue: user), in: TestServer.acme).first {
            $0.feature == TestServer.abTest
        }?.variation
    }

    /// The first of `candidates` whose group without rules is `group`.
    static func user(in group: String, among candidates: [String], in server: TestServer) async throws -> String {
        for candidate in candidates where try await naturalGroup(of: candidate, in: server) == group {
            return candidate
        }
        Issue.record("no candidate is in \(group)")
        return candidates[0]
    }

    @Test("PUT rules: a dry run writes nothing and answers its plan; applied, one revision; a stale If-Match is 409")
    func putRules() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        let delivery = server.key("acme", .delivery)
        try await server.test { client in
            // Followers (OFREP) in Germany and France, and FeatureFlags apps in Germany, recorded before any rule.
            var germansInGroupA: Set<String> = []
            for index in 0..<16 {
                let user = "follower-\(index)"
                let country = index % 4 == 0 ? "FR" : "DE"
                let answer = try await client.send(
                    .post, Self.ofrep, key: delivery,
                    body: #"{"context": {"targetingKey": "\#(user)", "country": "\#(country)"}}"#)
                #expect(answer.status == .ok)
                if country == "DE", try answer.json["variant"] == .string("Group A") { germansInGroupA.insert(user) }
            }
            try #require(!germansInGroupA.isEmpty)
            var appsInGroupA = 0
            for index in 0..<6 {
                let bytes = try await client.send(.get, "\(Self.features)?user=app-\(index)&attr.country=DE").bytes
                if try OFREPTests.pinnedVariation(of: TestServer.abTest, in: bytes) == "Group A" { appsInGroupA += 1 }
            }
            let revisionsBefore = try await server.store.catalog.revisions(of: TestServer.acme).count

            // A second rule whose clauses contradict each other: written, with a warning.
            let body =
                #"{"rules": [\#(Self.germanyRule), {"id": "never", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}, {"attribute": "country", "operator": "equals", "values": ["FR"]}], "serve": {"variation": "Group A"}}]"#
            let dryRun = try await client.send(.put, Self.rules, key: editor, body: body + #", "dryRun": true}"#)
            #expect(dryRun.status == .ok)
            let planned = try dryRun.json
            #expect(planned["dryRun"] == .bool(true) && planned["applied"] == .bool(false))
            #expect(planned["revision"]?.number == Double(revisionsBefore + 1))
            let plan = try #require(planned["plans"]?.array?.first { $0["feature"] == .string(TestServer.abTest) })
            #expect(plan["recordedUsers"]?.number == 22)
            #expect(plan["usersWithAttributes"]?.number == 22)
            #expect(plan["movingUsers"]?.number == Double(germansInGroupA.count))
            let move = try #require(plan["moves"]?[0])
            #expect(move["from"] == .string("Group A") && move["to"] == .string("Group B"))
            let examples = Set(move["examples"]?.array?.compactMap(\.string) ?? [])
            #expect(!examples.isEmpty && examples.isSubset(of: germansInGroupA))
            #expect(plan["keptByApps"]?.array?.compactMap { $0["users"]?.number }.reduce(0, +) == Double(appsInGroupA))
            #expect(planned["warnings"]?[0]?["config"] == .string("never"))
            #expect(planned["warnings"]?[0]?["severity"] == .string("warning"))
            // Nothing written: no revision, no rules, nobody moved.
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == revisionsBefore)
            #expect(try await client.send(.get, Self.rules, key: editor).json["rules"] == .array([]))
            let mover = try #require(germansInGroupA.first)
            #expect(try await Self.naturalGroup(of: mover, in: server) == "Group A")

            let applied = try await client.send(
                .put, Self.rules, key: editor, headers: [.ifMatch: "\(revisionsBefore)"], body: body + "}")
            #expect(applied.status == .ok)
            let outcome = try applied.json
            #expect(outcome["applied"] == .bool(true) && outcome["dryRun"] == .bool(false))
            #expect(outcome["revision"]?.number == Double(revisionsBefore + 1))
            #expect(outcome["changes"]?[0]?["field"] == .string("rules"))
            #expect(outcome["plans"]?[0]?["movingUsers"]?.number == Double(germansInGroupA.count))
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == revisionsBefore + 1)
            let read = try await client.send(.get, Self.rules, key: server.key("acme", .reader)).json
            #expect(read["revision"]?.number == Double(revisionsBefore + 1))
            #expect(read["rules"]?.array?.compactMap { $0["id"]?.string } == ["de-gets-b", "never"])
            // The follower moved at once, with an event naming the reason.
            let events = try await client.send(
                .get, "\(Self.environment)/assignments?user=\(mover)", key: editor
            ).json["events"]
            #expect(events?[0]?["reason"] == .string("rules") && events?[0]?["variation"] == .string("Group B"))

            // Stale: the revision read before the change.
            let stale = try await client.send(
                .put, Self.rules, key: editor, headers: [.ifMatch: "\(revisionsBefore)"], body: #"{"rules": []}"#)
            #expect(stale.status == .conflict)
            #expect(stale.errorCode == "stale_revision")
            #expect(try stale.json["error"]?["details"]?["current"]?.number == Double(revisionsBefore + 1))
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == revisionsBefore + 1)
            // A reader can't write; an unknown feature is 404.
            #expect(
                try await client.send(.put, Self.rules, key: server.key("acme", .reader), body: #"{"rules": []}"#)
                    .status == .forbidden)
            let unknown = try await client.send(
                .put, "\(Self.environment)/features/Nothing/rules", key: editor, body: #"{"rules": []}"#)
            #expect(unknown.status == .notFound && unknown.errorCode == "not_found")
        }
    }

    @Test("Refused rules are 422 with each issue's place: an unknown variation, an unknown operator")
    func refusedRules() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let revisionsBefore = try await server.store.catalog.revisions(of: TestServer.acme).count
            // The environment's features decide: the variation doesn't exist.
            let variation = try await client.send(
                .put, Self.rules, key: editor,
                body: #"{"rules": [\#(Self.germanyRule), {"id": "z", "serve": {"variation": "Group Z"}}]}"#)
            #expect(variation.status == .unprocessableContent)
            #expect(variation.errorCode == "invalid_targeting")
            let issue = try variation.json["error"]?["details"]?["issues"]?[0]
            #expect(issue?["pointer"] == .string("/rules/1/serve"))
            #expect(issue?["config"] == .string("z"))
            #expect(issue?["severity"] == .string("error"))
            #expect(issue?["message"]?.string?.contains("Group Z") == true)

            // The decoder decides: the operator doesn't exist; its line and column are given.
            let operatorBody = """
                {"rules": [
                  {"id": "r", "clauses": [{"attribute": "country", "operator": "matches", "values": ["DE"]}],
                   "serve": {"variation": "Group B"}}]}
                """
            let op = try await client.send(.put, Self.rules, key: editor, body: operatorBody)
            #expect(op.status == .unprocessableContent)
            #expect(op.errorCode == "invalid_targeting")
            let opIssue = try op.json["error"]?["details"]?["issues"]?[0]
            #expect(opIssue?["pointer"] == .string("/rules/0/clauses/0/operator"))
            #expect(opIssue?["line"] == .number(2) && opIssue?["column"] == .number(64))
            #expect(opIssue?["message"]?.string?.contains("matches") == true)

            // A body that is not JSON is 400; an empty one too; a wrong dryRun is 422 `invalid`.
            #expect(try await client.send(.put, Self.rules, key: editor, body: "{").status == .badRequest)
            #expect(try await client.send(.put, Self.rules, key: editor, body: "").status == .badRequest)
            let dryRun = try await client.send(.put, Self.rules, key: editor, body: #"{"rules": [], "dryRun": 1}"#)
            #expect(dryRun.status == .unprocessableContent && dryRun.errorCode == "invalid")
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == revisionsBefore)
        }
    }

    @Test("Segments: PUT, GET and list them; DELETE is 409 while rules use one, then deletes it; unknown is 404")
    func segments() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        let reader = server.key("acme", .reader)
        let url = "\(Self.environment)/segments/beta"
        try await server.test { client in
            let put = try await client.send(
                .put, url, key: editor,
                body:
                    #"{"description": "Our testers", "users": ["tester-2", "tester-1"], "clauses": [{"attribute": "email", "operator": "endsWith", "values": ["@acme.example"]}], "message": "testers"}"#
            )
            #expect(put.status == .ok)
            let outcome = try put.json
            #expect(outcome["applied"] == .bool(true) && outcome["revision"] == .number(2))
            #expect(outcome["changes"]?[0]?["segment"] == .string("beta"))
            #expect(outcome["changes"]?[0]?["change"] == .string("added"))
            #expect(
                try await client.send(.get, url, key: reader).json
                    == [
                        "name": .string("beta"), "description": .string("Our testers"),
                        "users": .array([.string("tester-1"), .string("tester-2")]),
                        "clauses": .array([
                            [
                                "attribute": .string("email"), "operator": .string("endsWith"),
                                "values": .array([.string("@acme.example")]),
                            ]
                        ]),
                    ])
            let list = try await client.send(.get, "\(Self.environment)/segments", key: reader).json
            #expect(list["revision"] == .number(2))
            #expect(list["segments"]?.array?.compactMap { $0["name"]?.string } == ["beta"])
            // A name that differs from the path's is refused.
            let renamed = try await client.send(.put, url, key: editor, body: #"{"name": "gamma"}"#)
            #expect(renamed.status == .unprocessableContent && renamed.errorCode == "invalid_targeting")
            #expect(try renamed.json["error"]?["details"]?["issues"]?[0]?["pointer"] == .string("/name"))
            // A segment's clauses can't name segments.
            let nested = try await client.send(
                .put, "\(Self.environment)/segments/nested", key: editor,
                body: #"{"clauses": [{"operator": "inSegment", "values": ["beta"]}]}"#)
            #expect(nested.status == .unprocessableContent && nested.errorCode == "invalid_targeting")

            // Rules name it: it can't be deleted.
            let rules = try await client.send(
                .put, Self.rules, key: editor,
                body:
                    #"{"rules": [{"id": "testers-get-b", "clauses": [{"operator": "inSegment", "values": ["beta"]}], "serve": {"variation": "Group B"}}]}"#
            )
            #expect(rules.status == .ok)
            let inUse = try await client.send(.delete, url, key: editor)
            #expect(inUse.status == .conflict)
            #expect(inUse.errorCode == "segment_in_use")
            #expect(try inUse.json["error"]?["message"]?.string?.contains("testers-get-b") == true)
            #expect(try await client.send(.get, url, key: reader).status == .ok)
            // A rule naming a segment the environment lacks is refused.
            let missing = try await client.send(
                .put, Self.rules, key: editor,
                body:
                    #"{"rules": [{"id": "r", "clauses": [{"operator": "inSegment", "values": ["nobody"]}], "serve": {"variation": "Group B"}}]}"#
            )
            #expect(missing.errorCode == "invalid_targeting")
            #expect(try missing.json["error"]?["details"]?["issues"]?[0]?["pointer"] == .string("/rules/0/clauses/0"))

            #expect(try await client.send(.put, Self.rules, key: editor, body: #"{"rules": []}"#).status == .ok)
            let dryRun = try await client.send(.delete, url, key: editor, body: #"{"dryRun": true}"#)
            #expect(try dryRun.json["applied"] == .bool(false))
            #expect(try await client.send(.get, url, key: reader).status == .ok)
            let deleted = try await client.send(.delete, url, key: editor)
            #expect(deleted.status == .ok)
            #expect(try deleted.json["changes"]?[0]?["change"] == .string("removed"))
            let gone = try await client.send(.get, url, key: reader)
            #expect(gone.status == .notFound && gone.errorCode == "not_found")
            let again = try await client.send(.delete, url, key: editor)
            #expect(again.status == .notFound && again.errorCode == "not_found")
            #expect(try await client.send(.put, url, key: reader, body: "{}").status == .forbidden)
        }
    }

    @Test("features.json?user=&attr. pins the rule's variation; OFREP and evaluate say the same, naming the rule")
    func ruleDecidesDelivery() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        // Users whose group without rules is Group A: only the rule can put them in Group B.
        let candidates = (0..<40).map { "device-\($0)" }
        let user = try await Self.user(in: "Group A", among: candidates, in: server)
        let frenchUser = try await Self.user(in: "Group A", among: candidates.filter { $0 != user }, in: server)
        try await server.test { client in
            let put = try await client.send(.put, Self.rules, key: editor, body: #"{"rules": [\#(Self.germanyRule)]}"#)
            #expect(put.status == .ok)

            let pinned = try await client.send(.get, "\(Self.features)?user=\(user)&attr.country=DE")
            #expect(pinned.status == .ok)
            let root = try pinned.json
            let object = try #require(root["features"]?.array?.first { $0["name"] == .string(TestServer.abTest) })
            let point = try #require(object[Feature.assignmentKey]?.number)
            let feature = try #require(
                DocumentDecoder.decode(pinned.bytes).document?.features.first { $0.name == TestServer.abTest })
            let range = try #require(VariationRanges(of: feature).ranges.first { $0.name == "Group B" })
            #expect(range.lower <= point && point < range.upper, "\(point) lies in Group B's range")
            #expect(try OFREPTests.pinnedVariation(of: TestServer.abTest, in: pinned.bytes) == "Group B")
            // Another user in Group A, not in Germany, stays where the biases put them.
            let other = try await client.send(.get, "\(Self.features)?user=\(frenchUser)&attr.country=FR").bytes
            #expect(try OFREPTests.pinnedVariation(of: TestServer.abTest, in: other) == "Group A")

            let evaluation = try await client.send(
                .post, Self.ofrep, body: #"{"context": {"targetingKey": "\#(user)", "country": "DE"}}"#)
            #expect(evaluation.status == .ok)
            let json = try evaluation.json
            #expect(json["variant"] == .string("Group B") && json["value"] == .string("Group B"))
            #expect(json["reason"] == .string("TARGETING_MATCH"))
            #expect(json["metadata"]?["rule"] == .string("de-gets-b"))
            let bulk = try await client.send(
                .post, OFREPTests.base, body: #"{"context": {"targetingKey": "\#(user)", "country": "DE"}}"#
            ).json
            let flag = try #require(bulk["flags"]?.array?.first { $0["key"] == .string(TestServer.abTest) })
            #expect(flag["metadata"]?["rule"] == .string("de-gets-b"))
            let french = try await client.send(
                .post, Self.ofrep, body: #"{"context": {"targetingKey": "\#(frenchUser)", "country": "FR"}}"#
            ).json
            #expect(french["reason"] == .string("SPLIT") && french["metadata"]?["rule"] == nil)

            let evaluated = try await client.send(
                .get, "\(Self.environment)/evaluate?user=\(user)&attr.country=DE", key: server.key("acme", .reader)
            ).json
            let row = try #require(evaluated["features"]?.array?.first { $0["feature"] == .string(TestServer.abTest) })
            #expect(row["reason"] == .string("rule") && row["rule"] == .string("de-gets-b"))
            #expect(row["variation"] == .string("Group B"))
        }
    }

    /// Attribute names a team may write rules on: non-ASCII, spaces, and the characters a query
    /// string treats specially (`&`, `=`, `%`, `+`), then names drawn at random from them.
    static func awkwardAttributeNames(seed: UInt64) -> [String] {
        let alphabet = Array("aZ9ßé日 &=%+-.")
        var generator = SeededGenerator(seed: seed)
        let drawn = (0..<6).map { _ in
            String(
                (0..<Int.random(in: 1...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        return ["städte", "app version", "a&b", "x=y", "100%", "c++", "ü + ö"] + drawn
    }

    /// A query string's part as a client that encodes everything but RFC 3986's unreserved
    /// characters writes it (`URLComponents` leaves `&`, `=` and `+` alone; a careful app doesn't).
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))!
    }

    @Test(
        "Attribute names in a query are percent-decoded as values are: a rule on any name places a user alike from features.json, configs.json, OFREP and Bucketeer, on the router and on the event loop",
        arguments: [false, true])
    func attributeNamesDecode(onEventLoop: Bool) async throws {
        let server = try await OFREPTests.server()
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_ATTRIBUTE_NAMES_SEED")
        let candidates = (0..<400).map { "device-\($0)" }
        var inGroupA: [String] = []
        for candidate in candidates where try await Self.naturalGroup(of: candidate, in: server) == "Group A" {
            inGroupA.append(candidate)
        }
        let names = Self.awkwardAttributeNames(seed: seed)
        try #require(inGroupA.count >= 4 * names.count)
        for (index, name) in names.enumerated() {
            _ = try await server.store.catalog.setRules(
                [
                    TargetingRule(
                        id: "r-\(index)",
                        clauses: [Clause(attribute: name, op: .equals, values: [.string("yes + no")])],
                        serve: .variation("Group B"))
                ], ofFeature: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
            let users = inGroupA[(4 * index)..<(4 * index + 4)].map { $0 }
            let query = "attr.\(Self.encoded(name))=\(Self.encoded("yes + no"))"
            var contextObject: JSONObject = ["targetingKey": .string(users[2])]
            contextObject.append(name, .string("yes + no"))
            let context = JSONWriter(style: .compact).string(of: ["context": .object(contextObject)])
            let ask: @Sendable (any TestClientProtocol) async throws -> [String?] = { client in
                let pinned = try await client.send(.get, "\(Self.features)?user=\(users[0])&\(query)")
                #expect(pinned.status == .ok, "\(pinned.text)")
                let configs = try await client.send(.get, "/t/acme/production/configs.json?user=\(users[1])&\(query)")
                #expect(configs.status == .ok, "\(configs.text)")
                let ofrep = try await client.send(.post, Self.ofrep, body: context)
                let bucketeer = try await BucketeerTests.poll(
                    client, key: "k", body: try BucketeerTests.evaluationsBody(user: users[3], data: [name: "yes + no"])
                )
                // The user OFREP placed fetches their own file, naming the attribute in the query:
                // the rule still holds them, and what is kept is the name as written.
                let again = try await client.send(.get, "\(Self.features)?user=\(users[2])&\(query)")
                return [
                    try OFREPTests.pinnedVariation(of: TestServer.abTest, in: pinned.bytes),
                    try configs.json["title"] == .string("Hello") ? "Group B" : "not Group B",
                    try ofrep.json["variant"]?.string,
                    bucketeer.evaluations.evaluations.first { $0.featureId == TestServer.abTest }?.variationValue,
                    try OFREPTests.pinnedVariation(of: TestServer.abTest, in: again.bytes),
                ]
            }
            let groups = try await onEventLoop ? server.live(ask) : server.test(ask)
            #expect(groups == Array(repeating: "Group B", count: 5), "attribute \"\(name)\" (seed \(seed))")
            let kept = try await server.store.catalog.keptAttributes(
                of: UserID(rawValue: users[0]), in: TestServer.acme)
            #expect(kept?.values.keys.sorted() == [name], "attribute \"\(name)\" (seed \(seed))")
        }
    }

    @Test("Attributes: too many bytes is 413, too many keys or a bad name 422; OFREP says INVALID_CONTEXT")
    func attributeLimits() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let fifty = (0..<50).map { "attr.k\($0)=1" }.joined(separator: "&")
            #expect(try await client.send(.get, "\(Self.features)?user=u-1&\(fifty)").status == .ok)
            let tooMany = try await client.send(.get, "\(Self.features)?user=u-1&\(fifty)&attr.k50=1")
            #expect(tooMany.status == .unprocessableContent && tooMany.errorCode == "invalid")
            let big = String(repeating: "x", count: 4_100)
            let large = try await client.send(.get, "\(Self.features)?user=u-1&attr.bio=\(big)")
            #expect(large.status == .contentTooLarge && large.errorCode == "too_large")
            let configs = try await client.send(.get, "/t/acme/production/configs.json?user=u-1&attr.bio=\(big)")
            #expect(configs.status == .contentTooLarge && configs.errorCode == "too_large")
            let evaluate = try await client.send(
                .get, "\(Self.environment)/evaluate?user=u-1&attr.bio=\(big)", key: server.key("acme", .reader))
            #expect(evaluate.status == .contentTooLarge)
            // Just under the bound is fine: {"bio":"…"} is 10 bytes beside the value.
            let fits = String(repeating: "x", count: 4_086)
            #expect(try await client.send(.get, "\(Self.features)?user=u-1&attr.bio=\(fits)").status == .ok)
            let reserved = try await client.send(.get, "\(Self.features)?user=u-1&attr.targetingKey=u-2")
            #expect(reserved.status == .unprocessableContent && reserved.errorCode == "invalid")
            let empty = try await client.send(.get, "\(Self.features)?user=u-1&attr.=x")
            #expect(empty.status == .unprocessableContent)
            let withoutUser = try await client.send(.get, "\(Self.features)?attr.country=DE")
            #expect(withoutUser.status == .unprocessableContent && withoutUser.errorCode == "invalid")

            // A list or an object, which OpenFeature contexts may hold, is no attribute: left out.
            let nested = try await client.send(
                .post, Self.ofrep, body: #"{"context": {"targetingKey": "u-1", "device": {"model": "x"}, "tags": [1]}}"#
            )
            #expect(try nested.status == .ok && nested.json["variant"]?.string != nil)
            let huge = try await client.send(
                .post, Self.ofrep, body: #"{"context": {"targetingKey": "u-1", "bio": "\#(big)"}}"#)
            #expect(huge.status == .contentTooLarge)
            #expect(try huge.json["errorCode"] == .string("INVALID_CONTEXT"))
        }
    }

    @Test("DELETE users/{user} forgets the user's groups, history and attributes; a reader or an editor gets 403")
    func forgetUser() async throws {
        let server = try await TestServer()
        let history = "\(Self.environment)/assignments?user="
        let reader = server.key("acme", .reader)
        try await server.test { client in
            for user in ["leaving", "staying"] {
                #expect(
                    try await client.send(.get, "\(Self.features)?user=\(user)&attr.country=DE").status == .ok)
            }
            #expect(
                try await client.send(
                    .put, "\(Self.environment)/segments/testers", key: server.key("acme", .editor),
                    body: #"{"users": ["leaving"]}"#
                ).status == .ok)
            let before = try await client.send(.get, history + "leaving", key: reader).json["events"]?.array ?? []
            #expect(before.count == 3, "one first assignment per bucketed test")

            for role in [KeyRole.reader, .editor] {
                let refused = try await client.send(
                    .delete, "/api/v1/tenants/acme/users/leaving", key: server.key("acme", role))
                #expect(refused.status == .forbidden && refused.errorCode == "forbidden", "\(role)")
            }
            #expect(try await client.send(.get, history + "leaving", key: reader).json["events"]?.array?.count == 3)

            let forgotten = try await client.send(
                .delete, "/api/v1/tenants/acme/users/leaving", key: server.key("acme", .admin))
            #expect(forgotten.status == .ok)
            let report = try forgotten.json
            #expect(report["tenant"] == .string("acme"))
            #expect(report["deleted"]?["assignments"] == .number(3))
            #expect(report["deleted"]?["assignmentEvents"] == .number(3))
            #expect(report["deleted"]?["attributes"] == .number(1))
            #expect(report["segmentsListingUser"] == .array([.string("production/testers")]))
            #expect(try await client.send(.get, history + "leaving", key: reader).json["events"] == .array([]))
            #expect(try await client.send(.get, history + "staying", key: reader).json["events"]?.array?.count == 3)
            // Another tenant's admin can't reach it; a user id that can't be one is 400.
            #expect(
                try await client.send(
                    .delete, "/api/v1/tenants/acme/users/staying", key: server.key("globex", .admin)
                ).status == .notFound)
            #expect(
                try await client.send(
                    .delete, "/api/v1/tenants/acme/users/\(String(repeating: "x", count: 257))",
                    key: server.key("acme", .admin)
                ).status == .badRequest)
        }
    }
}
