import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Ramps")
struct RampTests {
    static let onOff =
        #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]}, {"name": "other", "test-variations": ["A", "B"]}]}"#
    let path = EnvironmentPath.acmeProduction
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let day = 86_400
    var steps: [Double] { [1, 5, 20, 50, 100] }

    func request(steps: [Double]? = nil, variation: String? = nil, hold: Int? = nil) -> RampRequest {
        RampRequest(
            feature: "checkout", variation: variation, steps: steps ?? self.steps, hold: .duration(seconds: hold ?? day)
        )
    }

    func time(days: Double) -> Date { start.addingTimeInterval(days * Double(day)) }

    /// A store with the on/off test `checkout` at Enabled 0 % and 2 000 recorded users.
    func storeWithUsers() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.onOff)
        _ = try await store.assignments.assign(UserID.numbered(2_000), to: "checkout", in: path)
        return store
    }

    @Test(
        "Creating a ramp shows every step's plan first, then applies its first step as the ramp, with the users the plan named"
    )
    func createShowsPlansThenAppliesFirstStep() async throws {
        let store = try await storeWithUsers()
        let before = try await store.recordedAssignments(of: "checkout")

        let dryRun = try await store.rollouts.createRamp(
            request(), in: path, actor: "cli:ada", now: start, isDryRun: true)
        #expect(dryRun.isDryRun && dryRun.applied.isEmpty)
        #expect(dryRun.plans.map(\.share) == steps)
        #expect(dryRun.plans.map(\.dueAt) == (0..<5).map { time(days: Double($0)) })
        for plan in dryRun.plans {
            #expect(plan.plan.moves.allSatisfy { $0.from == "Disabled" && $0.to == "Enabled" })
        }
        #expect(dryRun.plans.map { $0.plan.movingShare.rounded() } == [1, 4, 15, 30, 50])
        // Every recorded user moves once over the whole ramp, as each step's plan says.
        #expect(dryRun.plans.reduce(0) { $0 + $1.plan.movingUsers } == 2_000)
        #expect(try await store.rollouts.ramps(in: path).isEmpty)
        #expect(try await store.catalog.revisions(of: path).count == 1)

        let created = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start)
        #expect(created.ramp.state == .running && created.ramp.nextStep == 1)
        #expect(created.ramp.dueAt == time(days: 1))
        #expect(created.applied.map(\.step) == [0] && created.applied[0].revision == 2)
        #expect(created.applied[0].movedUsers == dryRun.plans[0].plan.movingUsers)
        #expect(created.plans.map(\.share) == steps)
        let revision = try #require(try await store.catalog.revisions(of: path).first)
        #expect(
            revision.number == 2 && revision.kind == .bias && revision.actor == "ramp:\(created.ramp.id) by cli:ada")
        #expect(revision.message == "ramp \(created.ramp.id): step 1 of 5, Enabled 1 %")
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [1, 99])
        let after = try await store.recordedAssignments(of: "checkout")
        let moved = after.filter { before[$0.key]?.variation != $0.value.variation }
        #expect(moved.count == created.applied[0].movedUsers && moved.values.allSatisfy { $0.variation == "Enabled" })
    }

    @Test("Due steps are applied once each on schedule, and the last rolls the test out")
    func stepsOnSchedule() async throws {
        let store = try await storeWithUsers()
        let ramp = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start).ramp

        #expect(try await store.rollouts.runDueRamps(now: time(days: 1).addingTimeInterval(-1)).isEmpty)
        for step in 1..<5 {
            let due = time(days: Double(step))
            let reports = try await store.rollouts.runDueRamps(now: due)
            #expect(reports.map { $0.applied.map(\.step) } == [[step]])
            // Asked again at the same time, nothing more is applied.
            #expect(try await store.rollouts.runDueRamps(now: due).isEmpty)
        }
        let finished = try await store.rollouts.ramp(of: "checkout", in: path).ramp
        #expect(finished.state == .finished && finished.dueAt == nil)
        #expect(finished.applied.map(\.step) == [0, 1, 2, 3, 4])
        #expect(finished.applied.map(\.appliedAt) == (0..<5).map { time(days: Double($0)) })
        #expect(finished.events.map(\.kind) == [.created, .finished])
        let revisions = try await store.catalog.revisions(of: path)
        #expect(revisions.count == 6)
        #expect(revisions.prefix(5).allSatisfy { $0.actor == "ramp:\(ramp.id) by cli:ada" })
        #expect(revisions.prefix(5).map(\.kind) == [.rollout, .bias, .bias, .bias, .bias])
        // The last step is `flagpole rollout`'s revision: an on/off test becomes a flag, on for everyone.
        let feature = try await store.catalog.feature("checkout", in: path).feature
        #expect(feature.kind == .flag && feature.isEnabled && feature.testVariations == nil)
        #expect(try await store.recordedAssignments(of: "checkout").values.allSatisfy { $0.variation == "Enabled" })
    }

    @Test("After downtime a ramp folds the overdue steps into the latest one due, once, and says which it folded")
    func foldsOverdueSteps() async throws {
        let store = try await storeWithUsers()
        _ = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start)

        // Down from day 0 to day 3.5: steps 2, 3 and 4 (5 %, 20 %, 50 %) are due.
        let back = time(days: 3.5)
        let reports = try await store.rollouts.runDueRamps(now: back)
        #expect(reports.count == 1)
        let step = try #require(reports.first?.applied.first)
        #expect(step.step == 3 && step.folded == [1, 2])
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [50, 50])
        let revision = try #require(try await store.catalog.revisions(of: path).first)
        #expect(revision.number == 3 && revision.message.hasSuffix("step 4 of 5, Enabled 50 %, folding steps 2, 3"))
        // The last step holds a full day from now.
        #expect(reports[0].ramp.dueAt == back.addingTimeInterval(Double(day)))
        #expect(try await store.rollouts.runDueRamps(now: back).isEmpty)
    }

    @Test("A ramp held until weekdays at 10:00 skips the weekend, and after downtime folds the weekdays it missed")
    func weekdayRamp() async throws {
        let store = try await storeWithUsers()
        let friday = RampHoldTests.utc("2026-11-27T14:00:00Z")
        let created = try await store.rollouts.createRamp(
            RampRequest(
                feature: "checkout", variation: nil, steps: steps,
                hold: try RampHold(parsing: "weekdays at 10:00 Europe/Berlin")),
            in: path, actor: "cli:ada", now: friday)
        #expect(created.ramp.dueAt == RampHoldTests.utc("2026-11-30T09:00:00Z"))
        #expect(created.plans.map(\.dueAt).dropFirst().first == RampHoldTests.utc("2026-11-30T09:00:00Z"))
        #expect(try await store.rollouts.runDueRamps(now: RampHoldTests.utc("2026-11-29T12:00:00Z")).isEmpty)
        // Down until Wednesday 11:00: Monday's, Tuesday's and Wednesday's steps fold into one.
        let back = RampHoldTests.utc("2026-12-02T10:00:00Z")
        let folded = try #require(try await store.rollouts.runDueRamps(now: back).first?.applied.first)
        #expect(folded.step == 3 && folded.folded == [1, 2])
        #expect(
            try await store.rollouts.ramp(of: "checkout", in: path).ramp.dueAt
                == RampHoldTests.utc("2026-12-03T09:00:00Z"))
    }

    @Test("Another revision of the test pauses the ramp, naming it; a resume starts from the test as it is")
    func otherRevisionPauses() async throws {
        let store = try await storeWithUsers()
        _ = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start)
        // A change to another feature is not the test's.
        _ = try await store.catalog.setBiases([30, 70], of: "other", in: path, options: EditOptions(actor: "cli:bob"))
        #expect(try await store.rollouts.runDueRamps(now: time(days: 1)).map { $0.applied.map(\.step) } == [[1]])

        _ = try await store.catalog.setBiases(
            [10, 90], of: "checkout", in: path, options: EditOptions(message: "by hand", actor: "cli:bob"))
        let paused = try await store.rollouts.runDueRamps(now: time(days: 2))
        #expect(paused.count == 1 && paused[0].applied.isEmpty && paused[0].ramp.state == .paused)
        #expect(paused[0].ramp.reason == "revision 5 (bias, by cli:bob: by hand) changed checkout")
        #expect(try await store.catalog.revisions(of: path).count == 5)
        #expect(try await store.rollouts.runDueRamps(now: time(days: 9)).isEmpty)

        // Resumed at 10 %: the next step is 20 %, a full hold from now.
        let resumed = try await store.rollouts.resumeRamp(
            of: "checkout", in: path, actor: "cli:ada", now: time(days: 3))
        #expect(resumed.ramp.state == .running && resumed.ramp.nextStep == 2 && resumed.ramp.dueAt == time(days: 4))
        #expect(resumed.plans.map(\.share) == [20, 50, 100])
        #expect(resumed.ramp.events.map(\.kind) == [.created, .paused, .resumed])
        // Advanced by a person: applied now, under their name, and held from now.
        let advanced = try await store.rollouts.advanceRamp(
            of: "checkout", in: path, actor: "cli:carol", now: time(days: 3.5))
        #expect(advanced.applied.map(\.step) == [2] && advanced.applied[0].appliedBy == "cli:carol")
        #expect(advanced.ramp.dueAt == time(days: 4.5))
        #expect(try await store.catalog.revisions(of: path).first?.actor == "cli:carol")
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [20, 80])
    }

    @Test("Advancing after a person's edit, before the ramp noticed it, starts from the test as it is")
    func advanceAfterEdit() async throws {
        let store = try await storeWithUsers()
        _ = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start)
        _ = try await store.catalog.setBiases(
            [10, 90], of: "checkout", in: path, options: EditOptions(actor: "cli:bob"))
        let advanced = try await store.rollouts.advanceRamp(
            of: "checkout", in: path, actor: "cli:carol", now: time(days: 0.5))
        // The first step above 10 %: 20 %, moving 10 % of users, not back from 10 % to 5 %.
        #expect(advanced.applied.map(\.step) == [2])
        #expect(advanced.plans.first?.plan.moves.map { "\($0.from)→\($0.to)" } == ["Disabled→Enabled"])
        #expect(abs((advanced.plans.first?.plan.movingShare ?? 0) - 10) < 1e-9)
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [20, 80])
        // And the ramp runs on from there: no pause for the edit it has taken in.
        #expect(try await store.rollouts.runDueRamps(now: time(days: 1.5)).map { $0.applied.map(\.step) } == [[3]])
    }

    @Test("A paused ramp applies nothing; an abort with roll-back gives the share back, and the test takes a new ramp")
    func pauseAndAbort() async throws {
        let store = try await storeWithUsers()
        _ = try await store.rollouts.createRamp(request(), in: path, actor: "cli:ada", now: start)
        let dryPause = try await store.rollouts.pauseRamp(
            of: "checkout", in: path, actor: "cli:ada", now: start, isDryRun: true)
        #expect(dryPause.ramp.state == .paused)
        // A dry run says what pausing would do, not that anything is paused.
        #expect(dryPause.summary == "Dry run: pausing stops ramp 1 before step 2 of 5; nothing was written.")
        #expect(try await store.rollouts.ramp(of: "checkout", in: path).ramp.state == .running)
        let paused = try await store.rollouts.pauseRamp(of: "checkout", in: path, actor: "cli:ada", now: start)
        #expect(paused.summary == "Paused by cli:ada. Nothing is applied until someone resumes or advances it.")
        #expect(try await store.rollouts.runDueRamps(now: time(days: 5)).isEmpty)
        await #expect(throws: RampError.wrongState(feature: "checkout", state: .paused, action: "paused")) {
            try await store.rollouts.pauseRamp(of: "checkout", in: path, actor: "cli:ada", now: start)
        }

        let aborted = try await store.rollouts.abortRamp(
            of: "checkout", in: path, rollingBack: true, actor: "cli:ada", now: time(days: 1))
        #expect(aborted.ramp.state == .aborted && aborted.ramp.reason == "aborted by cli:ada, rolled back to 0 %")
        #expect(aborted.plans.first?.plan.moves.map { "\($0.from)→\($0.to)" } == ["Enabled→Disabled"])
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [0, 100])
        #expect(try await store.recordedAssignments(of: "checkout").values.allSatisfy { $0.variation == "Disabled" })
        let again = try await store.rollouts.createRamp(
            request(steps: [10, 100]), in: path, actor: "cli:ada", now: time(days: 2))
        #expect(again.ramp.state == .running)
        #expect(try await store.rollouts.ramps(in: path).map(\.state) == [.aborted, .running])
    }

    @Test(
        "The last variation of a multivariate test grows by taking from its neighbour only: nobody moves between the others"
    )
    func multivariateEnd() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "m", "test-variations": ["A", "B", "C"], "test-biases": [40, 30, 30]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(1_000), to: "m", in: path)
        let report = try await store.rollouts.createRamp(
            RampRequest(feature: "m", variation: "c", steps: [50, 80], hold: .duration(seconds: 3600)), in: path,
            actor: "test",
            now: start, isDryRun: true)
        // 30 → 50 takes 20 from B; 50 → 80 takes B's last 10, then 20 from A.
        #expect(report.plans[0].plan.moves.map { "\($0.from)→\($0.to)" } == ["B→C"])
        #expect(report.plans[1].plan.moves.map { "\($0.from)→\($0.to)" } == ["A→C", "B→C"])
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "m", variation: "c", steps: [50, 80], hold: .duration(seconds: 3600)), in: path,
            actor: "test",
            now: start)
        #expect(try await store.catalog.feature("m", in: path).feature.testBiases == [40, 10, 50])
        _ = try await store.rollouts.runDueRamps(now: start.addingTimeInterval(3600))
        #expect(try await store.catalog.feature("m", in: path).feature.testBiases == [20, 0, 80])
    }

    @Test("Bad ramps are refused with what to do, and nothing is saved")
    func badRampsRefused() async throws {
        let store = try await storeWithUsers()
        try await store.importText(
            #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]}, {"name": "m", "test-variations": ["A", "B", "C"]}, {"name": "off", "test-variations": ["A", "B"], "enabled": false}, {"name": "flag", "enabled": true}]}"#
        )
        let revisions = try await store.catalog.revisions(of: path).count
        let refusals: [(RampRequest, RampError)] = [
            (request(steps: [5, 1]), .stepOutOfOrder(index: 1, share: 1, previous: 5)),
            (request(steps: [0, 10]), .stepOutOfOrder(index: 0, share: 0, previous: nil)),
            (request(steps: [50, 101]), .stepOutOfOrder(index: 1, share: 101, previous: nil)),
            (request(steps: []), .noSteps),
            (
                RampRequest(feature: "m", variation: "B", steps: [50], hold: .duration(seconds: 60)),
                .middleVariation(feature: "m", variation: "B", variations: ["A", "B", "C"])
            ),
            (
                RampRequest(feature: "off", variation: "A", steps: [80], hold: .duration(seconds: 60)),
                .testDisabled(path, feature: "off")
            ),
            (request(hold: 0), .holdOutOfRange(seconds: 0)),
        ]
        for (request, error) in refusals {
            await #expect(throws: error) {
                try await store.rollouts.createRamp(request, in: path, actor: "t", now: start)
            }
        }
        await #expect(
            throws: CoreError.unknownVariation(
                feature: "checkout", variation: "On", variations: ["Enabled", "Disabled"])
        ) {
            try await store.rollouts.createRamp(request(variation: "On"), in: path, actor: "t", now: start)
        }
        await #expect(throws: CoreError.notATest(feature: "flag", kind: .flag)) {
            try await store.rollouts.createRamp(
                RampRequest(feature: "flag", variation: "Enabled", steps: [50], hold: .duration(seconds: 60)), in: path,
                actor: "t",
                now: start)
        }
        #expect(try await store.rollouts.ramps(in: path).isEmpty)
        #expect(try await store.catalog.revisions(of: path).count == revisions)

        // One active ramp per test.
        let first = try await store.rollouts.createRamp(request(), in: path, actor: "t", now: start)
        await #expect(throws: RampError.alreadyRamping(path, feature: "checkout", id: first.ramp.id)) {
            try await store.rollouts.createRamp(request(steps: [10, 100]), in: path, actor: "t", now: start)
        }
        // A ramp starts above the share its variation has.
        await #expect(throws: RampError.stepsBelowCurrent(variation: "A", current: 100.0 / 3, first: 20)) {
            try await store.rollouts.createRamp(
                RampRequest(feature: "m", variation: "A", steps: [20, 50], hold: .duration(seconds: 60)), in: path,
                actor: "t",
                now: start)
        }
        #expect(try await store.rollouts.ramps(in: path).count == 1)
    }

    @Test("A step is applied once: concurrent ticks apply it once, and the database refuses its row twice")
    func exactlyOnce() async throws {
        let store = try await storeWithUsers()
        let ramp = try await store.rollouts.createRamp(request(), in: path, actor: "t", now: start).ramp
        async let first = store.rollouts.runDueRamps(now: time(days: 1))
        async let second = store.rollouts.runDueRamps(now: time(days: 1))
        let applied = try await (first + second).flatMap(\.applied)
        #expect(applied.map(\.step) == [1])
        #expect(try await store.catalog.revisions(of: path).count == 3)
        let row = RampStepRecord(step: 1, revision: 3, appliedBy: "t", appliedAt: start, folded: [], movedUsers: 0)
        await #expect(throws: (any Error).self) {
            try await store.write { db in try db.ramps.insertStep(row, of: ramp.id) }
        }
    }

    @Test("A resume the test no longer allows is refused, saying why, and the ramp stays paused")
    func resumeRefusedAfterChange() async throws {
        let store = try await storeWithUsers()
        _ = try await store.rollouts.createRamp(request(), in: path, actor: "t", now: start)
        // Paused, then the test loses the variation the ramp grows.
        _ = try await store.rollouts.pauseRamp(of: "checkout", in: path, actor: "t", now: start)
        try await store.importText(
            #"{"features": [{"name": "checkout", "test-variations": ["X", "Y"]}, {"name": "other", "test-variations": ["A", "B"]}]}"#
        )
        await #expect(
            throws: CoreError.unknownVariation(feature: "checkout", variation: "Enabled", variations: ["X", "Y"])
        ) {
            try await store.rollouts.resumeRamp(of: "checkout", in: path, actor: "t", now: start)
        }
        #expect(try await store.rollouts.ramp(of: "checkout", in: path).ramp.state == .paused)
    }
}
