import FlagpoleCore
import FlagpoleStore
import Foundation

/// A ramp command's report: what happened, the steps (applied, due, to come), and the movement
/// plan of each step applied now or still to come.
struct RampOutput {
    let report: RampReport

    var lines: [String] {
        let ramp = report.ramp
        var lines = [
            "Ramp \(ramp.id == 0 ? "(not created)" : String(ramp.id)) of \(ramp.feature) in \(ramp.path): \(ramp.variation) in \(ramp.steps.count) steps, each held \(ramp.hold.phrase); created by \(ramp.createdBy)."
        ]
        var table = TextTable("STEP", "SHARE", "STATE")
        for (index, status) in report.stepStatuses.enumerated() {
            table.append(String(index + 1), Percent.format(ramp.steps[index]), Self.text(of: status))
        }
        lines.append(table.text)
        if !ramp.guards.isEmpty {
            lines.append(
                "Guards: \(ramp.guards.map(\.description).joined(separator: ", ")). \(ramp.failureSentence)"
            )
            for look in ramp.looks {
                lines.append(
                    "  step \(look.step + 1), \(look.verdict.rawValue) after \(look.looks) look\(look.looks == 1 ? "" : "s") (\(look.at.readableUTC)): \(look.reason)"
                )
            }
        }
        for plan in report.plans {
            lines.append(
                plan.step < 0
                    ? "Rolling back:" : "Step \(plan.step + 1), \(ramp.variation) \(Percent.format(plan.share)):")
            lines += EditReport.lines(of: plan.plan)
        }
        lines.append(report.summary)
        return lines
    }

    private static func text(of status: RampStepStatus) -> String {
        switch status {
        case .applied(let step):
            "applied \(step.appliedAt.readableUTC) as revision \(step.revision) by \(step.appliedBy)"
                + (RampStepRecord.folding(step.folded).map { ", " + $0 } ?? "") + "; \(step.fetches.description)"
        case .folded: "folded"
        case .due(let date): "due \(date.readableUTC)"
        case .waiting: "waits"
        case .notApplied: "–"
        }
    }

    func print(json: Bool) {
        if json {
            Console.json(report.jsonValue)
        } else {
            Console.out(lines.joined(separator: "\n"))
        }
    }
}
