import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A test's readout: per epoch, the split and its sample-ratio check, then per goal a table of
/// each variation against the control and a chart of the difference over time. The same store
/// operation as `flagpole results`.
extension Dashboard {
    func registerResults(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)

        reader.get("tenants/:tenant/:env/features/:feature/results", use: resultsPage)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/features/{feature}/results
    @Sendable func resultsPage(_: Request, context: DashboardEnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        let name = try context.feature()
        let results = try await store.results(of: name, in: path)
        let page = ResultsPage(
            chrome: try await chrome(context, at: .overview), results: results,
            featureURL: EnvironmentURLs(path).feature(name))
        return .html(templates.render(page, as: "results"))
    }
}

struct ResultsPage: Sendable {
    struct Epoch: Sendable {
        var number: Int
        var revision: Int
        var startedAt: String
        var analysis: String
        var split: String
        var sampleRatio: String
        var isMismatch: Bool
        var excluded: String?
        var goals: [GoalTable]
    }

    struct GoalTable: Sendable {
        var name: String
        var kind: String
        var better: String
        var isTooFew: Bool
        var meanHeader: String
        var rows: [Row]
        var chart: ResultsChart?
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

    struct Pooled: Sendable {
        var goal: String
        var epochs: String
        var lines: [String]
    }

    var chrome: Chrome
    var name: String
    var featureURL: String
    var minimumUsers: Int
    var epochs: [Epoch]
    var hasEpochs: Bool
    var pooled: [Pooled]

    init(chrome: Chrome, results: ExperimentResults, featureURL: String) {
        self.chrome = chrome
        name = results.feature
        self.featureURL = featureURL
        minimumUsers = FeatureStore.minimumUsers
        epochs = results.epochs.reversed().map { Self.epoch($0) }
        hasEpochs = !epochs.isEmpty
        pooled = results.pooled.map { pooled in
            Pooled(
                goal: pooled.goal, epochs: pooled.epochs.map(String.init).joined(separator: ", "),
                lines: pooled.variations.map { variation, estimate in
                    "\(variation): \(ResultsFormat.signed(estimate.difference)) \(ResultsFormat.interval(estimate.interval)), p = \(ResultsFormat.pValue(estimate.pValue))"
                })
        }
    }

    private static func epoch(_ epoch: EpochResults) -> Epoch {
        let excluded = epoch.arms.reduce(0) { $0 + $1.excludedUsers }
        return Epoch(
            number: epoch.number, revision: epoch.revision, startedAt: epoch.startedAt.iso8601,
            analysis: epoch.analysis == .exposure
                ? "Users count from their first exposure."
                : "No exposure reported: users count from their assignment (intention to treat).",
            split: zip(epoch.arms, epoch.shares).map {
                "\($0.variation) \($0.splitUsers.grouped) (\(ResultsFormat.number($1)) %)"
            }.joined(separator: ", "),
            sampleRatio: epoch.sampleRatio.map {
                "χ² = \(ResultsFormat.number($0.statistic)), p = \(ResultsFormat.pValue($0.pValue))"
            } ?? "not enough users to check",
            isMismatch: epoch.sampleRatioMismatch,
            excluded: excluded > 0 ? "\(excluded.grouped) seen in two variations, left out." : nil,
            goals: epoch.goals.map { goal in
                GoalTable(
                    name: goal.goal.name, kind: goal.goal.kind.rawValue, better: goal.goal.better.rawValue,
                    isTooFew: goal.tooFewUsers, meanHeader: goal.goal.kind == .conversion ? "Rate" : "Mean per user",
                    rows: goal.variations.map { row(for: $0, control: epoch.control) },
                    chart: ResultsChart(goal, variations: epoch.variations))
            })
    }

    private static func row(for variation: VariationResult, control: String) -> Row {
        let comparison = variation.comparison
        return Row(
            variation: variation.variation, isControl: variation.variation == control,
            users: variation.users.grouped, events: variation.events.grouped,
            mean: ResultsFormat.number(variation.mean),
            difference: comparison.map { ResultsFormat.signed($0.difference) } ?? "",
            interval: comparison.map { ResultsFormat.interval($0.interval) } ?? "",
            relative: comparison?.relativeDifference.map { ResultsFormat.signed($0 * 100) + " %" } ?? "",
            relativeInterval: comparison.map { ResultsFormat.interval($0.relativeInterval, scale: 100, unit: " %") }
                ?? "",
            pValue: comparison.map { ResultsFormat.pValue($0.pValue) } ?? "",
            adjusted: comparison == nil ? "" : ResultsFormat.pValue(variation.adjustedPValue),
            sequential: comparison.map { ResultsFormat.interval($0.sequentialInterval) } ?? "",
            chance: comparison.map { ResultsFormat.number($0.chanceToBeatControl * 100) + " %" } ?? "")
    }
}
