import Dispatch
import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import FlagpoleStore

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

    @Test(
        "Writes that arrive while the writer is busy commit together, each caller hearing its own outcome; a failing one takes only its own rows back",
        TestBackend.sqliteOnly)
    func writesArrivingTogetherShareOneCommit() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        let counter = CommitCounter()
        try await store.write { db in db.sqlite!.add(transactionObserver: counter, extent: .databaseLifetime) }
        _ = try await store.write { db in
            try db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        }
        let before = counter.commits

        // Given a write holding the writer until 50 others wait behind it (they are sent once it
        // holds the writer, or one of them could take the writer first)
        let release = DispatchSemaphore(value: 0)
        let isHolding = Mutex(false)
        async let blocker: Void = store.writeInGroup { db in
            isHolding.withLock { $0 = true }
            release.wait()
            try db.execute("INSERT INTO notes (text) VALUES ('first')")
        }
        while !isHolding.withLock({ $0 }) { await Task.yield() }
        let writes = (0..<50).map { index in
            Task {
                try await store.writeInGroup { db -> Int64 in
                    // The 13th fails after writing: its row must go, the others' stay.
                    try db.execute("INSERT INTO notes (text) VALUES (?)", ["note \(index)"])
                    if index == 13 { throw StorageError.busy }
                    return db.sqlite!.lastInsertedRowID
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
                guard case .busy = error as? StorageError else { throw error }
                #expect(index == 13)
            }
        }
        #expect(counter.commits - before == 2)
        #expect(ids.count == 49 && Set(ids).count == 49)
        let texts = try await store.read { db in try db.values(String.self, "SELECT text FROM notes ORDER BY id") }
        #expect(texts.count == 50 && texts.first == "first" && !texts.contains("note 13"))
    }

    @Test("Concurrent first fetches of one new user record one group per test, once, and all answer it")
    func concurrentFirstFetchesOfOneUser() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let user = UserID(rawValue: "newcomer")
        let documents = try await withThrowingTaskGroup(of: PinnedDocument.self) { group in
            for _ in 0..<40 {
                group.addTask { try await store.assignments.pinnedDocument(for: user, in: .acmeProduction) }
            }
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
            for user in users {
                group.addTask { _ = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction) }
            }
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

    @Test("A recorded user's document is a read: fetching it again writes nothing", TestBackend.sqliteOnly)
    func recordedUserIsARead() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let counter = CommitCounter()
        try await store.write { db in db.sqlite!.add(transactionObserver: counter, extent: .databaseLifetime) }
        let user = UserID(rawValue: "regular")
        let first = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
        let afterFirst = counter.commits
        for _ in 0..<5 {
            #expect(try await store.assignments.pinnedDocument(for: user, in: .acmeProduction) == first)
        }
        #expect(counter.commits == afterFirst)
    }

    @Test(
        "One batch recording the same new users twice, by the API and by their apps: each recorded once, reported new once, pinned where an app fetched; a write beside them that fails, or records less than it announced, leaves its user absent",
        arguments: [false, true])
    func oneBatchRecordingUsersTwice(withFailingWrite: Bool) async throws {
        // On a file: the apps' reads go to a reader while the writer is held.
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        // The revision's plan is built and kept: the writes below know their groups before they run.
        _ = try await store.assignments.pinnedDocument(for: UserID(rawValue: "warm-up"), in: .acmeProduction)
        let plan = try #require(store.pinningPlans.plan(for: .acmeProduction))
        let test = try #require(plan.tests.first { $0.name == "A/B" })

        // Given the writer held until every write below waits for it: one batch.
        let release = DispatchSemaphore(value: 0)
        let isHolding = Mutex(false)
        async let blocker: Void = store.writeInGroup { _ in
            isHolding.withLock { $0 = true }
            release.wait()
        }
        while !isHolding.withLock({ $0 }) { await Task.yield() }
        let users = UserID.numbered(10, prefix: "twice")
        var pending = 0
        func waitForQueue(_ count: Int) async {
            pending += count
            while store.groupCommit.pendingCount < pending { await Task.yield() }
        }
        let posts = (0..<2).map { _ in
            Task { try await store.assignments.assign(users, to: "A/B", in: .acmeProduction) }
        }
        await waitForQueue(2)
        let fetches = users.prefix(5).map { user in
            Task { try await store.assignments.pinnedDocument(for: user, in: .acmeProduction) }
        }
        await waitForQueue(5)
        // A write that announces a user's first assignment, as the others do, then records it
        // and fails, or returns without recording it (on PostgreSQL, the row recorded ahead is
        // taken by no write: the group must not commit it).
        let doomed = UserID(rawValue: "doomed")
        let first = PendingFirst(
            head: plan.head, featureID: test.featureID, user: doomed,
            assignment: test.firstAssignment(
                of: EvaluationContext(user: doomed, attributes: [:]), segments: plan.segments,
                revision: plan.revision, isPinned: false))
        let failing = Task {
            try await store.writeInGroup(prerecording: [first]) { db in
                guard withFailingWrite else { return }
                _ = try db.assignments.writer(in: plan.head.scope, revision: plan.revision, now: Date())
                    .recordFirst(first.assignment, of: doomed, featureID: test.featureID)
                throw StorageError.busy
            }
        }
        await waitForQueue(1)
        release.signal()
        try await blocker

        // Then each user is new to exactly one of the two POSTs
        var summaries: [AssignmentSummary] = []
        for post in posts { summaries.append(try await post.value) }
        #expect(summaries.map(\.recorded).reduce(0, +) == users.count)
        #expect(summaries.map(\.known).reduce(0, +) == users.count)
        // and each app was answered the group on record, now kept for it
        let recorded = try await store.recordedAssignments(of: "A/B")
        for (user, fetch) in zip(users, fetches) {
            let document = try await fetch.value
            #expect(document.assignments.first { $0.feature == "A/B" }?.variation == recorded[user]?.variation)
        }
        let pinned = try await store.read { db in
            try db.values(
                String.self,
                "SELECT user_id FROM assignments WHERE feature_id = ? AND user_id LIKE 'twice-%' AND pinned ORDER BY user_id",
                [test.featureID])
        }
        #expect(pinned == users.prefix(5).map(\.rawValue).sorted())
        // with one `first` event per user and test, and counts that agree with the rows
        for (index, user) in users.enumerated() {
            let events = try await store.allAssignmentEvents(user: user)
            #expect(events.map(\.reason) == Array(repeating: .first, count: index < 5 ? 2 : 1), "\(user)")
        }
        #expect(try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments).isEmpty)
        // and the failing write's user nowhere.
        let outcome = await failing.result
        if withFailingWrite {
            #expect(throws: StorageError.self) { try outcome.get() }
        } else {
            #expect(throws: Never.self) { try outcome.get() }
        }
        #expect(recorded[doomed] == nil)
        #expect(try await store.allAssignmentEvents(user: doomed).isEmpty)
    }

    @Test(
        "First assignments computed under a revision that another write replaced are not written; the fetch reads again under the new one"
    )
    func staleFirstAssignmentsAreNotWritten() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.document)
        let user = UserID(rawValue: "late")
        let read = try await store.assignments.readUserDocument(for: user, in: .acmeProduction)
        try await store.importText(Self.document.replacingOccurrences(of: "[50, 50]", with: "[10, 90]"))

        let stale = try await withCheckedThrowingContinuation { continuation in
            store.assignments.finish(read, for: .app, admittingNewUser: { true }) { continuation.resume(with: $0) }
        }
        #expect(stale == nil)
        #expect(try await store.allAssignmentEvents(user: user).isEmpty)

        let pinned = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
        #expect(pinned.revision == 2)
        let point = UserPoints(salt: try await store.salt(of: "A/B")).point(for: user.rawValue)
        #expect(pinned.assignments.first { $0.feature == "A/B" }?.variation == (point < 10 ? "A" : "B"))
        #expect(pinned.assignments.allSatisfy { $0.revision == 2 })
    }
}

