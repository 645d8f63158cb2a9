import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Assignments")
struct AssignmentTests {
    static let twoTests = #"""
        {"features": [
            {"name": "kept", "test-variations": ["A", "B"], "test-biases": [30, 70]},
            {"name": "ignored", "test-variations": ["A", "B"], "test-biases": [80, 19]}
        ]}
        """#

    @Test("A user's point is the salted hash, and the variation the one the app's effective biases give")
    func pointsAndEffectiveBiases() async throws {
        // Given a test whose biases the app keeps, and one whose biases it replaces by 50/50
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.twoTests)
        let users = UserID.numbered(300)

        for (name, firstGroupEnd) in [("kept", 30.0), ("ignored", 50.0)] {
            let detail = try await store.catalog.feature(name, in: .acmeProduction)
            let points = UserPoints(salt: detail.salt)
            let reported = Collected<Assignment>()

            // When the users are assigned
            let summary = try await store.assignments.assign(users, to: name, in: .acmeProduction) {
                reported.append($0)
            }

            // Then each is recorded at the hash's point, in the group the effective biases give
            #expect(summary == AssignmentSummary(recorded: 300, known: 0))
            let recorded = try await store.recordedAssignments(of: name)
            #expect(recorded.count == 300)
            for user in users {
                let assignment = try #require(recorded[user])
                let point = points.point(for: user.rawValue)
                #expect(assignment.point == point)
                #expect(assignment.variation == (point < firstGroupEnd ? "A" : "B"), "\(name) \(user) at \(point)")
                #expect(assignment.revision == 1)
                #expect(!assignment.isOverride)
            }
            #expect(Set(reported.all) == Set(recorded.values))
        }
        // The ignored biases matter only if someone sits between 30 and 80.
        let ignored = try await store.recordedAssignments(of: "ignored")
        #expect(ignored.values.contains { $0.point >= 50 && $0.point < 80 && $0.variation == "B" })
    }

    @Test("Re-assigning recorded users writes nothing and reports their recorded group")
    func reassigningWritesNothing() async throws {
        // Given 50 users assigned once
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.twoTests)
        let users = UserID.numbered(50)
        _ = try await store.assignments.assign(users, to: "kept", in: .acmeProduction)
        let events = try await store.allAssignmentEvents()
        #expect(events.count == 50)
        #expect(events.allSatisfy { $0.reason == .first && $0.previousVariation == nil && $0.revision == 1 })
        let before = try await store.recordedAssignments(of: "kept")

        // When they are assigned again, with one newcomer
        let reported = Collected<Assignment>()
        let newcomer = UserID(rawValue: "newcomer")
        let summary = try await store.assignments.assign(users + [newcomer], to: "kept", in: .acmeProduction) {
            reported.append($0)
        }

        // Then only the newcomer is written
        #expect(summary == AssignmentSummary(recorded: 1, known: 50))
        let after = try await store.allAssignmentEvents()
        #expect(after.count == 51)
        #expect(after.first?.user == newcomer)
        var recorded = try await store.recordedAssignments(of: "kept")
        #expect(recorded.removeValue(forKey: newcomer) != nil)
        #expect(recorded == before)
        #expect(reported.all.count == 51)
        #expect(Set(reported.all.filter { $0.user != newcomer }) == Set(before.values))
    }

    @Test(
        "Flags are not bucketed: assigning to one is refused and writes nothing",
        arguments: [
            ("plain", FeatureKind.flag), ("unlock", .unlockFlag), ("development", .developmentFlag),
        ])
    func flagsAreRefused(name: String, kind: FeatureKind) async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"""
            {"features": [
                {"name": "plain", "enabled": true},
                {"name": "unlock", "unlocked": false},
                {"name": "development", "development": true}
            ]}
            """#)

        await #expect(throws: CoreError.notATest(feature: name, kind: kind)) {
            _ = try await store.assignments.assign(UserID.numbered(10), to: name, in: .acmeProduction)
        }

        #expect(try await store.allAssignmentEvents().isEmpty)
        #expect(try await store.recordedAssignments(of: name).isEmpty)
    }

    @Test("An unknown feature is refused")
    func unknownFeatureIsRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.twoTests)
        let error = await #expect(throws: DocumentError.self) {
            _ = try await store.assignments.assign(UserID.numbered(1), to: "Kept", in: .acmeProduction)
        }
        guard case .featureNotFound(_, "Kept")? = error else {
            Issue.record("expected featureNotFound, got \(String(describing: error))")
            return
        }
        #expect(try await store.allAssignmentEvents().isEmpty)
    }

    @Test("A disabled test puts everyone in Disabled, as the app does")
    func disabledTestPutsEveryoneInDisabled() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "enabled": false, "test-variations": ["A", "B", "C"]}]}"#)

        _ = try await store.assignments.assign(UserID.numbered(120), to: "t", in: .acmeProduction)

        let recorded = try await store.recordedAssignments(of: "t")
        #expect(recorded.count == 120)
        #expect(recorded.values.allSatisfy { $0.variation == "Disabled" })
        #expect(
            try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction) == [
                VariationCount(variation: "A", users: 0), VariationCount(variation: "B", users: 0),
                VariationCount(variation: "C", users: 0), VariationCount(variation: "Disabled", users: 120),
            ])
    }

    @Test("10 000 users on biases [20, 80] put about 20 % in the first group (on a file)")
    func tenThousandUsersFollowTheBiases() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["small", "large"], "test-biases": [20, 80]}]}"#)
        // 1.5 points is 3.75 standard deviations: a random salt would miss it once in 5 000 runs.
        try await store.setSalt("assignment-tests", of: "t")

        let summary = try await store.assignments.assign(UserID.numbered(10_000), to: "t", in: .acmeProduction)

        #expect(summary.recorded == 10_000)
        let counts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        #expect(counts.map(\.variation) == ["small", "large"])
        #expect(counts.map(\.users).reduce(0, +) == 10_000)
        let share = Double(counts[0].users) / 10_000
        #expect(abs(share - 0.20) <= 0.015, "first group holds \(share)")
        #expect(try await store.catalog.feature("t", in: .acmeProduction).recordedUsers == 10_000)
    }

    @Test("Another tenant's users, events and counts are invisible, even under the same feature name")
    func tenantsAreIsolated() async throws {
        // Given the same test in two tenants, and users assigned in acme only
        let store = try await FeatureStore.makeWithTenants()
        let file = #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]}]}"#
        try await store.importText(file, into: .acmeProduction)
        try await store.importText(file, into: .globexProduction)
        let users = UserID.numbered(100)
        _ = try await store.assignments.assign(users, to: "t", in: .acmeProduction)

        // Then globex sees none of them
        #expect(try await store.allAssignmentEvents(in: .globexProduction).isEmpty)
        #expect(try await store.allAssignmentEvents(in: .globexProduction, user: users[0]).isEmpty)
        #expect(try await store.allAssignmentEvents(in: .globexProduction, feature: "t").isEmpty)
        #expect(try await store.assignments.assignmentCounts(of: "t", in: .globexProduction).map(\.users) == [0, 0])
        #expect(try await store.catalog.feature("t", in: .globexProduction).recordedUsers == 0)
        #expect(try await store.recordedAssignments(of: "t", in: .globexProduction).isEmpty)
        #expect(try await store.allAssignmentEvents(in: .acmeProduction).count == 100)

        // When globex assigns the same users and acme changes its biases
        _ = try await store.assignments.assign(users, to: "t", in: .globexProduction)
        let change = try await store.catalog.setBiases(
            [60, 40], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))
        #expect(change.isApplied)

        // Then each tenant keeps its own points, groups and history
        let acme = try await store.recordedAssignments(of: "t", in: .acmeProduction)
        let globex = try await store.recordedAssignments(of: "t", in: .globexProduction)
        #expect(acme.keys == globex.keys)
        #expect(users.contains { acme[$0]?.point != globex[$0]?.point }, "the salts differ, so the points do")
        #expect(globex.values.allSatisfy { $0.variation == ($0.point < 10 ? "A" : "B") && $0.revision == 1 })
        let globexEvents = try await store.allAssignmentEvents(in: .globexProduction)
        #expect(globexEvents.count == 100)
        #expect(globexEvents.allSatisfy { $0.reason == .first })
        #expect(try await store.allAssignmentEvents(in: .acmeProduction).count > 100)
        #expect(try await store.catalog.revisions(of: .globexProduction).count == 1)
    }
}
