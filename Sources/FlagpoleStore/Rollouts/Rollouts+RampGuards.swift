import FlagpoleCore
import Foundation

/// A ramp's guards: what it watches while a step holds, judged from the readout of the step's
/// epoch, and what it does when one fails (docs/RAMPS.md, "Guards").
extension Rollouts {
    /// How often the guards look at a holding step: the sweep of `runDueRamps`, and the looks of
    /// a step that waits at the end of its hold.
    public static let guardLookInterval: TimeInterval = 300

    /// The guards a ramp keeps: those `asked`, then, for a guarded ramp, the ones it keeps unless
    /// given: `sample-ratio`, `min-users:100`, and `traffic` unless the environment `publishes` to
    /// object storage (whose fetches Flagpole never sees). A ramp asked for none has none.
    ///
    /// - throws: `RampError.unknownGoal`, `.invalidGuard` (a threshold on the goal's good side),
    ///   `.duplicateGuard`, `.guardsNeedHolds`.
    static func guards(
        asked: [RampGuard], steps: Int, goals: [StoredGoal], publishes: Bool, in path: EnvironmentPath
    ) throws -> [RampGuard] {
        guard !asked.isEmpty else { return [] }
        guard steps >= 2 else { throw RampError.guardsNeedHolds }
        var watched = Set<String>()
        for guardrail in asked {
            let key =
                switch guardrail {
                case .goal(let name, _, _): "goal " + name
                case .minimumUsers: "min-users"
                default: guardrail.description
                }
            guard watched.insert(key).inserted else { throw RampError.duplicateGuard(guardrail.description) }
            if case .goal(let name, let threshold, let inPoints) = guardrail {
                guard let goal = goals.first(where: { $0.goal.name == name })?.goal else {
                    throw RampError.unknownGoal(path, name: name, existing: goals.map(\.goal.name))
                }
                // The sign says which side is bad: it must be the goal's.
                if (goal.better == .lower) != (threshold > 0) {
                    let turned = RampGuard.goal(name, threshold: -threshold, inPoints: inPoints).description
                    throw RampError.invalidGuard(
                        guardrail.description,
                        reason: goal.better == .lower
                            ? "lower is better for \(name), so its threshold is a rise, with +: \(turned)"
                            : "higher is better for \(name), so its threshold is a fall, with -: \(turned)")
                }
            }
        }
        var kept = asked
        if !watched.contains("sample-ratio") { kept.append(.sampleRatio) }
        if !watched.contains("min-users") { kept.append(.minimumUsers(RampGuard.defaultMinimumUsers)) }
        if !watched.contains("traffic"), !publishes { kept.append(.traffic) }
        return kept
    }

    /// The verdict of a ramp's guards on its holding step.
    struct GuardJudgement {
        /// Each guard's look, by its index among the ramp's guards.
        var looks: [(index: Int, look: GuardLook)]
        /// The step whose hold was judged.
        var step: Int

        var failed: [GuardLook] { looks.map(\.look).filter { $0.verdict == .fail } }
        var waiting: [GuardLook] { looks.map(\.look).filter { $0.verdict == .wait } }

        /// Rolls back when a failed guardrail goal says so; pauses for any other failure.
        func rollsBack(_ ramp: RampRow) -> Bool {
            ramp.onFailure == .rollback
                && looks.contains { ramp.guards[$0.index].isGoal && $0.look.verdict == .fail }
        }
    }

