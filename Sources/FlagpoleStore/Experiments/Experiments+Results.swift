import FlagpoleCore
import Foundation

/// A test's readout: per epoch and goal, each variation against the control (docs/RESULTS.md).
public struct ExperimentResults: Sendable {
    public var path: EnvironmentPath
    public var feature: String
    /// The feature is no longer a test (an on/off test rolled out becomes a plain flag): these
    /// are the figures of the test it was, which stopped changing when it ended.
    public var isFinal: Bool
    /// The control the team named for the test (`setControl`), which a readout uses unless asked
    /// for another; `nil`: the default one (`Disabled` in an on/off test, else the first variation).
    public var namedControl: String?
    public var epochs: [EpochResults]
    /// Per goal, epochs with the same variations pooled by inverse-variance weighting.
    public var pooled: [PooledResults]
}

public struct EpochResults: Sendable {
    /// Whether users count from the app's first exposure or, when the apps report none, from
    /// their assignment (intention to treat).
    public enum Analysis: String, Sendable {
        case exposure
        case intentionToTreat = "intention-to-treat"
    }

    public var number: Int
    public var revision: Int
    public var startedAt: Date
    public var variations: [String]
    /// Each variation's share (0–100) of the split in the epoch.
    public var shares: [Double]
    public var control: String
    public var analysis: Analysis
    public var arms: [ArmCounts]
    /// χ² of users first assigned by the split in the epoch against `shares`.
    public var sampleRatio: SampleRatioCheck?
    /// p < 0.001: the split isn't what the biases say, and no figure of the epoch can be trusted.
    public var sampleRatioMismatch: Bool { (sampleRatio?.pValue ?? 1) < 0.001 }
    public var goals: [GoalResults]
}

public struct ArmCounts: Sendable {
    public var variation: String
    /// Users who joined the variation in the epoch, first assigned or moved in.
    public var users: Int
    /// Of them, first assigned by the split: what the sample-ratio check counts.
    public var splitUsers: Int
    public var exposedUsers: Int
    /// Seen in this and another variation in the epoch: left out.
    public var excludedUsers: Int
}

public struct GoalResults: Sendable {
    public var goal: Goal
    public var variations: [VariationResult]
    /// Fewer than `minimumUsers` in some variation: nothing can be concluded yet.
    public var tooFewUsers: Bool
    /// The difference against the control at the end of each day, per variation.
    public var history: [DayPoint]
}

public struct VariationResult: Sendable {
    public var variation: String
    public var users: Int
    public var events: Int
    /// Conversion rate, or mean total per user.
    public var mean: Double
    /// Of a user's total (ddof 1; p(1 − p) for a rate).
    public var variance: Double
    /// Against the control; `nil` for the control and when either has fewer than 2 users.
    public var comparison: Comparison?
    /// Holm's correction across the variations of the test.
    public var adjustedPValue: Double?
    /// The totals of the users the split placed in the epoch alone (not those a bias change
    /// moved in, who have been in the app longer), and their events: what a ramp's guards compare.
    public var splitTotals: ArmTotals
    public var splitEvents: Int
}

public struct DayPoint: Sendable {
    public var day: Date
    public var variation: String
    public var difference: Double
    public var interval: Interval
}

public struct PooledResults: Sendable {
    public var goal: String
    public var epochs: [Int]
    public var variations: [(variation: String, estimate: PooledEstimate)]
}

extension Experiments {
    /// Users each variation needs before a readout says anything but "too few users".
    public static let minimumUsers = 100

    /// Whether `feature` has results: it is a test, or was one with an epoch (its final results).
    public func hasResults(of feature: String, in path: EnvironmentPath) async throws -> Bool {
        try await read { db in
            let stored = try db.features.stored(named: feature, in: try db.environments.scope(of: path))
            return try stored.kind.isTest || db.experiments.hasEpochs(featureID: stored.id)
        }
    }

