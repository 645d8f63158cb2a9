import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Overrides and unlocks")
struct OverrideAndUnlockTests {
    static let halfHalf =
        #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [50, 50]}, {"name": "plain", "enabled": true}]}"#

    @Test(
        "An override holds a user in a variation through a bias change, pins their point there, and clears back to their point's group"
    )
    func overrideLifecycle() async throws {
        // Given a QA user whose point is in A, and another user in B, both recorded
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.halfHalf)
        let points = UserPoints(salt: try await store.catalog.feature("t", in: .acmeProduction).salt)
        let qa = points.firstUser(prefix: "qa") { $0 < 50 }
        let other = points.firstUser(prefix: "other") { $0 >= 50 && $0 < 90 }
        _ = try await store.assignments.assign([qa, other], to: "t", in: .acmeProduction)

        // When QA forces the user into B (named in another case)
        let forced = try await store.assignments.setOverride("t", user: qa, variation: "b", in: .acmeProduction)

        // Then the user is recorded in B under an override, with an override event
        #expect(forced.variation == "B" && forced.isOverride && forced.point == points.point(for: qa.rawValue))
        let overrideEvent = try #require(try await store.allAssignmentEvents(user: qa).first)
        #expect(overrideEvent.reason == .override)
        #expect(overrideEvent.previousVariation == "A" && overrideEvent.variation == "B")
        #expect(try await store.recordedAssignments(of: "t")[qa]?.isOverride == true)

