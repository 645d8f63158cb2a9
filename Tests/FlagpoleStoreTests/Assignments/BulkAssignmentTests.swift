import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// Bulk assignment takes two paths: a test without recorded users stages everyone at once; a
/// test with recorded users goes in batches that read back who is known. Both must report every
/// listing in order, record each new user once, and write nothing for the others.
@Suite("Bulk assignment")
struct BulkAssignmentTests {
    static let test = #"{"features": [{"name": "t", "test-variations": ["A", "B", "C"], "test-biases": [20, 30, 50]}]}"#

    @Test(
        "A user listed twice is recorded once; the second listing reads as known, on every path",
        arguments: [false, true], [false, true])
    func duplicates(hasRecordedUsers: Bool, isBulk: Bool) async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.test)
        if hasRecordedUsers {
            _ = try await store.assignments.assign([UserID(rawValue: "earlier")], to: "t", in: .acmeProduction)
        }
        // Past the direct path's limit, the list is staged and copied in bulk.
        let fillers = isBulk ? UserID.numbered(Assignments.directAssignmentLimit, prefix: "filler") : []
        let users = ["a", "b", "a", "earlier", "c", "b"].map(UserID.init(rawValue:)) + fillers
        let reported = Collected<Assignment>()

        let summary = try await store.assignments.assign(users, to: "t", in: .acmeProduction) { reported.append($0) }

        // "earlier" is new too when it was not recorded before.
        let expected =
            hasRecordedUsers ? AssignmentSummary(recorded: 3, known: 3) : AssignmentSummary(recorded: 4, known: 2)
        #expect(summary == AssignmentSummary(recorded: expected.recorded + fillers.count, known: expected.known))
        #expect(reported.all.map(\.user) == users)
        let recorded = try await store.recordedAssignments(of: "t")
        #expect(Set(recorded.keys) == Set(["a", "b", "c", "earlier"].map(UserID.init(rawValue:)) + fillers))
        for assignment in reported.all { #expect(recorded[assignment.user] == assignment) }
        let firsts = try await store.allAssignmentEvents().filter { $0.reason == .first }
        #expect(firsts.count == 4 + fillers.count)
        #expect(Set(firsts.map(\.user)).count == 4 + fillers.count)
    }

    @Test("Batches: 10 000 users over a test with recorded users, new and known interleaved across batch boundaries")
    func batches() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.test)
        let known = UserID.numbered(5000, prefix: "known")
        _ = try await store.assignments.assign(known, to: "t", in: .acmeProduction)
        let before = try await store.recordedAssignments(of: "t")
        let fresh = UserID.numbered(5000, prefix: "fresh")
        let users = zip(known, fresh).flatMap { [$0, $1] }
        let reported = Collected<Assignment>()

        let summary = try await store.assignments.assign(users, to: "t", in: .acmeProduction) { reported.append($0) }

        #expect(summary == AssignmentSummary(recorded: 5000, known: 5000))
        #expect(reported.all.map(\.user) == users)
        let after = try await store.recordedAssignments(of: "t")
        #expect(after.count == 10_000)
        for user in known { #expect(after[user] == before[user]) }
        let points = UserPoints(salt: try await store.catalog.feature("t", in: .acmeProduction).salt)
        let feature = try await store.catalog.feature("t", in: .acmeProduction).feature
        for user in fresh {
            let assignment = try #require(after[user])
            #expect(assignment.point == points.point(for: user.rawValue))
            #expect(assignment.variation == feature.variation(at: assignment.point))
        }
        #expect(try await store.allAssignmentEvents().count == 10_000)
    }
}
