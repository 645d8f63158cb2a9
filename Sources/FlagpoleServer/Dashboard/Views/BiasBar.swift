import FlagpoleCore

/// A test's variations as one horizontal bar, each segment as wide as its share of users.
/// It is SVG drawn on the server: no script, no inline style (the page's CSP allows neither).
struct BiasBar: Sendable {
    struct Segment: Sendable {
        var name: String
        var x: String
        var width: String
        var percent: String
        var color: Int
    }

    var label: String
    var segments: [Segment]

    /// The bar of `feature` as the app buckets it, or `nil` when users are not split (a flag
    /// shows one state to everyone).
    init?(_ feature: Feature) {
        guard feature.isBucketed else { return nil }
        self.init(names: feature.effectiveVariations, shares: feature.effectiveShares)
    }

    init?(_ ranges: VariationRanges) {
        self.init(names: ranges.ranges.map(\.name), shares: ranges.ranges.map(\.width))
    }

    private init?(names: [String], shares: [Double]) {
        guard names.count > 1 else { return nil }
        var x = 0.0
        segments = zip(names, shares).enumerated().map { index, pair in
            defer { x += pair.1 }
            return Segment(
                name: pair.0, x: Percent.number(x, digits: 3), width: Percent.number(pair.1, digits: 3),
                percent: Percent.format(pair.1), color: index % Palette.colors)
        }
        label = "Users per variation: " + segments.map { "\($0.name) \($0.percent)" }.joined(separator: ", ")
    }
}

/// The stylesheet's series colours, `.c0` to `.c7`, reused in order.
enum Palette {
    static let colors = 8
}
