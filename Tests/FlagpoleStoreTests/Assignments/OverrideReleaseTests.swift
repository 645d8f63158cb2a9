import FlagpoleCore
import Testing

@testable import FlagpoleStore

/// An override holds a user in a variation only while the app could land there: a revision that
/// disables the test, makes it a plain flag or leaves the variation without points releases it.
@Suite("Overrides through revisions")
struct OverrideReleaseTests {
    static let mvt = #"{"features": [{"name": "m", "test-variations": ["A", "B", "C"], "test-biases": [40, 30, 30]}]}"#
    static let onOff =
        #"{"features": [{"name": "o", "test-variations": ["Enabled", "Disabled"], "test-biases": [10, 90]}]}"#
    let options = EditOptions(actor: "test")

    /// A user whose point lies in A, forced into `variation`.
    func overriddenUser(
        _ store: FeatureStore, feature: String, into variation: String, pointBelow bound: Double
    ) async throws -> UserID {
        let salt = try await store.catalog.feature(feature, in: .acmeProduction).salt
        let user = UserPoints(salt: salt).firstUser { $0 < bound }
        _ = try await store.assignments.setOverride(feature, user: user, variation: variation, in: .acmeProduction)
        return user
    }

    @Test("A bias change that keeps the variation's points keeps the override; one that empties it releases the user")
    func biasChanges() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.mvt)
        let user = try await overriddenUser(store, feature: "m", into: "C", pointBelow: 40)

        _ = try await store.catalog.setBiases([50, 20, 30], of: "m", in: .acmeProduction, options: options)
        #expect(try await store.recordedAssignments(of: "m")[user]?.isOverride == true)

        _ = try await store.catalog.setBiases([50, 50, 0], of: "m", in: .acmeProduction, options: options)
        let released = try #require(try await store.recordedAssignments(of: "m")[user])
        #expect(!released.isOverride)
        #expect(released.variation == "A")
        let latest = try await store.allAssignmentEvents(user: user).first
        #expect(latest?.reason == .overrideCleared)
        #expect(latest?.previousVariation == "C")
        #expect(latest?.revision == 3)
    }

    @Test("Disabling a test releases its overrides into Disabled; enabling puts the user back by their point")
    func disable() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.mvt)
        let user = try await overriddenUser(store, feature: "m", into: "B", pointBelow: 40)

        _ = try await store.catalog.setEnabled(false, feature: "m", in: .acmeProduction, options: options)
        #expect(
            try await store.recordedAssignments(of: "m")[user].map { ($0.variation, $0.isOverride) } ?? ("", true) == (
                "Disabled", false
            ))
        let refusal = await #expect(throws: UserStateError.self) {
            _ = try await store.assignments.setOverride("m", user: user, variation: "B", in: .acmeProduction)
        }
        #expect(refusal?.description.contains("\"m\" is disabled") == true)

        _ = try await store.catalog.setEnabled(true, feature: "m", in: .acmeProduction, options: options)
        #expect(try await store.recordedAssignments(of: "m")[user]?.variation == "A")
        try await ReevaluationInvariantSoakTests.checkInvariant(store, step: 0)
    }

    @Test(
        "Rolling an on/off test out to a plain flag releases its overrides, with the reason variations for the others")
    func rolloutToAFlag() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.onOff)
        let users = UserID.numbered(200)
        _ = try await store.assignments.assign(users, to: "o", in: .acmeProduction)
        let user = try await overriddenUser(store, feature: "o", into: "Disabled", pointBelow: 10)

        _ = try await store.catalog.rollOut("o", to: nil, in: .acmeProduction, options: options)

        let recorded = try await store.recordedAssignments(of: "o")
        #expect(recorded.values.allSatisfy { $0.variation == "Enabled" && !$0.isOverride })
        #expect(try await store.allAssignmentEvents(user: user).first?.reason == .overrideCleared)
        await #expect(throws: CoreError.notATest(feature: "o", kind: .flag)) {
            _ = try await store.assignments.clearOverride("o", user: user, in: .acmeProduction)
        }
    }

    @Test("An import that turns an on/off test into a plain flag records its movers as a change of variations")
    func importToAFlag() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.onOff)
        _ = try await store.assignments.assign(UserID.numbered(200), to: "o", in: .acmeProduction)

        try await store.importText(#"{"features": [{"name": "o", "enabled": true}]}"#)

        let moves = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(!moves.isEmpty)
        #expect(moves.allSatisfy { $0.reason == .variations && $0.variation == "Enabled" })
    }

    @Test("Enabling a test whose enabled key is absent changes nothing")
    func enableDefault() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.mvt)
        let outcome = try await store.catalog.setEnabled(true, feature: "m", in: .acmeProduction, options: options)
        #expect(outcome.isUnchanged)
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)
    }

    @Test("Counts of an archived test are still readable")
    func archivedCounts() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.mvt)
        _ = try await store.assignments.assign(UserID.numbered(100), to: "m", in: .acmeProduction)
        try await store.importText(#"{"features": []}"#)

        let counts = try await store.assignments.assignmentCounts(of: "m", in: .acmeProduction)
        #expect(counts.map(\.variation) == ["A", "B", "C"])
        #expect(counts.reduce(0) { $0 + $1.users } == 100)
    }
}
