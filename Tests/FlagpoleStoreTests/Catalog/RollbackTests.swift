import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Enable, roll out, roll back")
struct RollbackTests {
    @Test("Disabling moves every recorded user to Disabled; enabling moves each back to their point's group")
    func disableAndEnable() async throws {
        // Given 300 users recorded in an MVT
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B", "C"], "test-biases": [30, 30, 40]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(300), to: "t", in: .acmeProduction)
        let original = try await store.recordedAssignments(of: "t")

        // When it is disabled
        let off = try await store.catalog.setEnabled(
            false, feature: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then everyone is in Disabled, each with a disable event from their group
        #expect(off.isApplied && off.revision == 2)
        #expect(try await store.catalog.feature("t", in: .acmeProduction).feature.isEnabled == false)
        #expect(
            try await store.recordedAssignments(of: "t").values.allSatisfy {
                $0.variation == "Disabled" && $0.revision == 2
            })
        let disableEvents = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(disableEvents.count == 300)
        for event in disableEvents {
            #expect(event.reason == .disable)
            #expect(event.previousVariation == original[event.user]?.variation)
            #expect(event.variation == "Disabled")
        }

        // When it is enabled again
        let on = try await store.catalog.setEnabled(
            true, feature: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then everyone is back in the group of their point, with an enable event
        #expect(on.isApplied && on.revision == 3)
        let back = try await store.recordedAssignments(of: "t")
        #expect(back.mapValues(\.variation) == original.mapValues(\.variation))
        let enableEvents = try await store.allAssignmentEvents().filter { $0.revision == 3 }
        #expect(enableEvents.count == 300)
        for event in enableEvents {
            #expect(event.reason == .enable)
            #expect(event.previousVariation == "Disabled")
            #expect(event.variation == original[event.user]?.variation)
        }

        // And enabling what is enabled writes nothing
        let again = try await store.catalog.setEnabled(
            true, feature: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        #expect(!again.isApplied && again.revision == 3)
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 3)
        #expect(try await store.allAssignmentEvents().count == 900)
    }

    @Test("Rolling out an on/off A/B test makes it a plain flag and puts everyone recorded in Enabled")
    func rollOutOnOffTest() async throws {
        // Given 500 users recorded in an on/off A/B test
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "dark", "test-variations": ["Enabled", "Disabled"], "test-biases": [30, 70]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(500), to: "dark", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "dark")
        let disabled = Set(before.values.filter { $0.variation == "Disabled" }.map(\.user))
        #expect(!disabled.isEmpty)

        // When it is rolled out
        let outcome = try await store.catalog.rollOut(
            "dark", to: nil, in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then it is a plain flag enabled for everyone, and the Disabled users moved with rollout events
        #expect(outcome.isApplied && outcome.revision == 2)
        let feature = try await store.catalog.feature("dark", in: .acmeProduction).feature
        #expect(feature.kind == .flag && feature.isEnabled)
        #expect(feature.testVariations == nil && feature.testBiases == nil)
        #expect(try await store.catalog.revisions(of: .acmeProduction).first?.kind == .rollout)
        #expect(try await store.recordedAssignments(of: "dark").values.allSatisfy { $0.variation == "Enabled" })
        #expect(
            try await store.assignments.assignmentCounts(of: "dark", in: .acmeProduction) == [
                VariationCount(variation: "Enabled", users: 500), VariationCount(variation: "Disabled", users: 0),
            ])
        let events = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(Set(events.map(\.user)) == disabled)
        #expect(events.count == disabled.count)
        #expect(
            events.allSatisfy {
                $0.reason == .rollout && $0.previousVariation == "Disabled" && $0.variation == "Enabled"
            })

