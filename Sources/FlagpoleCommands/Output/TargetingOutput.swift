import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// How the targeting commands print what a change did.
enum TargetingOutput {
    /// Who moves in one test: followers of rules pair by pair, with examples, then the apps
    /// that keep their group.
    static func text(of plan: TargetingPlan, isDryRun: Bool) -> String {
        let verb = isDryRun ? "would move" : "moved"
        var lines = [
            "\(plan.feature): \(plan.movingUsers) of \(plan.recordedUsers) recorded user\(plan.recordedUsers == 1 ? "" : "s") \(verb) (\(plan.usersWithAttributes) with attributes on record)"
        ]
        for move in plan.moves {
            let examples = move.examples.map(\.rawValue).joined(separator: ", ")
            lines.append("    \(move.from) → \(move.to): \(move.users)  e.g. \(examples)")
        }
        let kept = plan.keptByApps.reduce(0) { $0 + $1.users }
        if kept > 0 {
            lines.append(
                "  \(kept) FeatureFlags app\(kept == 1 ? "" : "s") keep\(kept == 1 ? "s its" : " their") group: the point \(kept == 1 ? "it" : "each") cached decides, not rules (FORMAT §6)"
            )
            for move in plan.keptByApps {
                lines.append("    stay in \(move.from) (rules say \(move.to)): \(move.users)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func report(_ outcome: ConfigsOutcome, isDryRun: Bool, json: Bool, file: String?) {
        if json {
            guard case .object(var object) = outcome.jsonValue(isDryRun: isDryRun) else { return }
            object.append("warnings", .array(outcome.warnings.map(\.jsonValue)))
            Console.json(.object(object))
            return
        }
        ConfigCommand.print(outcome.warnings, file: file ?? "rules")
        if outcome.isUnchanged {
            Console.out("Unchanged: revision \(outcome.revision) already has these.")
            return
        }
        for change in outcome.changes {
            let subject =
                change.segment.map { "segment \"\($0)\"" } ?? change.feature.map { "rules of \"\($0)\"" } ?? "targeting"
            let field = change.segment != nil ? change.field.map { " \($0)" } ?? "" : ""
            Console.out("  \(change.kind.rawValue) \(subject)\(field)")
        }
        for plan in outcome.plans { Console.out(text(of: plan, isDryRun: isDryRun)) }
        Console.out(
            isDryRun
                ? "Would write revision \(outcome.revision) (dry run: nothing written)."
                : "Wrote revision \(outcome.revision).")
    }
}