        // When the biases change so that B's range no longer holds the user's point
        let change = try await store.catalog.setBiases(
            [90, 10], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then the override stays, and only the other user moves
        #expect(change.plans.first?.movingUsers == 1)
        #expect(change.plans.first?.recordedUsers == 2)
        let afterChange = try await store.recordedAssignments(of: "t")
        #expect(afterChange[qa]?.variation == "B" && afterChange[qa]?.isOverride == true)
        #expect(afterChange[other]?.variation == "A")
        #expect(try await store.allAssignmentEvents(user: qa).count == 2)

        // And the pinned document puts the user's point inside B's range, [90, 100)
        let pinned = try await store.assignments.pinnedDocument(for: qa, in: .acmeProduction)
        let object = try #require(try JSONParser.parse(pinned.bytes).value.featuresByName["t"])
        guard case .number(let pinnedPoint)? = object["test-variation-assignment"] else {
            Issue.record("no test-variation-assignment in \(object)")
            return
        }
        #expect(pinnedPoint >= 90 && pinnedPoint < 100)
        #expect(try await store.catalog.feature("t", in: .acmeProduction).feature.variation(at: pinnedPoint) == "B")
        #expect(pinned.assignments.first { $0.feature == "t" }?.variation == "B")

        // When the override is cleared
        let cleared = try await store.assignments.clearOverride("t", user: qa, in: .acmeProduction)

        // Then the user goes back to their point's group with an override-cleared event
        #expect(cleared.variation == "A" && !cleared.isOverride)
        let clearedEvent = try #require(try await store.allAssignmentEvents(user: qa).first)
        #expect(clearedEvent.reason == .overrideCleared)
        #expect(clearedEvent.previousVariation == "B" && clearedEvent.variation == "A")
        let recorded = try await store.recordedAssignments(of: "t")[qa]
        #expect(recorded?.variation == "A" && recorded?.isOverride == false)

        // And clearing again is refused, writing nothing
        let count = try await store.allAssignmentEvents().count
        let error = await #expect(throws: UserStateError.self) {
            try await store.assignments.clearOverride("t", user: qa, in: .acmeProduction)
        }
        guard case .noOverride(feature: "t", user: qa)? = error else {
            Issue.record("expected noOverride, got \(String(describing: error))")
            return
        }
        #expect(try await store.allAssignmentEvents().count == count)
    }

    @Test("Overriding a user never assigned records them directly under the override")
    func overrideOfANewUser() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.halfHalf)
        let points = UserPoints(salt: try await store.catalog.feature("t", in: .acmeProduction).salt)
        let qa = points.firstUser(prefix: "qa") { $0 >= 50 }

        let forced = try await store.assignments.setOverride("t", user: qa, variation: "A", in: .acmeProduction)

        #expect(forced.variation == "A" && forced.isOverride)
        let events = try await store.allAssignmentEvents()
        #expect(events.count == 1)
        #expect(
            events.first?.reason == .override && events.first?.previousVariation == nil
                && events.first?.variation == "A")
        let recorded = try await store.recordedAssignments(of: "t")[qa]
        #expect(
            recorded?.variation == "A" && recorded?.isOverride == true
                && recorded?.point == points.point(for: qa.rawValue))

        // A later assignment of the same user keeps the override.
        let summary = try await store.assignments.assign([qa], to: "t", in: .acmeProduction)
        #expect(summary == AssignmentSummary(recorded: 0, known: 1))
        #expect(try await store.recordedAssignments(of: "t")[qa]?.variation == "A")
    }

    @Test("Bad overrides are refused and write nothing")
    func badOverridesAreRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"""
            {"features": [
                {"name": "t", "test-variations": ["A", "B"], "test-biases": [100, 0]},
                {"name": "plain", "enabled": true}
            ]}
            """#)
        let user = UserID(rawValue: "qa")
        _ = try await store.assignments.assign([user], to: "t", in: .acmeProduction)
        let events = try await store.allAssignmentEvents()

        // A variation that owns no points
        let unreachable = await #expect(throws: UserStateError.self) {
            try await store.assignments.setOverride("t", user: user, variation: "B", in: .acmeProduction)
        }
        guard case .unreachableVariation(feature: "t", variation: "B")? = unreachable else {
            Issue.record("expected unreachableVariation, got \(String(describing: unreachable))")
            return
        }
        // A variation the test does not have
        await #expect(throws: CoreError.unknownVariation(feature: "t", variation: "C", variations: ["A", "B"])) {
            try await store.assignments.setOverride("t", user: user, variation: "C", in: .acmeProduction)
        }
        // A plain flag
        await #expect(throws: CoreError.notATest(feature: "plain", kind: .flag)) {
            try await store.assignments.setOverride("plain", user: user, variation: "Enabled", in: .acmeProduction)
        }
        // Clearing a user who has no override
        await #expect(throws: UserStateError.self) {
            try await store.assignments.clearOverride("t", user: user, in: .acmeProduction)
        }
        await #expect(throws: UserStateError.self) {
            try await store.assignments.clearOverride("t", user: UserID(rawValue: "stranger"), in: .acmeProduction)
        }

        #expect(try await store.allAssignmentEvents() == events)
        #expect(try await store.recordedAssignments(of: "t").values.map(\.variation) == ["A"])
    }

    static let unlockFile = #"""
        {"features": [
            {"name": "premium", "unlocked": false},
            {"name": "gift", "unlocked": true},
            {"name": "plain", "enabled": true},
            {"name": "t", "test-variations": ["A", "B"]}
        ]}
        """#

    @Test("Unlocking and locking are recorded with their source; repeating a state writes nothing")
    func unlocksAreRecorded() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.unlockFile)
        let alice = UserID(rawValue: "alice")
        let bob = UserID(rawValue: "bob")

        // When alice buys premium twice over, and gives back her gift
        #expect(
            try await store.assignments.setUnlocked(
                true, feature: "premium", user: alice, source: "purchase-42", actor: "shop", in: .acmeProduction))
        #expect(
            !(try await store.assignments.setUnlocked(
                true, feature: "premium", user: alice, source: "purchase-43", actor: "shop", in: .acmeProduction)))
        #expect(try await store.unlockEventCount() == 1)
        #expect(
            try await store.assignments.setUnlocked(
                false, feature: "gift", user: alice, source: "refund", actor: "support", in: .acmeProduction))
        #expect(
            try await store.assignments.setUnlocked(
                true, feature: "premium", user: bob, source: nil, actor: "shop", in: .acmeProduction))
        #expect(try await store.unlockEventCount() == 3)

        // Then the listings show each state with the source that set it
        let aliceUnlocks = try await store.assignments.unlocks(in: .acmeProduction, user: alice)
        #expect(aliceUnlocks.map(\.feature) == ["gift", "premium"])
        #expect(aliceUnlocks.map(\.isUnlocked) == [false, true])
        #expect(aliceUnlocks.map(\.source) == ["refund", "purchase-42"])
        let premium = try await store.assignments.unlocks(in: .acmeProduction, feature: "premium")
        #expect(premium.map(\.user) == [alice, bob])
        #expect(premium.allSatisfy { $0.isUnlocked })
        #expect(try await store.assignments.unlocks(in: .acmeProduction).count == 3)
        #expect(try await store.assignments.unlocks(in: .globexProduction).isEmpty)

        // When alice's premium is locked again
        #expect(
            try await store.assignments.setUnlocked(
                false, feature: "premium", user: alice, source: "chargeback", actor: "shop", in: .acmeProduction))
        #expect(try await store.unlockEventCount() == 4)
        #expect(
            try await store.assignments.unlocks(in: .acmeProduction, user: alice, feature: "premium").map(\.isUnlocked)
                == [false])

        // Then her history of premium lists both changes, newest first, with who made them
        let history = try await store.assignments.unlocks(
            in: .acmeProduction, user: alice, feature: "premium", history: true)
        #expect(history.map(\.isUnlocked) == [false, true])
        #expect(history.map(\.source) == ["chargeback", "purchase-42"])
        #expect(history.map(\.actor) == ["shop", "shop"])
    }

    @Test("The pinned document carries the user's unlock state; everyone else and the shared export get the default")
    func pinnedDocumentCarriesUnlocks() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.unlockFile)
        let alice = UserID(rawValue: "alice")
        try await store.assignments.setUnlocked(
            true, feature: "premium", user: alice, source: "purchase-42", actor: "shop", in: .acmeProduction)
        try await store.assignments.setUnlocked(
            false, feature: "gift", user: alice, source: "refund", actor: "support", in: .acmeProduction)

        let forAlice = try JSONParser.parse(
            try await store.assignments.pinnedDocument(for: alice, in: .acmeProduction).bytes
        ).value
            .featuresByName
        let forCarol = try JSONParser.parse(
            try await store.assignments.pinnedDocument(for: UserID(rawValue: "carol"), in: .acmeProduction).bytes
        ).value.featuresByName
        let shared = try JSONParser.parse(try await store.catalog.revision(of: .acmeProduction).document).value
            .featuresByName

        #expect(forAlice["premium"]?["unlocked"] == .bool(true))
        #expect(forAlice["gift"]?["unlocked"] == .bool(false))
        #expect(forCarol["premium"]?["unlocked"] == .bool(false))
        #expect(forCarol["gift"]?["unlocked"] == .bool(true))
        #expect(shared["premium"]?["unlocked"] == .bool(false))
        #expect(shared["gift"]?["unlocked"] == .bool(true))
        #expect(forAlice["plain"]?["unlocked"] == nil)
        #expect(forAlice["t"]?["unlocked"] == nil)
    }

    @Test("Only unlock flags can be unlocked", arguments: ["plain", "t"])
    func onlyUnlockFlagsUnlock(name: String) async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.unlockFile)

        let error = await #expect(throws: UserStateError.self) {
            try await store.assignments.setUnlocked(
                true, feature: name, user: UserID(rawValue: "alice"), source: nil, actor: "shop", in: .acmeProduction)
        }

        guard case .notAnUnlockFlag(let feature, _)? = error else {
            Issue.record("expected notAnUnlockFlag, got \(String(describing: error))")
            return
        }
        #expect(feature == name)
        #expect(try await store.unlockEventCount() == 0)
        #expect(try await store.assignments.unlocks(in: .acmeProduction).isEmpty)
    }
}
