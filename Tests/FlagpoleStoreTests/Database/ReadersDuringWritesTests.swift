import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// A bias change over a million users holds the write lock for a second or two; the server's
/// readers must keep reading meanwhile. This holds a write transaction open on a real file and
/// reads through the public API while it is open.
@Suite("Readers during writes")
struct ReadersDuringWritesTests {
    @Test("A read completes while a write transaction is open, and sees the state before it", .timeLimit(.minutes(1)))
    func readersKeepReading() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(100), to: "t", in: .acmeProduction)
        let writing = DispatchSemaphore(value: 0)
        let readDone = DispatchSemaphore(value: 0)

        // A writer that moves users and then waits, lock held, until the read is done.
        let writer = Task {
            try await store.write { db in
                // Re-evaluation moves every user to A: an event each, the move, the deltas.
                let scope = try db.environments.scope(of: .acmeProduction)
                let stored = try db.features.stored(named: "t", in: scope)
                var everyoneInA = stored.feature
                everyoneInA.testBiases = [100, 0]
                _ = try db.assignments.writer(in: scope, revision: 1, now: Date()).reevaluate(
                    featureID: stored.id, from: stored.feature.assignmentRanges, to: everyoneInA.assignmentRanges,
                    reason: .bias)
                writing.signal()
                readDone.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                writing.wait()
                continuation.resume()
            }
        }

        let counts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        readDone.signal()
        try await writer.value

        // The read saw the committed state, not the open transaction's.
        #expect(counts.first { $0.variation == "B" }.map(\.users) ?? 0 > 0)
        #expect(
            try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction).first { $0.variation == "B" }?
                .users == 0)
    }
}