@Suite("Assignment counts from the history's deltas")
struct AssignmentDeltaTests {
    @Test(
        "The timeline's moments are the counts a replay of the events gives at the end of each minute; now is the recorded users"
    )
    func timelineMatchesReplay() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B", "C"], "test-biases": [20, 30, 50]}]}"#)
        // Events spread over two hours, written as the store writes them (its event writer keeps
        // the deltas): users join, then move between groups and back.
        let start: Int64 = 1_700_000_000_000
        try await store.write { db in
            var seed = SeededGenerator(seed: 7)
            let scope = try db.environments.scope(of: .acmeProduction)
            let feature = try db.features.id(named: "t", in: scope)
            var current: [String: String] = [:]
            for step in 0..<3000 {
                let user = "user-\(Int.random(in: 0..<400, using: &seed))"
                let variation = ["A", "B", "C"].randomElement(using: &seed)!
                let previous = current[user]
                guard previous != variation else { continue }
                let time = start + Int64(step) * 2_400
                // Through the store's one writer of events, which keeps the deltas beside them.
                try db.assignments.writer(in: scope, revision: 1, now: Date(unixMilliseconds: time)).appendEvent(
                    featureID: feature, user: user, previous: previous, variation: variation, point: 1,
                    reason: previous == nil ? .first : .bias)
                try db.execute(
                    """
                    INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision, assigned_at)
                    VALUES (?, ?, ?, ?, 1, ?, 1, ?) ON CONFLICT (feature_id, point, user_id) DO UPDATE SET variation = excluded.variation
                    """, [scope.tenant.id, scope.id, feature, user, variation, time])
                current[user] = variation
            }
        }
        let now = Date(unixMilliseconds: start + 3000 * 2_400)
        let timeline = try await store.assignments.assignmentTimeline(
            of: "t", in: .acmeProduction, samples: 12, now: now)
        #expect(timeline.count == 12)
        for snapshot in timeline {
            let endOfMinute = Date(unixMilliseconds: (snapshot.time.unixMilliseconds / 60_000 + 1) * 60_000 - 1)
            #expect(
                snapshot.counts
                    == (try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction, at: endOfMinute)))
        }
        #expect(timeline.last?.counts == (try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)))
        let recorded = try await store.recordedAssignments(of: "t")
        #expect(
            try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction).map(\.users)
                == ["A", "B", "C"].map { name in
                    recorded.values.filter { $0.variation == name }.count
                })
        #expect(timeline.first.map { $0.counts.map(\.users).reduce(0, +) } ?? 0 > 0)
    }
}

@Suite("Durability")
struct DurabilityTests {
    @Test("full flushes every commit (synchronous=FULL on the writer); normal keeps SQLite's NORMAL in WAL")
    func synchronousSetting() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-durability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (durability, expected) in [(FeatureStore.Durability.normal, 1), (.full, 2)] {
            let store = try FeatureStore.open(
                atPath: directory.appendingPathComponent("\(durability).sqlite").path, durability: durability)
            #expect(try await store.write { db in try db.value(Int.self, "PRAGMA synchronous") } == expected)
            #expect(try await store.writeInGroup { db in try db.value(Int.self, "PRAGMA synchronous") } == expected)
        }
    }
}
