import Dispatch
import FlagpoleCore
@testable import FlagpoleStore
import Foundation
import GRDB
import Synchronization
import Testing

@Suite("Group commit and per-user reads")
struct GroupCommitTests {
    static let document = """
        {"features": [
            {"name": "A/B", "test-variations": ["A", "B"], "test-biases": [50, 50]},
            {"name": "MVT", "test-variations": ["X", "Y", "Z"]},
            {"name": "Flag", "enabled": true},
            {"name": "Unlock", "unlocked": false}
        ]}
        """

    /// Counts the commits of a database.
    final class CommitCounter: TransactionObserver, Sendable {
        private let count = Mutex(0)
        var commits: Int { count.withLock { $0 } }
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    @Test("Writes that arrive while the writer is busy commit together, each caller hearing its own outcome; a failing one takes only its own rows back")
    func writesArrivingTogetherShareOneCommit() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        let counter = CommitCounter()
        try await store.write { db in db.add(transactionObserver: counter, extent: .databaseLifetime) }
        try await store.write { db in try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)") }
        let before = counter.commits

        // Given a write holding the writer until 50 others wait behind it
        let release = DispatchSemaphore(value: 0)
        async let blocker: Void = store.writeInGroup { db in
            release.wait()
            try db.execute(sql: "INSERT INTO notes (text) VALUES ('first')")
        }
        let writes = (0..<50).map { index in
            Task {
                try await store.writeInGroup { db -> Int64 in
                    // The 13th fails after writing: its row must go, the others' stay.
                    try db.execute(sql: "INSERT INTO notes (text) VALUES (?)", arguments: ["note \(index)"])
                    if index == 13 { throw StoreError.busy }
                    return db.lastInsertedRowID
                }
            }
        }
        while store.groupCommit.pendingCount < 50 { await Task.yield() }
        release.signal()
        try await blocker

        // Then the 50 committed as one transaction after the first
        var ids: [Int64] = []
        for (index, write) in writes.enumerated() {
            switch await write.result {
            case .success(let id): ids.append(id)
            case .failure(let error):
                guard case .busy = error as? StoreError else { throw error }
                #expect(index == 13)
            }
        }
        #expect(counter.commits - before == 2)
        #expect(ids.count == 49 && Set(ids).count == 49)
        let texts = try await store.read { db in try String.fetchAll(db, sql: "SELECT text FROM notes ORDER BY id") }
        #expect(texts.count == 50 && texts.first == "first" && !texts.contains("note 13"))
    }

    @Test("Concurrent first fetches of one new user record one group per test, once, and all answer it")
    func concurrentFirstFetchesOfOneUser() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let user = UserID(rawValue: "newcomer")
        let documents = try await withThrowingTaskGroup(of: PinnedDocument.self) { group in
            for _ in 0..<40 { group.addTask { try await store.pinnedDocument(for: user, in: .acmeProduction) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(documents.map(\.bytes)).count == 1)
        let reasons = try await store.allAssignmentEvents(user: user).map(\.reason)
        #expect(reasons == [.first, .first])
        #expect(try await store.recordedAssignments(of: "A/B").count == 1)
        #expect(try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments).isEmpty)
    }

    @Test("Many new users at once are all recorded, each in the group of their point")
    func manyNewUsersAtOnce() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let users = UserID.numbered(300)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users { group.addTask { _ = try await store.pinnedDocument(for: user, in: .acmeProduction) } }
            try await group.waitForAll()
        }
        let salt = try await store.salt(of: "MVT")
        let recorded = try await store.recordedAssignments(of: "MVT")
        #expect(recorded.count == users.count)
        let ranges = VariationRanges(names: ["X", "Y", "Z"], biases: [100.0 / 3, 100.0 / 3, 100.0 / 3])
        for user in users {
            #expect(recorded[user]?.variation == ranges.variation(at: UserPoints(salt: salt).point(for: user.rawValue)))
        }
        #expect(try await store.allAssignmentEvents().count == 2 * users.count)
    }

    @Test("A recorded user's document is a read: fetching it again writes nothing")
    func recordedUserIsARead() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let counter = CommitCounter()
        try await store.write { db in db.add(transactionObserver: counter, extent: .databaseLifetime) }
        let user = UserID(rawValue: "regular")
        let first = try await store.pinnedDocument(for: user, in: .acmeProduction)
        let afterFirst = counter.commits
        for _ in 0..<5 {
            #expect(try await store.pinnedDocument(for: user, in: .acmeProduction) == first)
        }
        #expect(counter.commits == afterFirst)
    }

    @Test("First assignments computed under a revision that another write replaced are not written; the fetch reads again under the new one")
    func staleFirstAssignmentsAreNotWritten() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let user = UserID(rawValue: "late")
        let (plan, _) = try await store.userState(of: user, in: .acmeProduction)
        try await store.importText(Self.document.replacingOccurrences(of: "[50, 50]", with: "[10, 90]"))

        #expect(try await store.recordFirstAssignments(of: user, in: plan.tests, under: plan.head) == nil)
        #expect(try await store.allAssignmentEvents(user: user).isEmpty)

        let pinned = try await store.pinnedDocument(for: user, in: .acmeProduction)
        #expect(pinned.revision == 2)
        let point = UserPoints(salt: try await store.salt(of: "A/B")).point(for: user.rawValue)
        #expect(pinned.assignments.first { $0.feature == "A/B" }?.variation == (point < 10 ? "A" : "B"))
        #expect(pinned.assignments.allSatisfy { $0.revision == 2 })
    }
}
