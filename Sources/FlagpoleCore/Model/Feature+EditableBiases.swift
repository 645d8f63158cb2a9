/// Biases as an editor pre-fills them: short decimals that the client keeps (FORMAT.md §4).
extension Feature {
    /// `effectiveBiases` as decimal text with at most 4 decimals, whose values the client keeps:
    /// submitted unchanged, they are never replaced by an equal split (W200, W201).
    public var editableBiases: [String] {
        Self.editableBiases(effectiveBiases)
    }

    /// `biases` (effective ones: each clamped, one per variation) as decimal text with at most
    /// `digits` decimals, whose values the client keeps: the count is unchanged, and the clamped
    /// running sum of the numbers the text reads as, in IEEE doubles, reaches exactly 100.
    ///
    /// Rounding each value alone is not enough: an equal three-way split would read
    /// 33.3333 × 3, which falls short of 100, so the client would ignore it. Values are kept as
    /// rounded only when the client keeps them that way (biases written with at most `digits`
    /// decimals, `[60, 60]`). Otherwise the boundaries between variations are rounded instead,
    /// the last at 100: the values add up to exactly 100 and each boundary moves by at most half
    /// a unit of the last decimal. Where the client's doubles still add up to a hair under 100,
    /// the boundaries are chosen one at a time, each its rounding or one unit off it, keeping the
    /// client's running sum at or above each boundary where one of them does; should that fail
    /// too (rarely: the first equal split that needs it has 78 variations), the last value grows
    /// a unit at a time, to a sum just over 100 (W202), which the client keeps.
    public static func editableBiases(_ biases: [Double], digits: Int = 4) -> [String] {
        guard !biases.isEmpty else { return [] }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        // A count of units of the last decimal as a number: one rounding of an exact quotient,
        // the very number a parser makes of its decimal text.
        let number = { (units: Int) in Double(units) / scale }
        let isKept = { (units: [Int]) in clampedRunningSum(units.map(number)) == 100 }
        // Kept without going over 100 by more than rounding (FeatureLint's W202 threshold).
        let isExact = { (units: [Int]) in isKept(units) && units.map(number).reduce(0, +) <= 100 + 1e-9 }
        let text = { (units: [Int]) in units.map { JSONWriter.format(number($0)) } }

        let rounded = biases.map { Int(($0 * scale).rounded()) }
        let isOver = biases.reduce(0, +) > 100 + 1e-9
        if isOver ? isKept(rounded) : isExact(rounded) { return text(rounded) }

        // The upper boundary of every variation but the last, as the client sums them.
        var running = 0.0
        let boundaries = biases.dropLast().map { bias in
            running = clampedPercentage(running + clampedPercentage(bias))
            return running * scale
        }
        let hundred = Int((100 * scale).rounded())
        let values = { (bounds: [Int]) in zip(bounds + [hundred], [0] + bounds).map { $0 - $1 } }
        let nearest = values(boundaries.map { Int($0.rounded()) })
        if isExact(nearest) { return text(nearest) }

        var bounds: [Int] = []
        var sum = 0.0
        for boundary in boundaries {
            let lower = bounds.last ?? 0
            let rounding = Int(boundary.rounded())
            let choices = [rounding, rounding + 1, rounding - 1].filter { $0 >= lower && $0 <= hundred }
            let sums = choices.map { clampedPercentage(sum + number($0 - lower)) }
            let chosen = zip(choices, sums).first { $1 >= number($0) } ?? (choices[0], sums[0])
            bounds.append(chosen.0)
            sum = chosen.1
        }
        if isExact(values(bounds)) { return text(values(bounds)) }

        var grown = nearest
        while !isKept(grown) { grown[grown.count - 1] += 1 }
        return text(grown)
    }
}
