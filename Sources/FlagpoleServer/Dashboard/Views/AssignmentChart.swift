import FlagpoleCore
import FlagpoleStore
import Foundation

/// How a test's recorded users were spread over its variations through time: one stacked
/// column per sample, drawn as SVG on the server.
struct AssignmentChart: Sendable {
    struct Segment: Sendable {
        var x: String
        var y: String
        var height: String
        var color: Int
        var title: String
        var columnWidth: String
    }

    struct Column: Sendable {
        var segments: [Segment]
    }

    struct LegendEntry: Sendable {
        var name: String
        var color: Int
    }

    var width = 600
    var height = 200
    var baseline = 176
    var labelY = 194
    var columns: [Column]
    var legend: [LegendEntry]
    var maximum: Int
    var start: String
    var end: String
    var caption: String

    /// The chart of `snapshots`, or `nil` when nobody was ever assigned.
    init?(_ snapshots: [AssignmentSnapshot]) {
        guard let first = snapshots.first, let last = snapshots.last else { return nil }
        var variations: [String] = []
        for snapshot in snapshots {
            for count in snapshot.counts where !variations.contains(count.variation) {
                variations.append(count.variation)
            }
        }
        let color = { (variation: String) in (variations.firstIndex(of: variation) ?? 0) % Palette.colors }
        maximum = max(1, snapshots.map { $0.counts.reduce(0) { $0 + $1.users } }.max() ?? 1)
        let slot = Double(width) / Double(snapshots.count)
        let bottom = Double(baseline)
        let scale = (bottom - 16) / Double(maximum)
        columns = snapshots.enumerated().map { index, snapshot in
            var top = bottom
            let when = snapshot.time.iso8601
            return Column(
                segments: snapshot.counts.filter { $0.users > 0 }.map { count in
                    let size = Double(count.users) * scale
                    top -= size
                    return Segment(
                        x: Percent.number(Double(index) * slot + slot * 0.1, digits: 1),
                        y: Percent.number(top, digits: 1),
                        height: Percent.number(size, digits: 1), color: color(count.variation),
                        title: "\(when): \(count.variation) \(count.users) users",
                        columnWidth: Percent.number(slot * 0.8, digits: 1))
                })
        }
        legend = variations.map { LegendEntry(name: $0, color: color($0)) }
        let minute = { (time: Date) in time.iso8601.prefix(16).replacingOccurrences(of: "T", with: " ") }
        start = minute(first.time)
        end = minute(last.time)
        let now = last.counts.map { "\($0.variation) \($0.users)" }.joined(separator: ", ")
        caption = "Recorded users per variation from \(start) to \(end), at \(snapshots.count) moments. Now: \(now)."
    }
}
