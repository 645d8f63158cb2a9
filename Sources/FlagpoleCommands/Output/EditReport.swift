import FlagpoleCore
import FlagpoleStore

/// What a bias change, an enable or disable, a rollout or a rollback does: each test's plan
/// (shares of all users and recorded users moving, pair by pair) and the revision.
struct EditReport {
    let outcome: EditOutcome
    let isDryRun: Bool

    var lines: [String] {
        outcome.plans.flatMap(Self.lines(of:)) + [verdict]
    }

    /// One test's plan: the sizes before and after, who moves pair by pair, and how many.
    static func lines(of plan: RolloutPlan) -> [String] {
        var lines = ["\(plan.feature): \(sizes(plan))"]
        if plan.moves.isEmpty { lines.append("    nobody changes group") }
        var table = TextTable("    FROM", "TO", "SHARE OF ALL USERS", "RECORDED USERS")
        for move in plan.moves {
            table.append("    \(move.from)", move.to, Percent.format(move.share), String(move.recordedUsers))
        }
        if !plan.moves.isEmpty { lines.append(table.text) }
        lines.append(
            "    \(plan.movingUsers) of \(plan.recordedUsers) recorded user\(plan.recordedUsers == 1 ? "" : "s") change group"
                + (plan.movingPlacedByRules > 0
                    ? ", \(plan.movingPlacedByRules) of them placed by a rule (FeatureFlags apps that keep the rule's point leave its group)"
                    : "")
        )
        return lines
    }

    var verdict: String {
        if outcome.isUnchanged { return "Nothing to change: revision \(outcome.revision) already has this content." }
        if isDryRun { return "Dry run: this would be revision \(outcome.revision). Nothing was written." }
        let moved = outcome.plans.reduce(0) { $0 + $1.movingUsers }
        return "Applied as revision \(outcome.revision); \(moved) recorded user\(moved == 1 ? "" : "s") changed group."
    }

    /// `A 10 % → 20 %, B 90 % → 80 %`, or the whole before and after when the variations differ.
    private static func sizes(_ plan: RolloutPlan) -> String {
        let before = plan.before.ranges
        let after = plan.after.ranges
        if before.map(\.name) == after.map(\.name) {
            return zip(before, after).map { "\($0.name) \(Percent.format($0.width)) → \(Percent.format($1.width))" }
                .joined(separator: ", ")
        }
        func list(_ ranges: [VariationRanges.Range]) -> String {
            ranges.map { "\($0.name) \(Percent.format($0.width))" }.joined(separator: ", ")
        }
        return "\(list(before)) → \(list(after))"
    }

    /// Prints the report: JSON on stdout, or the plan on stdout and warnings on stderr.
    func print(json: Bool) {
        if json {
            Console.json(outcome.jsonValue(isDryRun: isDryRun))
            return
        }
        DiagnosticReport(file: "revision \(outcome.revision)", diagnostics: outcome.warnings).printToStandardError()
        Console.out(lines.joined(separator: "\n"))
    }
}
