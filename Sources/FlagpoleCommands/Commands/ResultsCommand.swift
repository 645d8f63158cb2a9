import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole results FEATURE`: a test's readout.
struct ResultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "results",
        abstract: "A test's readout: each variation against the control, per epoch and goal.",
        discussion: """
            Each revision that changed the test's variations, biases, rules or segments starts an epoch; users who \
            joined in different epochs are different samples, so each epoch has its own readout and epochs with the \
            same variations are pooled by inverse-variance weighting. Intervals are 95 %: the fixed one, for a \
            test read once at its planned end, and the always-valid one, which stays valid however often you look. \
            docs/RESULTS.md says how each figure is computed.
            """)

    @Argument(help: "The test.")
    var feature: String

    @Option(help: ArgumentHelp("Only this goal.", valueName: "name"))
    var goal: String?

    @Option(help: ArgumentHelp("Only this epoch (1 is the first).", valueName: "number"))
    var epoch: Int?

    @Option(
        help: ArgumentHelp(
            "The variation the others are compared with this time (else the test's control: --set-control, or Disabled in an on/off test, or the first variation).",
            valueName: "name"))
    var control: String?

    @Option(
        help: ArgumentHelp(
            "Name the test's control for good: every later readout (here, the API, the dashboard) compares with it unless told another. Changes no user's group and makes no revision.",
            valueName: "name"))
    var setControl: String?

    @Flag(help: "Go back to the default control (Disabled in an on/off test, else the first variation).")
    var clearControl = false

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if setControl != nil && clearControl {
            throw ValidationError("--set-control and --clear-control can't go together: pick one.")
        }
    }

    func run() async throws {
        let store = try await database.openStore()
        let path = try environment.path()
        if setControl != nil || clearControl {
            try await store.experiments.setControl(
                of: feature, to: setControl, in: path, actor: Invocation.current.actor)
        }
        let results = try await store.experiments.results(
            of: feature, in: path, goal: goal, epoch: epoch, control: control)
        if output.json {
            Console.json(results.jsonValue)
            return
        }
        Console.out(ResultsText.render(results))
    }
}

/// A readout in words and tables.
enum ResultsText {
    static func render(_ results: ExperimentResults) -> String {
        var lines: [String] = []
        if results.epochs.isEmpty {
            return "\"\(results.feature)\" in \(results.path) has no epoch yet: it starts with the next revision."
        }
        if let named = results.namedControl {
            lines.append("Control: \(named), named for this test (--clear-control goes back to the default).")
        }
        for epoch in results.epochs {
            lines.append(
                "\"\(results.feature)\" in \(results.path), epoch \(epoch.number) (from revision \(epoch.revision), \(epoch.startedAt.iso8601)): "
                    + (epoch.analysis == .exposure
                        ? "users count from their first exposure."
                        : "no exposure reported, so users count from their assignment (intention to treat)."))
            let split = zip(epoch.arms, epoch.shares).map { "\($0.variation) \($0.splitUsers) (\(format($1))%)" }
            lines.append("  Split: \(split.joined(separator: ", "))" + srm(epoch))
            let excluded = epoch.arms.reduce(0) { $0 + $1.excludedUsers }
            if excluded > 0 {
                lines.append("  \(excluded) user\(excluded == 1 ? "" : "s") seen in two variations left out.")
            }
            if epoch.sampleRatioMismatch {
                lines.append(
                    "  !! SAMPLE RATIO MISMATCH: users did not split as the biases say. Nothing below can be trusted until the cause is found."
                )
            }
            for goal in epoch.goals {
                lines.append("")
                lines.append(
                    "  \(goal.goal.name) (\(goal.goal.kind.rawValue), \(goal.goal.better.rawValue) is better)"
                        + (goal.tooFewUsers
                            ? ": TOO FEW USERS to conclude anything (fewer than \(Experiments.minimumUsers) in a variation)."
                            : ""))
                var table = TextTable(
                    "VARIATION", "USERS", "EVENTS", goal.goal.kind == .conversion ? "RATE" : "MEAN", "DIFFERENCE",
                    "95% CI", "RELATIVE", "95% CI", "P", "P (HOLM)", "ALWAYS-VALID 95% CI", "CHANCE TO BEAT")
                for variation in goal.variations {
                    let name =
                        variation.variation == epoch.control ? "\(variation.variation) (control)" : variation.variation
                    if let comparison = variation.comparison {
                        table.append(
                            name, "\(variation.users)", "\(variation.events)", format(variation.mean),
                            signed(comparison.difference), interval(comparison.interval),
                            comparison.relativeDifference.map { signed($0 * 100) + "%" } ?? "–",
                            comparison.relativeInterval.map { interval($0, scale: 100) + "%" } ?? "–",
                            pValue(comparison.pValue), variation.adjustedPValue.map(pValue) ?? "–",
                            interval(comparison.sequentialInterval), format(comparison.chanceToBeatControl * 100) + "%")
                    } else {
                        table.append(
                            name, "\(variation.users)", "\(variation.events)", format(variation.mean), "", "", "", "",
                            "", "", "", "")
                    }
                }
                lines.append(table.text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
            }
            lines.append("")
        }
        for pooled in results.pooled {
            lines.append(
                "Pooled over epochs \(pooled.epochs.map(String.init).joined(separator: ", ")) (inverse-variance weights, same variations), \(pooled.goal):"
            )
            for (variation, estimate) in pooled.variations {
                lines.append(
                    "  \(variation): \(signed(estimate.difference)) \(interval(estimate.interval)), p = \(pValue(estimate.pValue))"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func srm(_ epoch: EpochResults) -> String {
        guard let check = epoch.sampleRatio else { return "" }
        return "; sample ratio χ² = \(format(check.statistic)), p = \(pValue(check.pValue))"
    }

    private static func format(_ value: Double) -> String { ResultsFormat.number(value) }
    private static func signed(_ value: Double) -> String { ResultsFormat.signed(value) }
    private static func pValue(_ value: Double) -> String { ResultsFormat.pValue(value) }

    private static func interval(_ interval: Interval, scale: Double = 1) -> String {
        ResultsFormat.interval(interval, scale: scale)
    }
}
