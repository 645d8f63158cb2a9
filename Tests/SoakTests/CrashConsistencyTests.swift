import EndToEndSupport
import FlagpoleTestSupport
import Foundation
import Testing

/// SIGKILL of the command line and of the server in the middle of their writes, on one
/// database, a SQLite file or a PostgreSQL database: what was acknowledged survives, nothing
/// is half-applied, the server restarts.
@Suite("Crash consistency, end to end", .serialized)
struct CrashConsistencyTests {
    /// Write cycles of a CI run, fewer on PostgreSQL so that the two runs fit CI's time;
    /// `FLAGPOLE_CRASH_CYCLES=2000 swift test --filter CrashConsistency` runs a longer one on
    /// each backend, and `FLAGPOLE_CRASH_SEED` replays a run.
    static func cycles(on backend: Backend) -> Int {
        ProcessInfo.processInfo.environment["FLAGPOLE_CRASH_CYCLES"].flatMap(Int.init)
            ?? (backend == .postgres ? 100 : 200)
    }

    /// Every this many cycles, and after the last, the check is full (integrity, foreign keys,
    /// tables) and the live server is asked for the latest revisions; the rest of the check, and
    /// a restarted server's, follow every cycle.
    static let fullCheckInterval = 5

    @Test(
        "Random SIGKILLs of import, bias set, assign and the server (200 cycles; 100 on PostgreSQL): integrity ok, revisions contiguous, acknowledged writes present, none half-applied",
        arguments: Backend.allCases)
    func randomKills(_ backend: Backend) throws {
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_CRASH_SEED")
        let cycles = Self.cycles(on: backend)
        print(
            "crash consistency on \(backend): \(cycles) cycles, seed \(seed) (replay: FLAGPOLE_CRASH_SEED=\(seed))")
        let started = Date()
        let harness = try CrashHarness(seed: seed, backend: backend)
        var checking: TimeInterval = 0
        for cycle in 1...cycles {
            let restarts = harness.restarts
            try harness.runCycle()
            let checked = Date()
            let isFull = cycle % Self.fullCheckInterval == 0 || cycle == cycles
            var problems = try harness.consistency.violations(against: harness.ledger, isFull: isFull)
            if problems.isEmpty && (harness.restarts > restarts || isFull) {
                problems += try harness.checkServes()
            }
            checking += Date().timeIntervalSince(checked)
            guard problems.isEmpty else {
                Issue.record(
                    """
                    cycle \(cycle) of seed \(seed) on \(backend) left the database inconsistent (kept at \(harness.cli.databasePath)):
                    \(problems.prefix(20).joined(separator: "\n"))
                    """)
                return
            }
        }
        let entries = harness.ledger.entries
        let kills = harness.landings.filter { $0.key != .notKilled }.values.reduce(0, +)
        print(
            """
            crash consistency on \(backend): \(cycles) cycles, \(entries.count) writes (\(entries.filter(\.isAcknowledged).count) acknowledged), \
            \(kills) kills, \(harness.restarts) server restarts, in \(String(format: "%.1f", Date().timeIntervalSince(started))) s \
            (checks \(String(format: "%.1f", checking)) s); seed \(seed)
            """)
        for landing in CrashHarness.Landing.allCases {
            print("  \(landing.rawValue): \(harness.landings[landing] ?? 0)")
        }
        let pinned = entries.filter { if case .pinned = $0.write { true } else { false } }
        print(
            "  of which pinned-document fetches of new users: \(pinned.count) (\(pinned.filter(\.isAcknowledged).count) acknowledged)"
        )
        #expect(
            pinned.contains(where: \.isAcknowledged) || cycles < 50, "the run must cover recorded first fetches")
        let windows = harness.windows
        for operation in CrashHarness.Operation.allCases {
            guard let window = windows[operation] else { continue }
            print(
                "  \(operation.rawValue): write lock taken \(Int(window.start * 1000)) ms after start, released at \(Int(window.end * 1000)) ms (medians)"
            )
        }
        try? FileManager.default.removeItem(at: harness.cli.directory)
    }
}
