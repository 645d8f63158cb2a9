import FlagpoleCore
import FlagpoleStore
import Foundation

/// One epoch with data on the results page: its verdicts first, then how long it ran, how
/// users split, and a table and chart per goal.
struct ResultsEpoch: Sendable {
    struct GoalTable: Sendable {
        var name: String
        var kind: String
        var better: String
        var isTooFew: Bool
        var meanHeader: String
        var differenceUnit: String
        var rows: [Row]
        var chart: ResultsChart?
        var forest: ForestChart?
    }

    struct Row: Sendable {
        var variation: String
        var isControl: Bool
        var users: String
        var events: String
        var mean: String
        var difference: String
        var interval: String
        var relative: String
        var relativeInterval: String
        var pValue: String
        var adjusted: String
        var sequential: String
        var chance: String
    }

    var number: Int
    var control: String
    var verdicts: [VerdictLine]
    /// The end of an epoch that a later one followed.
    struct End: Sendable {
        var revision: Int
        var time: ShownTime
    }

    /// "Running for 3 days since revision 4", then its time, its end if any, and its users.
    var ran: String
    var startedAt: ShownTime
    var endedAt: End?
    var users: String
    var analysis: String
    var biases: String
    var split: String
    var sampleRatio: String
    var isMismatch: Bool
    var excluded: String?
    var goals: [GoalTable]
    /// Whether the page offers to roll out this epoch's winner (the newest epoch with data, to editors).
    var canRollOut = false

    /// `epoch`, which ended when `next` began (still running when `next` is `nil`, at `now`).
    init(_ epoch: EpochResults, next: EpochResults?, now: Date) {
        number = epoch.number
        control = epoch.control
        let users = epoch.arms.reduce(0) { $0 + $1.users }
        startedAt = ShownTime(epoch.startedAt)
        endedAt = next.map { End(revision: $0.revision, time: ShownTime($0.startedAt)) }
        let duration = ShownTime.duration(from: epoch.startedAt, to: next?.startedAt ?? now)
        ran =
            next == nil
            ? "Running for \(duration) since revision \(epoch.revision)"
            : "Ran for \(duration) from revision \(epoch.revision)"
        self.users = "\(users.grouped) user\(users == 1 ? "" : "s")"
        analysis =
            epoch.analysis == .exposure
            ? "Users count from their first exposure."
            : "No exposure reported: users count from their assignment (intention to treat)."
        biases = zip(epoch.variations, epoch.shares).map { "\($0) \(Percent.format($1))" }.joined(separator: ", ")
        let splitUsers = epoch.arms.reduce(0) { $0 + $1.splitUsers }
        split =
            splitUsers == 0
            ? "none: its users were moved in by the change, so there is no split to check"
            : epoch.arms.map {
                "\($0.variation) \($0.splitUsers.grouped) (\(Percent.format(Double($0.splitUsers) / Double(splitUsers) * 100, digits: 1)))"
            }.joined(separator: ", ")
        sampleRatio =
            epoch.sampleRatio.map {
                "χ² = \(ResultsFormat.number($0.statistic)), p = \(ResultsFormat.pValue($0.pValue))"
            } ?? "not enough users to check"
        isMismatch = epoch.sampleRatioMismatch
        let excludedUsers = epoch.arms.reduce(0) { $0 + $1.excludedUsers }
        excluded = excludedUsers > 0 ? "\(excludedUsers.grouped) seen in two variations, left out." : nil
        let verdicts = epoch.goals.map { Self.verdict($0, of: epoch) }
        // A mismatch stops every goal alike: said once.
        self.verdicts = epoch.sampleRatioMismatch ? Array(verdicts.prefix(1)) : verdicts
        goals = epoch.goals.map { Self.table($0, of: epoch) }
    }

    private static func verdict(_ goal: GoalResults, of epoch: EpochResults) -> VerdictLine {
        let arms = goal.variations.map {
            Verdict.Arm(
                variation: $0.variation, users: $0.users, variance: $0.variance, comparison: $0.comparison,
                adjustedPValue: $0.adjustedPValue)
        }
        let verdict = Verdict.decide(
            goal: goal.goal, control: epoch.control, arms: arms, sampleRatioMismatch: epoch.sampleRatioMismatch,
            minimumUsers: Experiments.minimumUsers)
        return VerdictLine(verdict, goal: goal.goal, control: epoch.control)
    }

    /// Fewer than this many days of history: the chart shows where each difference stands now.
    static let daysForTimeline = 3

    private static func table(_ goal: GoalResults, of epoch: EpochResults) -> GoalTable {
        let figures = ResultsFigures(goal.goal)
        let days = Set(goal.history.map(\.day)).count
        return GoalTable(
            name: goal.goal.name, kind: goal.goal.kind.rawValue, better: goal.goal.better.rawValue,
            isTooFew: goal.tooFewUsers, meanHeader: figures.isRate ? "Rate" : "Mean per user",
            differenceUnit: figures.isRate ? "percentage points" : "difference of means",
            rows: goal.variations.map { row(for: $0, control: epoch.control, figures: figures) },
            chart: days >= daysForTimeline ? ResultsChart(goal, variations: epoch.variations) : nil,
            forest: days < daysForTimeline
                ? ForestChart(goal, variations: epoch.variations, control: epoch.control) : nil)
    }

    private static func row(for variation: VariationResult, control: String, figures: ResultsFigures) -> Row {
        let comparison = variation.comparison
        return Row(
            variation: variation.variation, isControl: variation.variation == control,
            users: variation.users.grouped, events: variation.events.grouped, mean: figures.value(variation.mean),
            difference: comparison.map { figures.difference($0.difference) } ?? "",
            interval: comparison.map { figures.interval($0.interval) } ?? "",
            relative: comparison?.relativeDifference.map(ResultsFigures.relative) ?? "",
            relativeInterval: comparison?.relativeInterval.map(ResultsFigures.relativeInterval) ?? "",
            pValue: comparison.map { ResultsFormat.pValue($0.pValue) } ?? "",
            adjusted: comparison == nil ? "" : ResultsFormat.pValue(variation.adjustedPValue),
            sequential: comparison.map { figures.interval($0.sequentialInterval) } ?? "",
            chance: comparison.map { Percent.format($0.chanceToBeatControl * 100, digits: 1) } ?? "")
    }
}
