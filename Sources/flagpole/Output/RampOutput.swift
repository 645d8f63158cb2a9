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
            "Ramp \(ramp.id == 0 ? "(not created)" : String(ramp.id)) of \(ramp.feature) in \(ramp.path): \(ramp.variation) in \(ramp.steps.count) steps, each held \(ramp.hold.isCalendar ? "until \(ramp.hold)" : ramp.hold.description); created by \(ramp.createdBy)."
        ]
        var table = TextTable("STEP", "SHARE", "STATE")
        let due = Dictionary(uniqueKeysWithValues: report.plans.filter { $0.step >= 0 }.map { ($0.step, $0.dueAt) })
        for (index, share) in ramp.steps.enumerated() {
            table.append(
                String(index + 1), Percent.format(share), Self.state(of: index, in: ramp, due: due[index] ?? nil))
        }
        lines.append(table.text)
        for plan in report.plans {
            lines.append(
                plan.step < 0
                    ? "Rolling back:" : "Step \(plan.step + 1), \(ramp.variation) \(Percent.format(plan.share)):")
            lines += EditReport.lines(of: plan.plan)
        }
        lines.append(report.summary)
        return lines
    }

    private static func state(of index: Int, in ramp: Ramp, due: Date?) -> String {
        if let step = ramp.applied.first(where: { $0.step == index }) {
            let folded =
                step.folded.isEmpty ? "" : ", folding \(step.folded.map { String($0 + 1) }.joined(separator: ", "))"
            return "applied \(step.appliedAt.iso8601) as revision \(step.revision) by \(step.appliedBy)\(folded)"
        }
        if ramp.applied.contains(where: { $0.folded.contains(index) }) { return "folded" }
        if let due { return "due \(due.iso8601)" }
        return ramp.state.isActive ? "waits" : "–"
    }

    func print(json: Bool) {
        if json {
            Console.json(report.jsonValue)
        } else {
            Console.out(lines.joined(separator: "\n"))
        }
    }
}
