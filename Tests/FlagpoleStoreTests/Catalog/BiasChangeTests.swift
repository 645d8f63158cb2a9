import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Bias changes")
struct BiasChangeTests {
    static let tenNinety = #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]}]}"#

    @Test("Growing the first group 10 → 20: the plan moves only B → A, and apply does exactly that (on a file)")
    func growingTheFirstGroup() async throws {
        // Given 2 000 users recorded on [10, 90]
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(2_000), to: "t", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "t")
        let movers = Set(before.values.filter { $0.point >= 10 && $0.point < 20 }.map(\.user))
        #expect(!movers.isEmpty)
        #expect(movers.allSatisfy { before[$0]?.variation == "B" })
        let eventsBefore = try await store.allAssignmentEvents()

        // When the change is planned
        let dryRun = try await store.catalog.setBiases(
            [20, 80], of: "t", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))

        // Then the plan moves a tenth of all users from B to A, and nobody out of A; nothing is written
        #expect(!dryRun.isApplied)
        let plan = try #require(dryRun.plans.first)
        #expect(dryRun.plans.count == 1)
        #expect(plan.feature == "t")
        #expect(plan.moves.map { "\($0.from)→\($0.to)" } == ["B→A"])
        #expect(abs(plan.moves[0].share - 10) < 1e-9)
        #expect(plan.moves[0].recordedUsers == movers.count)
        #expect(plan.movingUsers == movers.count)
        #expect(plan.recordedUsers == 2_000)
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)
        #expect(try await store.allAssignmentEvents() == eventsBefore)
        #expect(try await store.recordedAssignments(of: "t") == before)

        // When it is applied
        let applied = try await store.catalog.setBiases(
            [20, 80], of: "t", in: .acmeProduction, options: EditOptions(message: "20 %", actor: "ops"))

        // Then a new revision holds it, and exactly the planned users moved, each with one bias event
        #expect(applied.isApplied)
        #expect(applied.revision == 2)
        #expect(applied.plans == dryRun.plans)
        let summary = try #require(try await store.catalog.revisions(of: .acmeProduction).first)
        #expect(summary.number == 2 && summary.kind == .bias && summary.actor == "ops" && summary.message == "20 %")
        #expect(try await store.catalog.feature("t", in: .acmeProduction).feature.testBiases == [20, 80])

        let after = try await store.recordedAssignments(of: "t")
        #expect(after.count == 2_000)
        for (user, assignment) in after {
            #expect(assignment.variation == (assignment.point < 20 ? "A" : "B"))
            #expect(assignment.point == before[user]?.point)
            #expect(assignment.revision == (movers.contains(user) ? 2 : 1))
        }
        let counts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        #expect(
            counts == [
                VariationCount(variation: "A", users: after.values.filter { $0.variation == "A" }.count),
                VariationCount(variation: "B", users: after.values.filter { $0.variation == "B" }.count),
            ])
        #expect(counts[0].users == before.values.filter { $0.variation == "A" }.count + movers.count)

        let newEvents = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(newEvents.count == movers.count)
        #expect(Set(newEvents.map(\.user)) == movers)
        for event in newEvents {
            #expect(event.reason == .bias)
            #expect(event.previousVariation == "B" && event.variation == "A")
            #expect(event.point == before[event.user]?.point)
        }
        #expect(try await store.allAssignmentEvents().count == eventsBefore.count + movers.count)
    }

    @Test(
        "Biases the app would ignore are refused and write nothing, unless forced",
        arguments: [
            ([50.0, 49.0], DiagnosticCode.biasSumShort),
            ([50.0, 25.0, 25.0], DiagnosticCode.biasCountMismatch),
            ([100.0], DiagnosticCode.biasCountMismatch),
        ])
    func ignoredBiasesAreRefused(biases: [Double], code: DiagnosticCode) async throws {
        // Given users recorded on [10, 90]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(500), to: "t", in: .acmeProduction)
        let fingerprint = try await store.fingerprint()
        let events = try await store.allAssignmentEvents()
        let recorded = try await store.recordedAssignments(of: "t")

        // When biases the app would replace by 50/50 are set
        let error = await #expect(throws: DocumentError.self) {
            _ = try await store.catalog.setBiases(
                biases, of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        }

        // Then they are refused with the reason, and nothing changed
        guard case .biasesIgnored(let feature, let diagnostics)? = error else {
            Issue.record("expected biasesIgnored, got \(String(describing: error))")
            return
        }
        #expect(feature == "t")
        #expect(diagnostics.map(\.code).contains(code))
        #expect(try await store.fingerprint() == fingerprint)
        #expect(try await store.allAssignmentEvents() == events)
        #expect(try await store.recordedAssignments(of: "t") == recorded)

        // And forced, they are stored as written and users follow the app's 50/50
        let forced = try await store.catalog.setBiases(
            biases, of: "t", in: .acmeProduction, options: EditOptions(isForced: true, actor: "test"))
        #expect(forced.isApplied && forced.revision == 2)
        let detail = try await store.catalog.feature("t", in: .acmeProduction)
        #expect(detail.feature.testBiases == biases)
        #expect(detail.feature.effectiveBiases == [50, 50])
        let after = try await store.recordedAssignments(of: "t")
        #expect(after.values.allSatisfy { $0.variation == ($0.point < 50 ? "A" : "B") })
        let moved = recorded.values.filter { $0.point >= 10 && $0.point < 50 }.count
        #expect(try await store.allAssignmentEvents().count == events.count + moved)
    }

    @Test(
        "An edit states a split: a count that differs, a sum short of 100 or one over 100, a value outside 0…100 is refused unless forced, naming the split the app would give",
        arguments: [
            ([60.0, 50, 10], "W202"), ([50.0, 30], "W200"), ([50.0, 30, 10], "W201"), ([150.0, -50, 0], "W203"),
        ])
    func biasesThatStateAnotherSplit(_ biases: [Double], _ code: String) async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "Search", "test-variations": ["Control", "Semantic", "Popularity"], "test-biases": [34, 33, 33]}]}"#
        )
        let before = try await store.fingerprint()
        await #expect {
            try await store.catalog.setBiases(
                biases, of: "Search", in: .acmeProduction, options: EditOptions(actor: "test"))
        } throws: { error in
            guard case DocumentError.biasesIgnored(_, let diagnostics) = error else { return false }
            // The message says what the app would do instead.
            return Set(diagnostics.map(\.code.rawValue)) == [code]
                && "\(error)".contains("would not apply the split") && "\(error)".contains("--force")
        }
        #expect(try await store.fingerprint() == before)
        let forced = try await store.catalog.setBiases(
            biases, of: "Search", in: .acmeProduction, options: EditOptions(isForced: true, actor: "test"))
        #expect(forced.isApplied)
        if code == "W202" {
            #expect(forced.warnings.contains { $0.code == .biasSumOver && $0.message.contains("Popularity\" 0") })
        }
    }

    @Test("Biases on a plain flag are refused, even forced: it has no groups")
    func biasesOnAPlainFlagAreRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "plain", "enabled": true}]}"#)
        let fingerprint = try await store.fingerprint()
        for isForced in [false, true] {
            await #expect(throws: CoreError.notATest(feature: "plain", kind: .flag)) {
                try await store.catalog.setBiases(
                    [50, 50], of: "plain", in: .acmeProduction, options: EditOptions(isForced: isForced, actor: "test"))
            }
        }
        #expect(try await store.fingerprint() == fingerprint)
    }

    @Test("A bias change while a test is disabled moves nobody; enabling it uses the new biases")
    func biasChangeWhileDisabled() async throws {
        // Given users recorded on [10, 90], then the test disabled
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(500), to: "t", in: .acmeProduction)
        _ = try await store.catalog.setEnabled(
            false, feature: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        let eventCount = try await store.allAssignmentEvents().count

        // When its biases change
        let change = try await store.catalog.setBiases(
            [50, 50], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then nobody moves: everyone stays in Disabled
        #expect(change.isApplied && change.plans.isEmpty)
        #expect(try await store.allAssignmentEvents().count == eventCount)
        #expect(try await store.recordedAssignments(of: "t").values.allSatisfy { $0.variation == "Disabled" })

        // When it is enabled, everyone lands by the new biases
        _ = try await store.catalog.setEnabled(
            true, feature: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        #expect(
            try await store.recordedAssignments(of: "t").values.allSatisfy {
                $0.variation == ($0.point < 50 ? "A" : "B")
            })
        #expect(try await store.allAssignmentEvents().filter { $0.reason == .enable }.count == 500)
    }

    @Test("Biases on an unknown feature are refused")
    func unknownFeatureIsRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        let error = await #expect(throws: DocumentError.self) {
            _ = try await store.catalog.setBiases(
                [20, 80], of: "nope", in: .acmeProduction, options: EditOptions(actor: "test"))
        }
        guard case .featureNotFound? = error else {
            Issue.record("expected featureNotFound, got \(String(describing: error))")
            return
        }
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)
    }

    @Test(
        "Shrinking the middle group of an MVT [33, 34, 33] → [33, 24, 43] moves users from the second group to the third only"
    )
    func middleGroupChange() async throws {
        // Given 1 000 users recorded on [33, 34, 33]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "m", "test-variations": ["A", "B", "C"], "test-biases": [33, 34, 33]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "m", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "m")
        let movers = Set(before.values.filter { $0.point >= 57 && $0.point < 67 }.map(\.user))
        #expect(!movers.isEmpty)

        // When the middle group gives 10 points to the last
        let outcome = try await store.catalog.setBiases(
            [33, 24, 43], of: "m", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then only B → C moves, as planned
        let plan = try #require(outcome.plans.first)
        #expect(plan.moves.map { "\($0.from)→\($0.to)" } == ["B→C"])
        #expect(abs(plan.movingShare - 10) < 1e-9)
        #expect(plan.moves[0].recordedUsers == movers.count)
        let events = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(Set(events.map(\.user)) == movers)
        #expect(events.count == movers.count)
        #expect(events.allSatisfy { $0.previousVariation == "B" && $0.variation == "C" && $0.reason == .bias })
    }

    @Test("Moving a middle group's boundaries [33, 34, 33] → [23, 34, 43] moves more than needed and warns W252")
    func middleGroupShiftWarns() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "m", "test-variations": ["A", "B", "C"], "test-biases": [33, 34, 33]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "m", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "m")

        let outcome = try await store.catalog.setBiases(
            [23, 34, 43], of: "m", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))

        #expect(outcome.warnings.map(\.code).contains(.needlessMoves))
        #expect(outcome.warnings.allSatisfy { $0.feature == "m" })
        let plan = try #require(outcome.plans.first)
        #expect(plan.moves.map { "\($0.from)→\($0.to)" } == ["A→B", "B→C"])
        #expect(abs(plan.movingShare - 20) < 1e-9)
        #expect(plan.moves[0].recordedUsers == before.values.filter { $0.point >= 23 && $0.point < 33 }.count)
        #expect(plan.moves[1].recordedUsers == before.values.filter { $0.point >= 57 && $0.point < 67 }.count)
    }

    @Test("An import that changes biases re-evaluates users; one that changes only a description does not")
    func importsReevaluate() async throws {
        // Given users recorded on [10, 90]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "t", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "t")
        let movers = before.values.filter { $0.point >= 10 && $0.point < 30 }.count
        #expect(movers > 0)

        // When a file with new biases is imported
        let biasImport = try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [30, 70]}]}"#)

        // Then the movers are re-evaluated with bias events under the import's revision
        #expect(biasImport.status == .applied(revision: 2))
        #expect(biasImport.reassigned == movers)
        let events = try await store.allAssignmentEvents().filter { $0.revision == 2 }
        #expect(events.count == movers)
        #expect(events.allSatisfy { $0.reason == .bias && $0.previousVariation == "B" && $0.variation == "A" })
        let eventCount = try await store.allAssignmentEvents().count

        // When a file that changes only the description is imported
        let descriptionImport = try await store.importText(
            #"{"features": [{"name": "t", "description": "checkout", "test-variations": ["A", "B"], "test-biases": [30, 70]}]}"#
        )

        // Then a revision is written, but nobody moves
        #expect(descriptionImport.status == .applied(revision: 3))
        #expect(descriptionImport.reassigned == 0)
        #expect(try await store.allAssignmentEvents().count == eventCount)
    }

    @Test("A description is set, trimmed and removed as revisions that move nobody; one too long is refused")
    func describe() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(100), to: "t", in: .acmeProduction)
        let options = EditOptions(actor: "test")
        let set = try await store.catalog.setDescription(
            "  The new checkout.\n", of: "t", in: .acmeProduction, options: options)
        #expect(set.isApplied && set.plans.allSatisfy { $0.movingUsers == 0 })
        #expect(try await store.catalog.feature("t", in: .acmeProduction).feature.description == "The new checkout.")
        let removed = try await store.catalog.setDescription(" ", of: "t", in: .acmeProduction, options: options)
        #expect(removed.revision == 3)
        #expect(try await store.catalog.feature("t", in: .acmeProduction).feature.description == nil)
        let tooLong = String(repeating: "é", count: Catalog.maximumDescriptionLength + 1)
        let refused = await #expect(throws: DocumentError.self) {
            try await store.catalog.setDescription(tooLong, of: "t", in: .acmeProduction, options: options)
        }
        #expect(refused?.code == "invalid_description")
        #expect(try await store.catalog.revision(of: .acmeProduction).number == 3)
    }

    @Test("Counts at a past time replay history: before a bias change they are the old distribution")
    func countsAtAPastTime() async throws {
        // Given users recorded an hour ago on [10, 90]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.tenNinety)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "t", in: .acmeProduction)
        let oldCounts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        try await store.backdateAssignmentEvents(by: 3_600)
        let halfAnHourAgo = Date().addingTimeInterval(-1_800)

        // When the biases change now
        _ = try await store.catalog.setBiases(
            [50, 50], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then counts now differ, and counts half an hour ago are the old ones
        let newCounts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        #expect(newCounts != oldCounts)
        #expect(newCounts.map(\.users).reduce(0, +) == 1_000)
        #expect(
            try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction, at: halfAnHourAgo) == oldCounts)
        #expect(try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction, at: Date()) == newCounts)
        #expect(
            try await store.assignments.assignmentCounts(
                of: "t", in: .acmeProduction, at: Date().addingTimeInterval(-7_200)
            ).map(
                \.users) == [0, 0])

        // And history by time range separates the two
        let recent = try await store.assignments.assignmentEvents(
            in: .acmeProduction, matching: AssignmentEventQuery(since: halfAnHourAgo, limit: 10_000))
        #expect(!recent.isEmpty)
        #expect(recent.allSatisfy { $0.reason == .bias })
        let old = try await store.assignments.assignmentEvents(
            in: .acmeProduction, matching: AssignmentEventQuery(until: halfAnHourAgo, limit: 10_000))
        #expect(old.count == 1_000)
        #expect(old.allSatisfy { $0.reason == .first })
    }
}
