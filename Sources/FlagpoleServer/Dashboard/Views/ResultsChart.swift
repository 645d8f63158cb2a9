import FlagpoleCore
import FlagpoleStore
import Foundation

/// Each variation's difference against the control at the end of each day, with its 95 %
/// interval, drawn as SVG on the server: a dot per estimate, a bar per interval, the zero line
/// where there is no difference.
struct ResultsChart: Sendable {
    struct Mark: Sendable {
        var x: String
        var y: String
        var barY: String
        var barHeight: String
        var color: Int
        var title: String
    }

    typealias LegendEntry = AssignmentChart.LegendEntry

    var width = 600
    var height = 180
    var zeroY: String
    var labelY = 176
    var marks: [Mark]
    var legend: [LegendEntry]
    var top: String
    var bottom: String
    var start: String
    var end: String
    var caption: String

    /// The chart of `goal`'s history, or `nil` when there is none yet.
    init?(_ goal: GoalResults, variations: [String]) {
        let points = goal.history.filter { $0.interval.low.isFinite && $0.interval.high.isFinite }
        guard let first = points.first, let last = points.last else { return nil }
        let days = Array(Set(points.map(\.day))).sorted()
        let high = max(0, points.map(\.interval.high).max() ?? 0)
        let low = min(0, points.map(\.interval.low).min() ?? 0)
        let span = max(high - low, 1e-12)
        let plotTop = 12.0
        let plotBottom = 160.0
        let y = { (value: Double) in plotBottom - (value - low) / span * (plotBottom - plotTop) }
        let slot = Double(width) / Double(days.count)
        let color = { (variation: String) in (variations.firstIndex(of: variation) ?? 0) % Palette.colors }
        // The variations drawn, side by side within each day's slot.
        let shown = variations.filter { variation in points.contains { $0.variation == variation } }
        marks = points.map { point in
            let dayIndex = Double(days.firstIndex(of: point.day) ?? 0)
            let offset = Double(shown.firstIndex(of: point.variation) ?? 0)
            let x = dayIndex * slot + slot * (offset + 1) / Double(shown.count + 1)
            return Mark(
                x: Percent.number(x, digits: 1), y: Percent.number(y(point.difference), digits: 1),
                barY: Percent.number(y(point.interval.high), digits: 1),
                barHeight: Percent.number(max(0.5, y(point.interval.low) - y(point.interval.high)), digits: 1),
                color: color(point.variation),
                title:
                    "\(point.day.iso8601.prefix(10)): \(point.variation) \(ResultsFormat.signed(point.difference)) [\(ResultsFormat.number(point.interval.low)), \(ResultsFormat.number(point.interval.high))]"
            )
        }
        legend = shown.map { LegendEntry(name: $0, color: color($0)) }
        zeroY = Percent.number(y(0), digits: 1)
        top = ResultsFormat.number(high)
        bottom = ResultsFormat.number(low)
        start = String(first.day.iso8601.prefix(10))
        end = String(last.day.iso8601.prefix(10))
        caption =
            "The difference of each variation against the control at the end of each day from \(start) to \(end), with its 95 % interval; the line is no difference."
    }
}
