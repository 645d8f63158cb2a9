import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

/// Rules applied: at a user's first fetch, when their attributes change, by a change of rules
/// (planned first), and beside bias changes; FeatureFlags apps keep the point they were given.
@Suite("Rules decide users' groups")
struct TargetingEvaluationTests {
    static let options = EditOptions(actor: "test")
    static let de = try! UserAttributes(["country": .string("DE")])
    static let fr = try! UserAttributes(["country": .string("FR")])

    /// Checkout A/B/C at 50/50/0 and a rule giving German users B.
    static func store(rules: String = Self.germansGetB) async throws -> FeatureStore {
        let store = try await TargetingStoreTests.store()
        _ = try await store.catalog.setRules(
            try TargetingStoreTests.rules(rules), ofFeature: "Checkout", in: .acmeProduction, options: options)
        return store
    }

    static let germansGetB = #"""
        {"rules": [{"id": "de", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}],
                    "serve": {"variation": "B"}}]}
        """#

    /// Users whose own point for Checkout lies in A, so that a rule serving B visibly decides.
    static func usersInA(_ count: Int, of store: FeatureStore) async throws -> [UserID] {
        let salt = try await store.storedFeatures().first { $0.feature.name == "Checkout" }!.salt
        let points = UserPoints(salt: salt)
        return (0..<200).map { UserID(rawValue: "user-\($0)") }.filter { points.point(for: $0.rawValue) < 50 }
            .prefix(count).map { $0 }
    }

    /// The point the pinned document gives the app for Checkout.
    static func pinnedPoint(_ document: PinnedDocument) throws -> Double {
        let root = try JSONParser.parse(document.bytes)
        guard case .array(let features)? = root.member("features")?.node.content,
            let checkout = features.first(where: {
                if case .string("Checkout")? = $0.member("name")?.node.content { return true }
                return false
            }),
            case .number(let point)? = checkout.member("test-variation-assignment")?.node.content
        else { throw CancellationError() }
        return point
    }

    static let ranges = VariationRanges(names: ["A", "B", "C"], biases: [50, 50, 0])

    @Test("A rule decides at the first fetch: the pinned point lies in its variation, and every client agrees")
    func firstFetch() async throws {
        let store = try await Self.store()
        let user = try await Self.usersInA(1, of: store)[0]
        let document = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction, attributes: Self.de)
        #expect(Self.ranges.variation(at: try Self.pinnedPoint(document)) == "B")
        #expect(document.assignments.first { $0.feature == "Checkout" }?.variation == "B")
        let flag = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: user), in: .acmeProduction)
        #expect(flag.variant == "B" && flag.reason == .targetingMatch && flag.rule == "de")
        let evaluation = try await store.assignments.evaluate(user, in: .acmeProduction).first {
            $0.feature == "Checkout"
        }
        #expect(evaluation?.reason == .rule && evaluation?.rule == "de" && evaluation?.isRecorded == true)
        let events = try await store.allAssignmentEvents(user: user, feature: "Checkout")
        #expect(events.map(\.reason) == [.first] && events[0].variation == "B")
        // Fetched again with the same attributes, nothing is left to write: a read.
        let read = try await store.assignments.readUserDocument(for: user, in: .acmeProduction, attributes: Self.de)
        #expect(read.isComplete(for: .app) && read.isComplete(for: .follower))
    }

    @Test("A user without matching attributes gets their point's group, and the point is theirs")
    func noMatch() async throws {
        let store = try await Self.store()
        let user = try await Self.usersInA(1, of: store)[0]
        let document = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction, attributes: Self.fr)
        let point = try Self.pinnedPoint(document)
        #expect(
            point
                == UserPoints(salt: try await store.storedFeatures().first { $0.feature.name == "Checkout" }!.salt)
                .point(for: user.rawValue))
        #expect(Self.ranges.variation(at: point) == "A")
    }

    @Test(
        "New attributes move a client that follows rules, with an attributes event; an app that keeps its point stays")
    func attributesChange() async throws {
        let store = try await Self.store()
        let users = try await Self.usersInA(2, of: store)
        let (follower, app) = (users[0], users[1])
        _ = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: follower, attributes: Self.fr), in: .acmeProduction)
        _ = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction, attributes: Self.fr)
        let moved = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: follower, attributes: Self.de), in: .acmeProduction)
        #expect(moved.variant == "B" && moved.rule == "de")
        #expect(try await store.allAssignmentEvents(user: follower).first?.reason == .attributes)
        let kept = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: app, attributes: Self.de), in: .acmeProduction)
        #expect(kept.variant == "A" && kept.rule == nil)
        #expect(try await store.allAssignmentEvents(user: app).count == 1)
        // The app's new attributes are kept all the same, for plans.
        let stored = try await store.read { db in
            try db.userAttributes.attributes(of: app, in: db.environments.scope(of: .acmeProduction))
        }
        #expect(stored?.fingerprint == Self.de.fingerprint)
    }

    @Test(
        "A rule change is planned from recorded users and their attributes, apps counted apart; applying moves the others"
    )
    func plannedRuleChange() async throws {
        let store = try await TargetingStoreTests.store()
        let users = try await Self.usersInA(4, of: store)
        for user in users.prefix(2) {
            _ = try await store.assignments.evaluateFlag(
                "Checkout", for: FlagContext(user: user, attributes: Self.de), in: .acmeProduction)
        }
        for user in users.suffix(2) {
            _ = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction, attributes: Self.de)
        }
        let rules = try TargetingStoreTests.rules(Self.germansGetB)
        let before = try await store.fingerprint()
        let plan = try await store.catalog.setRules(
            rules, ofFeature: "Checkout", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))
        #expect(try await store.fingerprint() == before)
        let checkout = try #require(plan.plans.first)
        #expect(checkout.moves.map { [$0.from, $0.to] } == [["A", "B"]] && checkout.movingUsers == 2)
        #expect(Set(checkout.moves[0].examples) == Set(users.prefix(2)))
        #expect(checkout.keptByApps.map(\.users) == [2] && checkout.usersWithAttributes == 4)
        let applied = try await store.catalog.setRules(
            rules, ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(applied.plans == plan.plans)
        for user in users.prefix(2) {
            let event = try await store.allAssignmentEvents(user: user).first
            #expect(event?.reason == .rules && event?.variation == "B" && event?.revision == applied.revision)
        }
        for user in users.suffix(2) {
            #expect(try await store.allAssignmentEvents(user: user).count == 1)
            let read = try await store.assignments.readUserDocument(for: user, in: .acmeProduction)
            #expect(read.evaluation(of: read.plan.features[0]).variation == "A")
        }
        let disagreeing = try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments)
        #expect(disagreeing.isEmpty)
        // Removing the rule moves the followers back by their point, as planned.
        let removed = try await store.catalog.setRules(
            [], ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(removed.plans.first?.moves.map { [$0.from, $0.to, String($0.users)] } == [["B", "A", "2"]])
    }

    @Test(
        "An app a rule placed answers with the point it holds; once the rule is gone the reason is its point, naming the rule that placed it"
    )
    func pinnedAppAfterItsRuleIsGone() async throws {
        let store = try await Self.store()
        let app = try await Self.usersInA(1, of: store)[0]
        let document = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction, attributes: Self.de)
        let appPoint = try Self.pinnedPoint(document)
        let own = UserPoints(salt: try await store.storedFeatures().first { $0.feature.name == "Checkout" }!.salt)
            .point(for: app.rawValue)
        #expect(appPoint != own)
        let ruled = try #require(
            try await store.assignments.evaluate(app, in: .acmeProduction).first { $0.feature == "Checkout" })
        #expect(ruled.reason == .rule && ruled.rule == "de" && ruled.point == appPoint)
        _ = try await store.catalog.setRules([], ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        let evaluation = try #require(
            try await store.assignments.evaluate(app, in: .acmeProduction).first { $0.feature == "Checkout" })
        #expect(evaluation.variation == "B" && evaluation.reason == .bucket && evaluation.rule == nil)
        #expect(evaluation.firstRule == "de" && evaluation.point == appPoint)
        let flag = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: app), in: .acmeProduction)
        #expect(flag.variant == "B" && flag.reason == .split && flag.rule == nil && flag.firstRule == "de")
        var json: [UInt8] = []
        flag.writeJSON(into: &json)
        #expect(String(decoding: json, as: UTF8.self).contains(#""firstRule":"de""#))
    }

    @Test(
        "An app placed outside a rule is told where a new user like it would land, and since which revision it keeps its place"
    )
    func pinnedAppOutsideARule() async throws {
        let store = try await Self.store()
        let app = try await Self.usersInA(1, of: store)[0]
        _ = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction, attributes: Self.fr)
        let placedAt = try await store.catalog.revision(of: .acmeProduction).number
        let evaluation = try #require(
            try await store.assignments.evaluate(app, in: .acmeProduction, attributes: Self.de).first {
                $0.feature == "Checkout"
            })
        #expect(evaluation.variation == "A" && evaluation.reason == .bucket && evaluation.pinnedRevision == placedAt)
        #expect(evaluation.newUserPlacement == Evaluation.NewUserPlacement(variation: "B", rule: "de"))
        let json = JSONWriter(style: .compact).string(of: evaluation.jsonValue)
        #expect(json.contains(#""newUserPlacement":{"variation":"B","rule":"de"}"#))
        // With attributes the rules place where the app already is, there is nothing to say.
        let french = try #require(
            try await store.assignments.evaluate(app, in: .acmeProduction, attributes: Self.fr).first {
                $0.feature == "Checkout"
            })
        #expect(french.newUserPlacement == nil && french.pinnedRevision == placedAt)
    }

    @Test("A bias plan says how many of its movers a rule had placed")
    func biasPlanCountsRulePlacedMovers() async throws {
        let store = try await Self.store()
        let users = try await Self.usersInA(2, of: store)
        for user in users {
            _ = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction, attributes: Self.de)
        }
        // The apps hold 75, in B (50–100); B shrinks to 80–100: both leave the rule's group.
        let plan = try await store.catalog.setBiases(
            [80, 20, 0], of: "Checkout", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))
        let checkout = try #require(plan.plans.first)
        #expect(checkout.movingUsers == 2 && checkout.movingPlacedByRules == 2)
        let applied = try await store.catalog.setBiases(
            [80, 20, 0], of: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(applied.plans.first?.movingPlacedByRules == 2)
    }

    @Test("A plan counts the apps its own change would place elsewhere, not those an earlier change already did")
    func keptAppsCountedOnce() async throws {
        let store = try await TargetingStoreTests.store()
        let apps = try await Self.usersInA(3, of: store)
        for app in apps {
            _ = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction, attributes: Self.de)
        }
        let first = try await store.catalog.setRules(
            try TargetingStoreTests.rules(Self.germansGetB), ofFeature: "Checkout", in: .acmeProduction,
            options: Self.options)
        #expect(first.plans.first?.keptByApps.map(\.users) == [3])
        // A second rule for French users changes nothing for the German apps: none counted again.
        let second = try await store.catalog.setRules(
            try TargetingStoreTests.rules(
                #"""
                {"rules": [{"id": "de", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "B"}},
                           {"id": "fr", "clauses": [{"attribute": "country", "operator": "equals", "values": ["FR"]}], "serve": {"variation": "A"}}]}
                """#), ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(second.plans.first?.keptByApps.isEmpty == true)
        // Clearing the rules: the apps' decision goes back to their own point, A, where they are.
        let cleared = try await store.catalog.setRules(
            [], ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(cleared.plans.first?.keptByApps.isEmpty == true)
    }

    @Test("evaluate shows a development flag as a release app does, and a disabled test's record as recorded")
    func developmentFlagAndDisabledTest() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "Debug menu", "enabled": true, "development": true}, {"name": "T", "test-variations": ["A", "B"]}]}"#
        )
        let user = UserID(rawValue: "u-1")
        _ = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
        _ = try await store.catalog.setEnabled(false, feature: "T", in: .acmeProduction, options: Self.options)
        let evaluations = try await store.assignments.evaluate(user, in: .acmeProduction)
        let debug = try #require(evaluations.first { $0.feature == "Debug menu" })
        #expect(debug.variation == "Disabled" && debug.reason == .disabled)
        let test = try #require(evaluations.first { $0.feature == "T" })
        #expect(test.variation == "Disabled" && test.isRecorded)
        let release = try await store.assignments.evaluateFlag(
            "Debug menu", for: FlagContext(user: user), in: .acmeProduction)
        #expect(release.value == .bool(false))
        let debugBuild = try await store.assignments.evaluateFlag(
            "Debug menu", for: FlagContext(user: user, isDevelopment: true), in: .acmeProduction)
        #expect(debugBuild.value == .bool(true))
    }

    @Test("A bias change leaves rule users of followers alone and moves an app by the point it was given")
    func biasesBesideRules() async throws {
        let store = try await Self.store()
        let users = try await Self.usersInA(2, of: store)
        let (follower, app) = (users[0], users[1])
        _ = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: follower, attributes: Self.de), in: .acmeProduction)
        let document = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction, attributes: Self.de)
        let appPoint = try Self.pinnedPoint(document)
        #expect(appPoint == 75)
        // B shrinks to 70–100 (A takes 70 %): the app's point 75 stays in B; then to 80–100: it leaves.
        _ = try await store.catalog.setBiases([70, 30, 0], of: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(try await store.allAssignmentEvents(user: app).count == 1)
        _ = try await store.catalog.setBiases([80, 20, 0], of: "Checkout", in: .acmeProduction, options: Self.options)
        let moved = try await store.allAssignmentEvents(user: app).first
        #expect(moved?.reason == .bias && moved?.previousVariation == "B" && moved?.variation == "A")
        let again = try await store.assignments.pinnedDocument(for: app, in: .acmeProduction)
        #expect(try Self.pinnedPoint(again) == appPoint)
        #expect(try await store.allAssignmentEvents(user: follower).count == 1)
        let flag = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: follower), in: .acmeProduction)
        #expect(flag.variant == "B" && flag.rule == "de")
        let disagreeing = try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments)
        #expect(disagreeing.isEmpty)
    }

    @Test("Disabling a test puts rule users in Disabled and enabling it gives them back to their rule")
    func disableAndEnable() async throws {
        let store = try await Self.store()
        let user = try await Self.usersInA(1, of: store)[0]
        _ = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: user, attributes: Self.de), in: .acmeProduction)
        _ = try await store.catalog.setEnabled(false, feature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(try await store.allAssignmentEvents(user: user).first?.variation == "Disabled")
        _ = try await store.catalog.setEnabled(true, feature: "Checkout", in: .acmeProduction, options: Self.options)
        let event = try await store.allAssignmentEvents(user: user).first
        #expect(event?.reason == .enable && event?.variation == "B")
    }

    @Test("assign applies rules with the users' attributes, one user or a hundred")
    func assignFollowsRules() async throws {
        let store = try await Self.store()
        let users = try await Self.usersInA(100, of: store)
        #expect(users.count > 64)
        // The last one is known to be German before it is assigned.
        _ = try await store.assignments.evaluateFlag(
            "Checkout", for: FlagContext(user: users[0], attributes: Self.fr), in: .acmeProduction)
        try await store.write { db in
            try db.userAttributes.keep(
                Self.de, of: users.last!, in: try db.environments.scope(of: .acmeProduction), hour: 0)
        }
        _ = try await store.assignments.assign(users, to: "Checkout", in: .acmeProduction)
        let recorded = try await store.recordedAssignments(of: "Checkout")
        #expect(recorded[users.last!]?.variation == "B")
        #expect(users.dropLast().allSatisfy { recorded[$0]?.variation == "A" })
        _ = try await store.assignments.assign([users[1]], to: "Checkout", in: .acmeProduction)
        #expect(try await store.recordedAssignments(of: "Checkout")[users[1]]?.variation == "A")
    }

    @Test("An import that takes away a variation a rule serves is refused, naming the rule")
    func importRemovingServedVariation() async throws {
        let store = try await Self.store()
        let before = try await store.fingerprint()
        await #expect(throws: TargetingError.self) {
            try await store.importText(
                #"{"features": [{"name": "Checkout", "test-variations": ["A", "C"], "test-biases": [50, 50]}]}"#)
        }
        #expect(try await store.fingerprint() == before)
    }
}

@Suite("A config's own rules")
struct ConfigRuleTests {
    static let configs = #"""
        {"configs": [{"name": "title", "type": "string", "default": "Welcome", "follows": "Checkout",
                      "values": {"A": "title-A", "B": "title-B"},
                      "rules": [{"id": "de", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}],
                                 "serve": {"value": "Hallo"}},
                                {"id": "staff", "clauses": [{"operator": "inSegment", "values": ["staff"]}],
                                 "serve": {"value": "Hi team"}}]},
                     {"name": "ratio", "type": "double", "default": 1.5,
                      "rules": [{"id": "half", "serve": {"value": 2.0}}]}]}
        """#

    static func store() async throws -> FeatureStore {
        let store = try await TargetingStoreTests.store()
        _ = try await store.catalog.setSegment(
            TargetingStoreTests.staff, in: .acmeProduction, options: TargetingEvaluationTests.options)
        _ = try await store.catalog.importConfigs(
            try ConfigsDecoder.decode(Array(configs.utf8)).0, in: .acmeProduction,
            options: TargetingEvaluationTests.options)
        return store
    }

    @Test("Its rules decide first, then the feature it follows, then the default; OFREP names the rule")
    func order() async throws {
        let store = try await Self.store()
        let german = try await store.assignments.userConfigs(
            for: UserID(rawValue: "user-9"), in: .acmeProduction, attributes: TargetingEvaluationTests.de)
        #expect(german.entries.first { $0.key == "title" }?.value == .string("Hallo"))
        let staff = try await store.assignments.userConfigs(for: UserID(rawValue: "u1"), in: .acmeProduction)
        #expect(staff.entries.first { $0.key == "title" }?.value == .string("Hi team"))
        let other = try await store.assignments.userConfigs(
            for: UserID(rawValue: "user-9"), in: .acmeProduction, attributes: TargetingEvaluationTests.fr)
        let variation = try await store.assignments.evaluate(UserID(rawValue: "user-9"), in: .acmeProduction)
            .first { $0.feature == "Checkout" }!.variation
        #expect(other.entries.first { $0.key == "title" }?.value == .string("title-\(variation)"))
        let flag = try await store.assignments.evaluateFlag(
            "title", for: FlagContext(user: UserID(rawValue: "user-9"), attributes: TargetingEvaluationTests.de),
            in: .acmeProduction)
        #expect(flag.value == .string("Hallo") && flag.reason == .targetingMatch && flag.rule == "de")
        // A rule that matches everyone still needs a user: the shared dictionary gives the default.
        let shared = try await store.catalog.sharedConfigs(in: .acmeProduction)
        #expect(shared.entries.first { $0.key == "ratio" }?.value == .double(1.5))
        #expect(other.entries.first { $0.key == "ratio" }?.value == .double(2.0))
    }

    @Test("The configs file keeps rules, a double's point included; a missing segment is refused, and a used one kept")
    func keptAndChecked() async throws {
        let store = try await Self.store()
        let exported = try await store.catalog.configs(in: .acmeProduction).document
        #expect(String(decoding: exported.rendered(), as: UTF8.self).contains(#""serve":{"value":2.0}"#))
        #expect(try ConfigsDecoder.decode(exported.rendered()).0 == exported)
        let before = try await store.fingerprint()
        let ghost = try ConfigsDecoder.decodeConfig(
            Array(
                #"{"type": "bool", "default": false, "rules": [{"id": "g", "clauses": [{"operator": "inSegment", "values": ["ghost"]}], "serve": {"value": true}}]}"#
                    .utf8),
            name: "ghostly"
        ).0
        await #expect(throws: ConfigError.self) {
            try await store.catalog.setConfig(ghost, in: .acmeProduction, options: TargetingEvaluationTests.options)
        }
        await #expect(throws: TargetingError.self) {
            try await store.catalog.deleteSegment(
                named: "staff", in: .acmeProduction, options: TargetingEvaluationTests.options)
        }
        #expect(try await store.fingerprint() == before)
    }
}
