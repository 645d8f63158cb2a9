/// The ranges of points each variation owns, as the client assigns them (FORMAT.md §5).
///
/// Variation *i* owns `[Σ_{j<i} bias_j, Σ_{j≤i} bias_j)`, cut at 100: with biases that
/// sum over 100, later variations shrink or become unreachable.
public struct VariationRanges: Hashable, Sendable {
    /// One variation's slice of [0, 100].
    public struct Range: Hashable, Sendable {
        /// The variation's name, as the app stores it.
        public var name: String
        /// The first point of the range, in percent.
        public var lower: Double
        /// The point past the range, in percent (cut at 100).
        public var upper: Double

        /// The share of users in this range, in percent.
        public var width: Double { upper - lower }
    }

    /// The variations' ranges, in the order of the variations.
    public var ranges: [Range]

    /// The ranges of `names` with `biases` (already effective: clamped, one per name).
    public init(names: [String], biases: [Double]) {
        var lower = 0.0
        ranges = zip(names, biases).map { name, bias in
            let upper = lower + bias
            defer { lower = upper }
            return Range(name: name, lower: min(lower, 100), upper: min(upper, 100))
        }
    }

    /// The ranges a feature's users fall into.
    public init(of feature: Feature) {
        self.init(names: feature.effectiveVariations, biases: feature.effectiveBiases)
    }

    /// The index of the range a point in [0, 100) falls into: the first whose upper bound is
    /// above it, else the last (which takes everything from its lower bound, so a sum that
    /// rounds just under 100 strands no one). `nil` only without ranges.
    public func index(containing point: Double) -> Int? {
        guard !ranges.isEmpty else { return nil }
        return ranges.indices.dropLast().first { point < ranges[$0].upper } ?? ranges.count - 1
    }

    /// The variation a point in [0, 100) falls into.
    public func variation(at point: Double) -> String? {
        index(containing: point).map { ranges[$0].name }
    }

    /// The points range `index` owns under `index(containing:)`: `lower ..< upper`, the last
    /// range's upper bound being 100.
    public func bounds(of index: Int) -> (lower: Double, upper: Double) {
        let range = ranges[index]
        return (range.lower, index == ranges.count - 1 ? 100 : range.upper)
    }

    /// A point that lands in `variation` (compared case-insensitively): `point` itself when it
    /// already does, else the middle of the variation's first range that owns any point;
    /// `nil` when the variation owns none.
    public func point(in variation: String, preferring point: Double) -> Double? {
        let name = variation.lowercased()
        if let index = index(containing: point), ranges[index].name.lowercased() == name { return point }
        for index in ranges.indices where ranges[index].name.lowercased() == name {
            let (lower, upper) = bounds(of: index)
            if lower < upper { return lower + (upper - lower) / 2 }
        }
        return nil
    }

    /// The share of users, in percent, that moves from each variation to each other one
    /// when the ranges change to `next`. Variations are matched by name, case-insensitively,
    /// as the app compares them; pairs with no users are left out.
    public func transitions(to next: VariationRanges) -> [Transition] {
        var result: [Transition] = []
        // Both lists run up [0, 100] in order: sweep them together rather than pair every
        // range with every other (a test may have tens of thousands of variations).
        var first = 0
        for old in ranges where old.width > 0 {
            while first < next.ranges.count && next.ranges[first].upper <= old.lower { first += 1 }
            for new in next.ranges[first...] {
                guard new.lower < old.upper else { break }
                guard new.width > 0 && old.name.lowercased() != new.name.lowercased() else { continue }
                let overlap = min(old.upper, new.upper) - max(old.lower, new.lower)
                if overlap > 0 { result.append(Transition(from: old.name, to: new.name, share: overlap)) }
            }
        }
        return result
    }

    /// The share of users, in percent, that changes group when the ranges change to `next`.
    public func movingShare(to next: VariationRanges) -> Double {
        transitions(to: next).reduce(0) { $0 + $1.share }
    }

    /// The least share that must change group to reach `next`'s sizes: what only the shrinking
    /// groups lose. Growing the first or the last group achieves it; re-ordering does not.
    public func minimalMovingShare(to next: VariationRanges) -> Double {
        let before = shares
        let after = next.shares
        return before.reduce(0) { total, entry in total + max(0, entry.value - (after[entry.key] ?? 0)) }
    }

    /// Users per variation name (lowercased, as the app compares names).
    private var shares: [String: Double] {
        ranges.reduce(into: [:]) { $0[$1.name.lowercased(), default: 0] += $1.width }
    }
}

/// A share of users, in percent, that moves from one variation to another.
public struct Transition: Hashable, Sendable {
    /// The variation users leave.
    public var from: String
    /// The variation they join.
    public var to: String
    /// The share of all users that moves, in percent.
    public var share: Double
}