    /// The readout of a test: every epoch (or `epoch`), every goal (or `goal`), each variation
    /// against `control` (unless given, the test's named control, else
    /// `ExperimentEpoch.defaultControl`). Reads a few rows per variation, after catching up with
    /// what changed since events last arrived.
    ///
    /// - throws: `DocumentError.featureNotFound`, `ResultsError`, `TenancyError`.
    public func results(
        of feature: String, in path: EnvironmentPath, goal goalName: String? = nil, epoch: Int? = nil,
        control: String? = nil
    ) async throws -> ExperimentResults {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            let features = try db.features.storedFeatures(in: scope)
            guard let stored = features.first(where: { $0.feature.name == feature }) else {
                throw DocumentError.featureNotFound(path, name: feature)
            }
            var ledger = try ExperimentLedger(db: db, scope: scope)
            try ledger.save(at: Date())
            // A test rolled out into a plain flag keeps its results, frozen: the evidence of a decision.
            // The epoch that ended a test has no readout.
            let epochs = (ledger.epochs[stored.id] ?? []).filter { !$0.hasEnded }
            guard stored.kind.isTest || !epochs.isEmpty else {
                throw ResultsError.notATest(path, feature: feature)
            }
            var goals = try db.experiments.goals(in: scope)
            if let goalName {
                guard let found = goals.first(where: { $0.goal.name == goalName }) else {
                    throw ResultsError.goalNotFound(path, name: goalName, existing: goals.map(\.goal.name))
                }
                goals = [found]
            }
            var chosen = epochs
            if let epoch {
                // By number: an ended test's closing epoch has one, and no readout.
                guard let found = epochs.first(where: { $0.number == Int64(epoch) }) else {
                    throw ResultsError.epochNotFound(path, feature: feature, epoch: epoch, epochs: epochs.count)
                }
                chosen = [found]
            }
            let arms = try db.experiments.arms(featureID: stored.id)
            let totals = try db.experiments.totals(featureID: stored.id)
            let named = try db.experiments.control(featureID: stored.id)
            let results = try chosen.map { epoch in
                try ReadoutBuilder(
                    epoch: epoch, control: control ?? named, arms: arms.filter { $0.epoch == epoch.number },
                    totals: totals.filter { $0.epoch == epoch.number }
                ).results(goals: goals) { goalID in
                    try db.experiments.days(featureID: stored.id, epoch: epoch.number, goalID: goalID)
                }
            }
            return ExperimentResults(
                path: path, feature: feature, isFinal: !stored.kind.isTest, namedControl: named, epochs: results,
                pooled: ReadoutBuilder.pooled(results))
        }
    }
}

extension Experiments {
    /// Names the variation `feature`'s readouts compare with unless asked for another (`nil`:
    /// back to the default). It changes how results read, not what any user gets, so it makes no
    /// revision and needs no plan.
    ///
    /// - throws: `DocumentError.featureNotFound`, `ResultsError.notATest`,
    ///   `ResultsError.controlNotAVariation`, `TenancyError`.
    public func setControl(
        of feature: String, to variation: String?, in path: EnvironmentPath, actor: String, now: Date = Date()
    ) async throws {
        try await write { db in
            let stored = try db.features.stored(named: feature, in: try db.environments.scope(of: path))
            guard stored.kind.isTest else { throw ResultsError.notATest(path, feature: feature) }
            let variations = stored.feature.effectiveVariations
            if let variation, !variations.contains(variation) {
                throw ResultsError.controlNotAVariation(
                    path, feature: feature, control: variation, variations: variations)
            }
            try db.experiments.setControl(variation, featureID: stored.id, by: actor, at: now)
        }
    }
}

extension Experiments {
    /// The readout of the test's latest epoch, after catching up with the store, inside a write
    /// transaction: what a ramp's guards judge. `control(variations, shares)` picks the control
    /// from the epoch's variations and shares. `nil` before the test has an epoch; the history of
    /// days is left out.
    static func latestEpochResults(
        _ db: Transaction, scope: EnvironmentScope, featureID: Int64, goals: [StoredGoal], now: Date,
        control: ([String], [Double]) -> String?
    ) throws -> EpochResults? {
        var ledger = try ExperimentLedger(db: db, scope: scope)
        try ledger.save(at: now)
        guard let epoch = ledger.epochs[featureID]?.last, !epoch.hasEnded else { return nil }
        return try ReadoutBuilder(
            epoch: epoch, control: control(epoch.variations, epoch.shares),
            arms: try db.experiments.arms(featureID: featureID).filter { $0.epoch == epoch.number },
            totals: try db.experiments.totals(featureID: featureID).filter { $0.epoch == epoch.number }
        ).results(goals: goals) { _ in [] }
    }
}

/// Turns an epoch's rows into its readout.
private struct ReadoutBuilder {
    let epoch: ExperimentEpoch
    let control: String
    let arms: [String: ArmRecord]
    let totals: [TotalRecord]
    let analysis: EpochResults.Analysis

    init(epoch: ExperimentEpoch, control: String?, arms: [ArmRecord], totals: [TotalRecord]) {
        self.epoch = epoch
        self.control =
            control.flatMap { name in epoch.variations.contains(name) ? name : nil } ?? epoch.defaultControl
        self.arms = Dictionary(arms.map { ($0.variation, $0) }, uniquingKeysWith: { a, _ in a })
        self.totals = totals
        analysis = arms.contains { $0.exposedUsers > 0 } ? .exposure : .intentionToTreat
    }

    func results(goals: [StoredGoal], days: (Int64) throws -> [DayRecord]) throws -> EpochResults {
        let counts = epoch.variations.map { variation in
            let arm = arms[variation]
            return ArmCounts(
                variation: variation, users: arm?.users ?? 0, splitUsers: arm?.splitUsers ?? 0,
                exposedUsers: arm?.exposedUsers ?? 0, excludedUsers: arm?.excludedUsers ?? 0)
        }
        return EpochResults(
            number: Int(epoch.number), revision: epoch.revision,
            startedAt: Date(unixMilliseconds: epoch.startedAt), variations: epoch.variations, shares: epoch.shares,
            control: control, analysis: analysis, arms: counts,
            sampleRatio: SampleRatioCheck.test(observed: counts.map(\.splitUsers), weights: epoch.shares),
            goals: try goals.map { goalResults($0, days: try days($0.id)) })
    }

