import FlagpoleTestSupport
import Foundation
import Testing

/// SIGKILL of the command line and of the server in the middle of their writes, on one
/// database file: what was acknowledged survives, nothing is half-applied, the server restarts.
@Suite("Crash consistency, end to end", .serialized)
struct CrashConsistencyTests {
    /// Write cycles of a CI run; `FLAGPOLE_CRASH_CYCLES=2000 swift test --filter CrashConsistency`
    /// runs a longer one, and `FLAGPOLE_CRASH_SEED` replays a run.
    static let cycles = ProcessInfo.processInfo.environment["FLAGPOLE_CRASH_CYCLES"].flatMap(Int.init) ?? 200

    /// Every this many cycles, and after the last, the check is full (integrity, foreign keys,
    /// tables) and the live server is asked for the latest revisions; the rest of the check, and
    /// a restarted server's, follow every cycle.
    static let fullCheckInterval = 5

    @Test(
        "Random SIGKILLs of import, bias set, assign and the server: integrity ok, revisions contiguous, acknowledged writes present, none half-applied"
    )
    func randomKills() throws {
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_CRASH_SEED")
        print("crash consistency: \(Self.cycles) cycles, seed \(seed) (replay: FLAGPOLE_CRASH_SEED=\(seed))")
        let started = Date()
        let harness = try CrashHarness(seed: seed)
        var checking: TimeInterval = 0
        for cycle in 1...Self.cycles {
            let restarts = harness.restarts
            try harness.runCycle()
            let checked = Date()
            let isFull = cycle % Self.fullCheckInterval == 0 || cycle == Self.cycles
            var problems = try harness.consistency.violations(against: harness.ledger, isFull: isFull)
            if problems.isEmpty && (harness.restarts > restarts || isFull) {
                problems += try harness.checkServes()
            }
            checking += Date().timeIntervalSince(checked)
            guard problems.isEmpty else {
                Issue.record(
                    """
                    cycle \(cycle) of seed \(seed) left the database inconsistent (kept at \(harness.cli.databasePath)):
                    \(problems.prefix(20).joined(separator: "\n"))
                    """)
                return
            }
        }
        let entries = harness.ledger.entries
        let kills = harness.landings.filter { $0.key != .notKilled }.values.reduce(0, +)
        print(
            """
            crash consistency: \(Self.cycles) cycles, \(entries.count) writes (\(entries.filter(\.isAcknowledged).count) acknowledged), \
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
            pinned.contains(where: \.isAcknowledged) || Self.cycles < 50, "the run must cover recorded first fetches")
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
