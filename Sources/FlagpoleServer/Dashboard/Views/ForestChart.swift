import FlagpoleCore
import FlagpoleStore

/// Each variation's difference against the control as it stands, one row per variation: the
/// estimate, its 95 % interval and its always-valid interval, and the line of no difference.
/// What a day or two of data can show, where a chart over time would be a dot.
struct ForestChart: Sendable {
    struct Row: Sendable {
        var variation: String
        var color: Int
        var y: String
        var labelY: String
        var x: String
        var lowX: String
        var width: String
        var alwaysLowX: String
        var alwaysWidth: String
        var title: String
    }

    typealias LegendEntry = AssignmentChart.LegendEntry

    var width = 600
    var height: Int
    var zeroX: String
    var plotLeft = 110
    var labelY: Int
    var axisBottom: Int
    var rows: [Row]
    var legend: [LegendEntry]
    var low: String
    var high: String
    var caption: String

    /// The chart of `goal`'s comparisons with `control`, or `nil` when there is none yet.
    init?(_ goal: GoalResults, variations: [String], control: String) {
        let compared = goal.variations.compactMap { result in result.comparison.map { (result.variation, $0) } }
        guard !compared.isEmpty else { return nil }
        let figures = ResultsFigures(goal.goal)
        let scale = figures.isRate ? 100.0 : 1
        let lowest = min(0, compared.map { $0.1.sequentialInterval.low }.min() ?? 0) * scale
        let highest = max(0, compared.map { $0.1.sequentialInterval.high }.max() ?? 0) * scale
        let span = max(highest - lowest, 1e-12)
        let plotRight = Double(width) - 10
        let left = Double(plotLeft)
        let x = { (value: Double) in left + (value * scale - lowest) / span * (plotRight - left) }
        let rowHeight = 36
        height = compared.count * rowHeight + 28
        labelY = height - 4
        axisBottom = height - 18
        let color = { (variation: String) in (variations.firstIndex(of: variation) ?? 0) % Palette.colors }
        rows = compared.enumerated().map { index, item in
            let (variation, comparison) = item
            let y = Double(index * rowHeight + rowHeight / 2 + 4)
            let fixed = comparison.interval
            let always = comparison.sequentialInterval
            return Row(
                variation: variation, color: color(variation), y: Percent.number(y, digits: 1),
                labelY: Percent.number(y + 4, digits: 1), x: Percent.number(x(comparison.difference), digits: 1),
                lowX: Percent.number(x(fixed.low), digits: 1),
                width: Percent.number(max(1, x(fixed.high) - x(fixed.low)), digits: 1),
                alwaysLowX: Percent.number(x(always.low), digits: 1),
                alwaysWidth: Percent.number(max(1, x(always.high) - x(always.low)), digits: 1),
                title: Self.describe(variation, comparison, figures))
        }
        legend = compared.map { LegendEntry(name: $0.0, color: color($0.0)) }
        zeroX = Percent.number(x(0), digits: 1)
        low = ResultsFigures.signed(lowest) + (figures.isRate ? " pts" : "")
        high = ResultsFigures.signed(highest) + (figures.isRate ? " pts" : "")
        caption =
            "Each variation's difference against \(control) on \(goal.goal.name): "
            + rows.map(\.title).joined(separator: "; ")
            + ". The dot is the estimate, the dark bar its 95 % interval, the pale bar its always-valid interval; the vertical line is no difference."
    }

    private static func describe(_ variation: String, _ comparison: Comparison, _ figures: ResultsFigures) -> String {
        "\(variation) \(figures.difference(comparison.difference)) (95 % interval \(figures.interval(comparison.interval)); always-valid \(figures.interval(comparison.sequentialInterval)))"
    }
}
