import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// A ramp's guards judged on events recorded through the store, as `flagpole serve` sweeps them.
/// Times are real (events must follow their users' assignments); the ramp's clock is given.
@Suite("Ramp guards")
struct RampGuardTests {
    let path = EnvironmentPath.acmeProduction
    let start = Date()
    let day = 86_400.0

    func time(days: Double) -> Date { start.addingTimeInterval(days * day) }

    /// The on/off test `checkout` at Enabled 0 %, and the goal `crashes` (lower is better).
    func store() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        // The guards are statistics: on a random salt, one run in a thousand splits a healthy
        // sample unevenly enough to fail the sample-ratio guard, as it should.
        try await store.setSalt("ramp-guard-tests", of: "checkout")
        try await store.experiments.createGoal(Goal(name: "crashes", kind: .conversion, better: .lower), in: path)
        return store
    }

    func request(steps: [Double], guards: [String], onFailure: RampFailureAction = .pause) throws -> RampRequest {
        RampRequest(
            feature: "checkout", variation: nil, steps: steps, hold: .duration(seconds: Int(day)),
            guards: try guards.map { text throws(RampError) in try RampText.guardrail(text) }, onFailure: onFailure)
    }

    /// Assigns `count` new users and sends a crash for every `enabledEvery`-th user in Enabled and
    /// every `disabledEvery`-th in Disabled. Returns the users per variation.
    @discardableResult
    func newUsers(
        _ count: Int, prefix: String, crashing enabledEvery: Int, _ disabledEvery: Int, in store: FeatureStore
    ) async throws -> [String: Int] {
        let users = UserID.numbered(count, prefix: prefix)
        _ = try await store.assignments.assign(users, to: "checkout", in: path)
        let assigned = try await store.recordedAssignments(of: "checkout")
        var seen: [String: Int] = [:]
        var events: [(index: Int, event: ReceivedEvent)] = []
        let time = Int64((Date().timeIntervalSince1970 + 1) * 1000)
        for user in users {
            let variation = try #require(assigned[user]).variation
            seen[variation, default: 0] += 1
            let every = variation == "Enabled" ? enabledEvery : disabledEvery
            if seen[variation]! % every == 0 {
                events.append(
                    (
                        events.count,
                        ReceivedEvent(
                            id: "\(prefix)-\(user.rawValue)", user: user, goal: "crashes", feature: nil, value: nil,
                            time: time, receivedAt: time)
                    ))
            }
        }
        for batch in stride(from: 0, to: events.count, by: Experiments.eventsPerBatch) {
            let report = try await store.experiments.record(
                Array(events[batch..<min(events.count, batch + Experiments.eventsPerBatch)]), in: path)
            #expect(report.refused.isEmpty)
        }
        return seen
    }

    @Test("Guards are read, completed with the defaults, and refused with a clear error, nothing saved")
    func guardsReadAndRefused() async throws {
        let store = try await store()
        let ramp = try await store.rollouts.createRamp(
            try request(steps: [10, 50, 100], guards: ["crashes:+0.2pt"]), in: path, actor: "cli:ada", now: start
        ).ramp
        #expect(ramp.guards.map(\.description) == ["crashes:+0.2pt", "sample-ratio", "min-users:100", "traffic"])
        #expect(ramp.guards.first == .goal("crashes", threshold: 0.002, inPoints: true))
        _ = try await store.rollouts.abortRamp(
            of: "checkout", in: path, rollingBack: true, actor: "cli:ada", now: start)
        let revisions = try await store.catalog.revisions(of: path).count

        for (guards, steps, error) in [
            (["purchase:+1pt"], [10.0, 100], RampError.unknownGoal(path, name: "purchase", existing: ["crashes"])),
            (["crashes:+1pt", "crashes:+2pt"], [10, 100], .duplicateGuard("crashes:+2pt")),
            (["crashes:+1pt"], [100], .guardsNeedHolds),
            (
                ["crashes:-1pt"], [10, 100],
                .invalidGuard(
                    "crashes:-1pt",
                    reason: "lower is better for crashes, so its threshold is a rise, with +: crashes:+1pt")
            ),
        ] {
            await #expect(throws: error) {
                try await store.rollouts.createRamp(
                    try request(steps: steps, guards: guards), in: path, actor: "cli:ada", now: start)
            }
        }
        for text in ["crashes", "crashes:0.2pt", "crashes:+0pt", "crashes:+x", "min-users:0"] {
            #expect(throws: RampError.self) { try RampText.guardrail(text) }
        }
        #expect(throws: RampError.invalidFailureAction("undo")) { try RampText.failureAction("undo") }
        #expect(try await store.rollouts.ramps(in: path).count == 1)
        #expect(try await store.catalog.revisions(of: path).count == revisions)
    }

    @Test("A guardrail goal beyond its threshold rolls the ramp back while the step holds, with the figures recorded")
    func goalGuardRollsBack() async throws {
        let store = try await store()
        _ = try await store.rollouts.createRamp(
            try request(steps: [10, 50, 100], guards: ["crashes:+2pt"], onFailure: .rollback), in: path,
            actor: "cli:ada", now: start)
        // Half the users in Enabled crash, one in a hundred in Disabled.
        let seen = try await newUsers(3_000, prefix: "new", crashing: 2, 100, in: store)

        // Looked at before the hold's end, by the sweep.
        let reports = try await store.rollouts.runDueRamps(now: time(days: 0.1))
        let ramp = try #require(reports.first?.ramp)
        #expect(ramp.state == .aborted)
        let reason = try #require(ramp.reason)
        #expect(reason.hasPrefix("aborted by guard, rolled back to 0 %: guard failed at step 1: crashes: ["))
        #expect(reason.hasSuffix("against 0.02: beyond the threshold"))
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [0, 100])
        let look = try #require(ramp.looks.first { $0.guardIndex == 0 })
        #expect(look.step == 0 && look.verdict == .fail && look.looks == 1)
        #expect(look.figures.users == [seen["Enabled"]!, seen["Disabled"]!])
        #expect(look.figures.events == [seen["Enabled"]! / 2, seen["Disabled"]! / 100])
        #expect(look.figures.low! > 0.02 && look.figures.threshold == 0.02)
        #expect(look.figures.alpha == 0.05 / 2)
        // Only goal guards look before the hold's end.
        #expect(ramp.looks.count == 1)
        #expect(ramp.events.map(\.kind) == [.created, .aborted] && ramp.events.last?.actor == "guard")
    }

    @Test("A healthy guarded ramp waits for evidence, then applies only its next step after downtime")
    func waitsThenAppliesNextOnly() async throws {
        let store = try await store()
        _ = try await store.rollouts.createRamp(
            try request(steps: [10, 20, 50, 100], guards: ["crashes:+2pt", "min-users:100"]), in: path,
            actor: "cli:ada", now: start)
        // Fifty users, crashing alike: too few in Enabled for the step to advance.
        try await newUsers(50, prefix: "few", crashing: 10, 10, in: store)
        let waiting = try #require(try await store.rollouts.runDueRamps(now: time(days: 1)).first)
        #expect(waiting.ramp.state == .running && waiting.applied.isEmpty && waiting.ramp.nextStep == 1)
        #expect(waiting.summary.contains("fewer than 100: the step waits"))
        // Looked at again only after the look interval.
        #expect(try await store.rollouts.runDueRamps(now: time(days: 1).addingTimeInterval(60)).isEmpty)

        try await newUsers(3_000, prefix: "more", crashing: 10, 10, in: store)
        // Down until day 3.5: three steps' holds are over, and only the next is applied.
        let back = time(days: 3.5)
        let applied = try #require(try await store.rollouts.runDueRamps(now: back).first)
        #expect(applied.applied.map(\.step) == [1] && applied.applied[0].folded.isEmpty)
        #expect(applied.ramp.dueAt == back.addingTimeInterval(day))
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [20, 80])
        let looks = try await store.rollouts.ramp(of: "checkout", in: path).ramp.looks.filter { $0.step == 0 }
        #expect(looks.map(\.verdict) == [.pass, .pass, .pass, .pass])
        #expect(looks.first { $0.guardIndex == 1 }?.looks == 2)
    }

    @Test("A guarded ramp whose start came during downtime applies its first step alone, folding none")
    func guardedStartNeverFolds() async throws {
        let store = try await store()
        var request = try request(steps: [10, 20, 50, 100], guards: ["sample-ratio"])
        request.start = time(days: 1)
        _ = try await store.rollouts.createRamp(request, in: path, actor: "cli:ada", now: start)
        let dryRun = try #require(try await store.rollouts.runDueRamps(now: time(days: 4.5), isDryRun: true).first)
        #expect(dryRun.summary == "Dry run: step 1 of 4 would be applied. Nothing was written.")
        let applied = try #require(try await store.rollouts.runDueRamps(now: time(days: 4.5)).first)
        #expect(applied.applied.map(\.step) == [0] && applied.applied[0].folded.isEmpty)
        #expect(applied.ramp.dueAt == time(days: 5.5))
    }

    @Test("The goal guard compares the users the split placed since the step, not the users the step moved in")
    func moversLeftOut() async throws {
        let store = try await store()
        let recorded = UserID.numbered(2_000, prefix: "old")
        _ = try await store.assignments.assign(recorded, to: "checkout", in: path)
        _ = try await store.rollouts.createRamp(
            try request(steps: [10, 100], guards: ["crashes:+2pt"]), in: path, actor: "cli:ada", now: start)
        // Every user the step moved crashes (long-time users, say); new users crash alike everywhere.
        let assigned = try await store.recordedAssignments(of: "checkout")
        let moved = recorded.filter { assigned[$0]?.variation == "Enabled" }
        #expect(moved.count > 100)
        let sent = Int64((Date().timeIntervalSince1970 + 1) * 1000)
        _ = try await store.experiments.record(
            moved.enumerated().map { index, user in
                (
                    index,
                    ReceivedEvent(
                        id: "moved-\(index)", user: user, goal: "crashes", feature: nil, value: nil, time: sent,
                        receivedAt: sent)
                )
            }, in: path)
        let seen = try await newUsers(3_000, prefix: "new", crashing: 20, 20, in: store)

        // The readout, counting everyone who joined the epoch, says Enabled crashes far more…
        let readout = try await store.experiments.results(of: "checkout", in: path, control: "Disabled")
        let crashes = try #require(readout.epochs.last?.goals.first?.variations.first { $0.variation == "Enabled" })
        #expect(try #require(crashes.comparison).difference > 0.2)
        // …and the guard, comparing like with like, passes.
        #expect(try await store.rollouts.runDueRamps(now: time(days: 0.1)).isEmpty)
        let ramp = try await store.rollouts.ramp(of: "checkout", in: path).ramp
        let look = try #require(ramp.looks.first { $0.guardIndex == 0 })
        #expect(ramp.state == .running && look.verdict == .pass)
        #expect(look.figures.users == [seen["Enabled"]!, seen["Disabled"]!])
    }

    @Test("No traffic during a hold pauses a guarded ramp, and a ramp without guards ignores it")
    func noTrafficPauses() async throws {
        let store = try await store()
        _ = try await store.rollouts.createRamp(
            try request(steps: [10, 100], guards: ["sample-ratio"]), in: path, actor: "cli:ada", now: start)
        let paused = try #require(try await store.rollouts.runDueRamps(now: time(days: 1)).first).ramp
        #expect(paused.state == .paused)
        #expect(
            paused.reason
                == "guard failed at step 1: traffic: no user joined the step, no event arrived and no client fetched it during its hold"
        )
        #expect(paused.guards.map(\.description) == ["sample-ratio", "min-users:100", "traffic"])
    }

    @Test(
        "Fetches of the step's revision are traffic: a hold its apps fetched, though they sent nothing, is not paused")
    func fetchesAreTraffic() async throws {
        let store = try await store()
        let created = try await store.rollouts.createRamp(
            try request(steps: [10, 100], guards: ["sample-ratio"]), in: path, actor: "cli:ada", now: start)
        let revision = try #require(created.ramp.applied.first).revision
        // Fetches of the revision before the step's are no news of it; three of the step's are.
        try await store.outbound.addFetchCounts(
            [
                FetchKey(path: path, revision: revision - 1, client: .shared): 50,
                FetchKey(path: path, revision: revision, client: .pinned): 2,
                FetchKey(path: path, revision: revision, client: .ofrep): 1,
            ], now: start)
        let ramp = try #require(try await store.rollouts.runDueRamps(now: time(days: 1)).first).ramp
        #expect(ramp.state == .running)
        let traffic = try #require(ramp.looks.first { ramp.guards[$0.guardIndex] == .traffic })
        #expect(traffic.verdict == .pass && traffic.figures.fetches == 3)
        #expect(ramp.applied.first?.fetches.byClient == [.pinned: 2, .ofrep: 1])
        #expect(ramp.applied.first?.fetches.description == "3 fetches (pinned 2, ofrep 1)")
    }
}