    /// The guards' looks at the ramp's holding step (the last applied), from the readout of the
    /// test's latest epoch with the variation the growing one takes users from as the control:
    /// every guard at the end of the hold, the goal guards only before it. Goal guards and the
    /// evidence compare the users the split placed in the epoch: those a step moved in have been
    /// in the app longer than the source's new users, and would look worse for it. Records each look.
    static func judgeGuards(
        _ db: Transaction, _ ramp: inout RampRow, atHoldEnd: Bool, now: Date
    ) throws -> GuardJudgement {
        let step = ramp.nextStep - 1
        let scope = try db.environments.scope(of: ramp.path)
        let goals = try db.experiments.goals(in: scope)
        let growing = ramp.variation
        let epoch = try Experiments.latestEpochResults(
            db, scope: scope, featureID: ramp.featureID, goals: goals, now: now
        ) { variations, shares in
            source(of: growing, variations: variations, shares: shares)
        }
        let goalGuards = ramp.guards.filter(\.isGoal).count
        let alpha = RampGuard.alpha(steps: ramp.steps.count, goalGuards: goalGuards)
        // What clients fetched of the step's revision and later ones: traffic that sends no events.
        let fetches =
            atHoldEnd && ramp.guards.contains(.traffic)
            ? try db.fetchCounts.counts(
                environmentID: ramp.environmentID,
                revisions: (try db.ramps.steps(of: ramp.id).last?.revision ?? 0)..<Int.max
            ).total : 0
        var looks: [(Int, GuardLook)] = []
        for (index, guardrail) in ramp.guards.enumerated() where atHoldEnd || guardrail.isGoal {
            looks.append((index, look(guardrail, at: epoch, growing: growing, alpha: alpha, fetches: fetches)))
        }
        for (index, look) in looks {
            try db.ramps.recordLook(look, of: ramp.id, step: step, guardIndex: index, at: now)
        }
        ramp.lookedAt = now
        return GuardJudgement(looks: looks, step: step)
    }

    /// One guard's look at the epoch (`nil`: the test has none yet, so nothing to judge: wait).
    private static func look(
        _ guardrail: RampGuard, at epoch: EpochResults?, growing: String, alpha: Double, fetches: Int
    ) -> GuardLook {
        guard let epoch, let growingArm = epoch.arms.first(where: { $0.variation == growing }) else {
            return GuardLook(
                verdict: .wait, figures: GuardFigures(), reason: "\(guardrail): the step has no readout yet")
        }
        switch guardrail {
        case .goal(let name, let threshold, _):
            guard let goal = epoch.goals.first(where: { $0.goal.name == name }),
                let treatment = goal.variations.first(where: { $0.variation == growing }),
                let control = goal.variations.first(where: { $0.variation == epoch.control }),
                epoch.control != growing
            else {
                return GuardLook(
                    verdict: .wait, figures: GuardFigures(threshold: threshold, alpha: alpha),
                    reason: "\(name): nothing to compare \(growing) with yet")
            }
            let scale: MetricScale = goal.goal.kind == .conversion ? .proportion : .mean
            return GuardLook.goal(
                name, growing: treatment.splitTotals, source: control.splitTotals,
                events: [treatment.splitEvents, control.splitEvents], scale: scale, threshold: threshold, alpha: alpha)
        case .sampleRatio:
            return GuardLook.sampleRatio(observed: epoch.arms.map(\.splitUsers), weights: epoch.shares)
        case .traffic:
            let events = epoch.goals.reduce(0) { sum, goal in sum + goal.variations.reduce(0) { $0 + $1.events } }
            return GuardLook.traffic(users: epoch.arms.reduce(0) { $0 + $1.users }, events: events, fetches: fetches)
        case .minimumUsers(let minimum):
            return GuardLook.evidence(users: growingArm.splitUsers, minimum: minimum, variation: growing)
        }
    }

    /// The variation `growing` takes users from in an epoch: its nearest neighbour in the order
    /// that still has a share (`nil` when none has: the test is rolled out).
    static func source(of growing: String, variations: [String], shares: [Double]) -> String? {
        guard let index = variations.firstIndex(of: growing) else { return nil }
        let others =
            index == 0 ? Array(variations.indices.dropFirst()) : Array(variations.indices.dropLast().reversed())
        return others.first { shares[$0] > 0 }.map { variations[$0] }
    }
}

extension RampGuard {
    /// Whether it watches a guardrail goal (whose failure does the ramp's failure action).
    var isGoal: Bool {
        if case .goal = self { return true }
        return false
    }
}
