import FlagpoleCore
import FlagpoleStore

/// A goal's verdict in plain words, with the figures written as the table writes them, so that
/// every number in the sentence can be found in the table below it.
struct VerdictLine: Sendable {
    /// The verdict's kind, for its style: ship, worse, undecided, stop, few.
    var kind: String
    var goal: String
    var text: String
    /// The variation "Roll out the winner" would roll out.
    var winner: String?

    init(_ verdict: Verdict, goal: Goal, control: String) {
        let figures = ResultsFigures(goal)
        self.goal = goal.name
        winner = verdict.winner
        switch verdict {
        case .sampleRatioMismatch:
            kind = "stop"
            text =
                "Stop: sample ratio mismatch — users did not split as the biases say. Find the cause before reading any figure of this epoch."
        case .tooFewUsers(let fewest, let minimum):
            kind = "few"
            text =
                "Too few users on \(goal.name) to conclude anything yet: the smallest variation has \(fewest.grouped), each needs at least \(minimum.grouped)."
        case .ship(let finding):
            kind = "ship"
            text =
                "Ship \(finding.variation): better on \(goal.name) by \(Self.figures(finding.comparison, figures))."
        case .worse(let findings, let keep):
            kind = "worse"
            let each = findings.map { finding in
                let verb = finding.comparison.difference > 0 ? "raises" : "lowers"
                return "\(finding.variation) \(verb) \(goal.name) by \(Self.figures(finding.comparison, figures))"
            }
            text = "Worse: " + each.joined(separator: "; ") + (keep.map { ". Keep \($0)." } ?? ".")
        case .keepRunning(let moreUsers):
            kind = "undecided"
            text =
                "Not decided yet on \(goal.name): keep running; "
                + (moreUsers.map {
                    "at this rate about \($0.grouped) more users (in \(control) and the variation closest to a decision, at the current split) until the always-valid interval could exclude no difference."
                }
                    ?? "can't estimate how many more users: no difference is observed yet.")
        }
    }

    /// "+4.02 pts (+20.1 %; always-valid 95 % interval +1.2 to +6.8 pts)": what drove the verdict.
    private static func figures(_ comparison: Comparison, _ figures: ResultsFigures) -> String {
        let relative = comparison.relativeDifference.map { ResultsFigures.relative($0) + "; " } ?? ""
        return figures.difference(comparison.difference) + " (" + relative + "always-valid 95 % interval "
            + figures.interval(comparison.sequentialInterval) + ")"
    }
}
