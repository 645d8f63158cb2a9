import Benchmark
import FlagpoleCore
import FlagpoleStore
import Foundation

/// FlagpoleStore's operations on SQLite files, as the command line and the server run them.
func storeBenchmarks() {
    // The whole import of the features file into a fresh store: decode, render, and one
    // transaction writing the features, their variations, the revision and its audit rows.
    // The store is created and migrated before the clock starts, and removed after it stops.
    Benchmark("import") { benchmark, bytes in
        do {
            let directory = try Inputs.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = try FeatureStore.open(atPath: directory.appendingPathComponent("import.sqlite").path)
            try await store.access.createTenant(Inputs.tenant)
            benchmark.startMeasurement()
            let outcome = try await store.catalog.importDocument(
                bytes, into: Inputs.path, options: .init(actor: "bench"))
            benchmark.stopMeasurement()
            blackHole(outcome)
        } catch {
            fatalError("import: \(error)")
        }
    } setup: {
        try Inputs.featuresFile()
    }

    // The plan of a bias change (10/90 → 20/80) of a test with FLAGPOLE_BENCH_USERS recorded
    // users: what `bias set --dry-run` prints, the movers counted, nothing written.
    Benchmark("bias-plan") { _, planner in
        do {
            let outcome = try await planner.store.catalog.setBiases(
                [20, 80], of: Inputs.test.name, in: Inputs.path, options: .init(isDryRun: true, actor: "bench"))
            precondition(outcome.plans.count == 1, "the plan has \(outcome.plans.count) tests")
            blackHole(outcome)
        } catch {
            fatalError("bias-plan: \(error)")
        }
    } setup: {
        try await Planner()
    }

    // The plan of importing the same file with the test's biases changed: every feature compared
    // with the store's, the test's movers counted, nothing written (`import --dry-run`).
    Benchmark("import-plan") { _, planner in
        do {
            let outcome = try await planner.store.catalog.importDocument(
                planner.changedFile, into: Inputs.path, options: .init(isDryRun: true, actor: "bench"))
            precondition(outcome.changed == [Inputs.test.name], "the plan changes \(outcome.changed)")
            blackHole(outcome)
        } catch {
            fatalError("import-plan: \(error)")
        }
    } setup: {
        try await Planner()
    }

    // A user's history, the newest 100 events, one read transaction through the store: each
    // iteration is one query, for the next user of the sample (wall clock = latency).
    Benchmark("history", configuration: .init(warmupIterations: 10, maxIterations: 1_000_000)) { _, history in
        do {
            let user = history.nextUser()
            blackHole(
                try await history.store.assignments.assignmentEvents(
                    in: Inputs.path, matching: .init(user: user, limit: 100)))
        } catch {
            fatalError("history: \(error)")
        }
    } setup: {
        try await History()
    }
}

/// A store with the features file and the test, FLAGPOLE_BENCH_USERS users assigned to it.
final class Planner: Sendable {
    let store: FeatureStore
    private let directory: URL
    /// The file of the store's current revision with the test at 20/80.
    let changedFile: [UInt8]

    init() async throws {
        var document = try Inputs.document(try Inputs.featuresFile())
        document.features.removeAll { $0.name == Inputs.test.name }
        document.features.append(Inputs.test)
        directory = try Inputs.scratchDirectory()
        store = try FeatureStore.open(atPath: directory.appendingPathComponent("planner.sqlite").path)
        try await store.access.createTenant(Inputs.tenant)
        _ = try await store.catalog.importDocument(
            document.rendered(), into: Inputs.path, options: .init(actor: "bench"))
        let users = (0..<Inputs.users).map { UserID(rawValue: "user-\($0)") }
        _ = try await store.assignments.assign(users, to: Inputs.test.name, in: Inputs.path)
        document.features[document.features.count - 1].testBiases = [20, 80]
        changedFile = document.rendered()
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// The users to query and the store holding their history: Scripts/bench's history database
/// (read-only), or a small one built here (the planner's store after five bias changes).
final class History: @unchecked Sendable {
    let store: FeatureStore
    let users: [UserID]
    /// The store's owner when it was built here (it removes the store's files when done).
    private let planner: Planner?
    private var next = 0

    init() async throws {
        if let prepared = Inputs.historyDatabase {
            store = try FeatureStore.open(atPath: prepared.path, access: .readOnly)
            planner = nil
            users = try String(contentsOfFile: prepared.users, encoding: .utf8)
                .split(separator: "\n").map { UserID(rawValue: String($0)) }
        } else {
            let planner = try await Planner()
            for biases in [[20.0, 80.0], [30, 70], [40, 60], [50, 50], [60, 40]] {
                _ = try await planner.store.catalog.setBiases(
                    biases, of: Inputs.test.name, in: Inputs.path, options: .init(actor: "bench"))
            }
            store = planner.store
            self.planner = planner
            users = (0..<min(Inputs.users, 1_000)).map { UserID(rawValue: "user-\($0 * 7919 % Inputs.users)") }
        }
        guard !users.isEmpty else { throw BenchmarkInputError("history: no users to query") }
        // One pass over every user, untimed: it warms the page cache as the timed queries will
        // find it, and counts their events for Scripts/bench to compare with its baseline's.
        var events = 0
        for user in users {
            events += try await store.assignments.assignmentEvents(
                in: Inputs.path, matching: .init(user: user, limit: 100)
            ).count
        }
        if let report = Inputs.historyReport {
            try "\(users.count) \(events)\n".write(toFile: report, atomically: true, encoding: .utf8)
        }
    }

    /// The next user of the sample, round and round (the benchmark runs one iteration at a time).
    func nextUser() -> UserID {
        defer { next = (next + 1) % users.count }
        return users[next]
    }
}