        // And it is no longer a test
        await #expect(throws: CoreError.notATest(feature: "dark", kind: .flag)) {
            try await store.assignments.assign([UserID(rawValue: "late")], to: "dark", in: .acmeProduction)
        }
        let pinned = try JSONParser.parse(
            try await store.assignments.pinnedDocument(for: UserID(rawValue: "late"), in: .acmeProduction).bytes
        ).value
        #expect(pinned.featuresByName["dark"]?[Feature.assignmentKey] == nil)
    }

    @Test("Rolling out an MVT keeps its variations and gives the winner 100")
    func rollOutMVT() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "m", "test-variations": ["A", "B", "C"]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(300), to: "m", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "m")

        let outcome = try await store.catalog.rollOut(
            "m", to: "c", in: .acmeProduction, options: EditOptions(actor: "test"))

        #expect(outcome.isApplied)
        let feature = try await store.catalog.feature("m", in: .acmeProduction).feature
        #expect(feature.kind == .mvtTest)
        #expect(feature.testVariations == ["A", "B", "C"])
        #expect(feature.testBiases == [0, 0, 100])
        #expect(feature.effectiveBiases == [0, 0, 100])
        #expect(try await store.recordedAssignments(of: "m").values.allSatisfy { $0.variation == "C" })
        let events = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(events.count == before.values.filter { $0.variation != "C" }.count)
        #expect(events.allSatisfy { $0.reason == .rollout && $0.variation == "C" })
    }

    @Test("A rollout that can't be done is refused and writes nothing")
    func badRolloutsAreRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "m", "test-variations": ["A", "B", "C"]}, {"name": "plain", "enabled": true}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(30), to: "m", in: .acmeProduction)
        let fingerprint = try await store.fingerprint()

        await #expect(throws: CoreError.winnerRequired(feature: "m", variations: ["A", "B", "C"])) {
            try await store.catalog.rollOut("m", to: nil, in: .acmeProduction, options: EditOptions(actor: "test"))
        }
        await #expect(throws: CoreError.unknownVariation(feature: "m", variation: "D", variations: ["A", "B", "C"])) {
            try await store.catalog.rollOut("m", to: "D", in: .acmeProduction, options: EditOptions(actor: "test"))
        }
        await #expect(throws: CoreError.notATest(feature: "plain", kind: .flag)) {
            try await store.catalog.rollOut("plain", to: nil, in: .acmeProduction, options: EditOptions(actor: "test"))
        }

        #expect(try await store.fingerprint() == fingerprint)
        #expect(try await store.allAssignmentEvents().count == 30)
    }

    @Test("Rolling back to revision 1 restores its bytes as a new revision and moves users back with rollback events")
    func rollBack() async throws {
        // Given users recorded on [10, 90], then biases changed to [60, 40]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"""
            {"features": [
                {"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]},
                {"name": "plain", "enabled": true}
            ]}
            """#)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "t", in: .acmeProduction)
        let original = try await store.recordedAssignments(of: "t")
        _ = try await store.catalog.setBiases(
            [60, 40], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        let movers = Set(original.values.filter { $0.point >= 10 && $0.point < 60 }.map(\.user))
        #expect(!movers.isEmpty)

        // A dry run writes nothing
        let eventCount = try await store.allAssignmentEvents().count
        let dryRun = try await store.catalog.rollBack(
            .acmeProduction, to: 1, options: EditOptions(isDryRun: true, actor: "test"))
        #expect(!dryRun.isApplied)
        #expect(dryRun.plans.first?.movingUsers == movers.count)
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 2)
        #expect(try await store.allAssignmentEvents().count == eventCount)

        // When rolled back to revision 1
        let outcome = try await store.catalog.rollBack(.acmeProduction, to: 1, options: EditOptions(actor: "test"))

        // Then revision 3 has revision 1's bytes
        #expect(outcome.isApplied && outcome.revision == 3)
        #expect(
            try await store.catalog.revision(3, of: .acmeProduction).document
                == (try await store.catalog.revision(1, of: .acmeProduction).document))
        #expect(try await store.catalog.revision(of: .acmeProduction).number == 3)
        #expect(try await store.catalog.revisions(of: .acmeProduction).first?.kind == .rollback)

        // And the users moved by the bias change are back, each with one rollback event
        let after = try await store.recordedAssignments(of: "t")
        #expect(after.mapValues(\.variation) == original.mapValues(\.variation))
        let events = try await store.allAssignmentEvents().filter { $0.revision == 3 }
        #expect(Set(events.map(\.user)) == movers)
        #expect(events.count == movers.count)
        #expect(events.allSatisfy { $0.reason == .rollback && $0.previousVariation == "A" && $0.variation == "B" })

        // And the diffs name the changed field
        let forward = try await store.catalog.diff(.acmeProduction, from: 1, to: 2)
        #expect(forward.changes.map { "\($0.feature ?? "-").\($0.field ?? "-")" } == ["t.test-biases"])
        #expect(forward.changes.first?.kind == .changed)
        #expect(forward.changes.first?.before == .array([.number(10), .number(90)]))
        #expect(forward.changes.first?.after == .array([.number(60), .number(40)]))
        #expect(forward.changedFeatures == ["t"])
        #expect(try await store.catalog.diff(.acmeProduction, from: 1, to: 3).isEmpty)
        #expect(try await store.catalog.diff(.acmeProduction, from: 2, to: 3).changes.map(\.field) == ["test-biases"])
    }

    @Test("Rolling back a rollout makes the flag a test again and puts users back in their groups")
    func rollBackARollout() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "dark", "test-variations": ["Enabled", "Disabled"], "test-biases": [30, 70]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(300), to: "dark", in: .acmeProduction)
        let original = try await store.recordedAssignments(of: "dark")
        _ = try await store.catalog.rollOut("dark", to: nil, in: .acmeProduction, options: EditOptions(actor: "test"))

        let outcome = try await store.catalog.rollBack(.acmeProduction, to: 1, options: EditOptions(actor: "test"))

        #expect(outcome.revision == 3)
        #expect(try await store.catalog.feature("dark", in: .acmeProduction).feature.kind == .onOffABTest)
        #expect(
            try await store.recordedAssignments(of: "dark").mapValues(\.variation) == original.mapValues(\.variation))
        let events = try await store.allAssignmentEvents().filter { $0.revision == 3 }
        #expect(events.count == original.values.filter { $0.variation == "Disabled" }.count)
        #expect(
            events.allSatisfy {
                $0.reason == .rollback && $0.previousVariation == "Enabled" && $0.variation == "Disabled"
            })
    }

    @Test("Rolling back to a revision that does not exist is refused")
    func rollBackToMissingRevision() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "t", "test-variations": ["A", "B"]}]}"#)
        let error = await #expect(throws: DocumentError.self) {
            try await store.catalog.rollBack(.acmeProduction, to: 7, options: EditOptions(actor: "test"))
        }
        guard case .revisionNotFound(_, number: 7, latest: 1)? = error else {
            Issue.record("expected revisionNotFound, got \(String(describing: error))")
            return
        }
        await #expect(throws: DocumentError.self) { try await store.catalog.diff(.acmeProduction, from: 1, to: 7) }
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)
    }

    @Test("Diff lists features added, removed and changed, field by field")
    func diffAcrossImports() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "a", "enabled": true}, {"name": "b", "description": "old"}]}"#)
        try await store.importText(
            #"{"features": [{"name": "b", "description": "new", "section": "s"}, {"name": "c"}]}"#)

        let diff = try await store.catalog.diff(.acmeProduction, from: 1, to: 2)

        #expect(diff.addedFeatures == ["c"])
        #expect(diff.removedFeatures == ["a"])
        #expect(diff.changedFeatures == ["b"])
        let fields = diff.changes.filter { $0.feature == "b" }.map { "\($0.field ?? "-"):\($0.kind.rawValue)" }
        #expect(Set(fields) == ["description:changed", "section:added"])
    }
}