    private func goalResults(_ stored: StoredGoal, days: [DayRecord]) -> GoalResults {
        let goal = stored.goal
        let scale: MetricScale = goal.kind == .conversion ? .proportion : .mean
        let armTotals = Dictionary(
            uniqueKeysWithValues: epoch.variations.map { variation in
                let total = totals.first { $0.goalID == stored.id && $0.variation == variation }
                let sums = analysis == .exposure ? total?.exposed : total?.itt
                let users = analysis == .exposure ? arms[variation]?.exposedUsers : arms[variation]?.users
                return (
                    variation,
                    (
                        ArmTotals(users: users ?? 0, sum: sums?.sum ?? 0, sumOfSquares: sums?.sumOfSquares ?? 0),
                        sums?.events ?? 0
                    )
                )
            })
        let controlTotals = armTotals[control]?.0 ?? ArmTotals(users: 0, sum: 0, sumOfSquares: 0)
        var variations = epoch.variations.map { variation in
            let (arm, events) = armTotals[variation]!
            let split = totals.first { $0.goalID == stored.id && $0.variation == variation }?.split ?? SumDelta()
            return VariationResult(
                variation: variation, users: arm.users, events: events, mean: arm.users > 0 ? arm.mean : 0,
                variance: scale == .proportion ? arm.mean * (1 - arm.mean) : arm.sampleVariance,
                comparison: variation == control
                    ? nil
                    : Comparison.compare(
                        treatment: arm, control: controlTotals, scale: scale, higherIsBetter: goal.better == .higher),
                adjustedPValue: nil,
                splitTotals: ArmTotals(
                    users: arms[variation]?.splitUsers ?? 0, sum: split.sum, sumOfSquares: split.sumOfSquares),
                splitEvents: split.events)
        }
        let compared = variations.indices.filter { variations[$0].comparison != nil }
        for (index, adjusted) in zip(
            compared, MultipleComparisons.holm(compared.map { variations[$0].comparison!.pValue }))
        {
            variations[index].adjustedPValue = adjusted
        }
        return GoalResults(
            goal: goal, variations: variations,
            tooFewUsers: armTotals.values.contains { $0.0.users < Experiments.minimumUsers },
            history: history(days, scale: scale, goal: goal))
    }

    /// Each day's difference of each variation against the control, from that day's totals.
    private func history(_ days: [DayRecord], scale: MetricScale, goal: Goal) -> [DayPoint] {
        var points: [DayPoint] = []
        for (day, rows) in Dictionary(grouping: days, by: \.day).sorted(by: { $0.key < $1.key }) {
            func totals(_ variation: String) -> ArmTotals? {
                rows.first { $0.variation == variation }.map { row in
                    analysis == .exposure
                        ? ArmTotals(users: row.exposedUsers, sum: row.exposedSum, sumOfSquares: row.exposedSumOfSquares)
                        : ArmTotals(users: row.users, sum: row.sum, sumOfSquares: row.sumOfSquares)
                }
            }
            guard let control = totals(control) else { continue }
            for variation in epoch.variations where variation != self.control {
                guard let arm = totals(variation),
                    let comparison = Comparison.compare(
                        treatment: arm, control: control, scale: scale, higherIsBetter: goal.better == .higher)
                else { continue }
                points.append(
                    DayPoint(
                        day: Date(timeIntervalSince1970: Double(day) * 86_400), variation: variation,
                        difference: comparison.difference, interval: comparison.interval))
            }
        }
        return points
    }

    /// Per goal, the epochs with the same variations and control (those of the latest that has
    /// figures) pooled by inverse-variance weighting: summed counts could reverse an effect.
    static func pooled(_ epochs: [EpochResults]) -> [PooledResults] {
        guard let latest = epochs.last else { return [] }
        let alike = epochs.filter { $0.variations == latest.variations && $0.control == latest.control }
        guard alike.count > 1 else { return [] }
        return latest.goals.indices.compactMap { goalIndex in
            let goal = latest.goals[goalIndex].goal.name
            var used = Set<Int>()
            let variations = latest.variations.filter { $0 != latest.control }.compactMap {
                variation -> (String, PooledEstimate)? in
                var strata: [(difference: Double, standardError: Double)] = []
                for epoch in alike {
                    guard let result = epoch.goals.first(where: { $0.goal.name == goal }),
                        let comparison = result.variations.first(where: { $0.variation == variation })?.comparison
                    else { continue }
                    strata.append((comparison.difference, comparison.standardError))
                    used.insert(epoch.number)
                }
                guard strata.count > 1 else { return nil }
                return PooledEstimate.inverseVariance(strata).map { (variation, $0) }
            }
            guard !variations.isEmpty else { return nil }
            return PooledResults(goal: goal, epochs: used.sorted(), variations: variations)
        }
    }
}
