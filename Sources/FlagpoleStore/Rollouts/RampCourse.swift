import FlagpoleCore

/// How a ramp grows one variation of a test: the test's biases at each share of the growing
/// variation (docs/RAMPS.md).
///
/// The growing variation is at one end of the order, and the share it gains is taken from its
/// neighbours, nearest first (and given back to its nearest neighbour when it shrinks): the
/// boundaries between the other variations stay where they are, so no user moves between them,
/// only into (or out of) the growing one.
struct RampCourse: Hashable, Sendable {
    /// The variation that grows, as the app stores it.
    let variation: String
    /// Its index among the test's variations: the first or the last.
    let growing: Int
    /// The test's effective biases before the ramp.
    var base: [Double]

    /// The course of `variation` (compared case-insensitively) in `feature`, from its current biases.
    ///
    /// - throws: `CoreError.notATest`, `CoreError.unknownVariation`, `RampError.middleVariation`.
    init(feature: Feature, variation: String) throws {
        guard feature.kind.isTest else { throw CoreError.notATest(feature: feature.name, kind: feature.kind) }
        let variations = feature.effectiveVariations
        guard let index = variations.firstIndex(where: { $0.lowercased() == variation.lowercased() }) else {
            throw CoreError.unknownVariation(feature: feature.name, variation: variation, variations: variations)
        }
        guard index == 0 || index == variations.count - 1 else {
            throw RampError.middleVariation(feature: feature.name, variation: variations[index], variations: variations)
        }
        self.variation = variations[index]
        growing = index
        base = feature.effectiveBiases
    }

    /// The growing variation's share before the ramp, in percent.
    var baseShare: Double { VariationRanges(names: base.map { _ in "" }, biases: base).ranges[growing].width }

    /// The biases with the growing variation at `share` percent, as decimals the app keeps.
    func biases(at share: Double) -> [Double] {
        var biases = base
        var change = share - biases[growing]
        biases[growing] = share
        // Nearest neighbour first.
        let others = growing == 0 ? Array(biases.indices.dropFirst()) : Array(biases.indices.dropLast().reversed())
        if change < 0, let nearest = others.first {
            biases[nearest] -= change
            change = 0
        }
        for index in others where change > 0 {
            let taken = min(biases[index], change)
            biases[index] -= taken
            change -= taken
        }
        return Feature.editableBiases(biases).map { Double($0)! }
    }

    /// `feature` with the growing variation at `share` percent; at 100 %, the test rolled out to
    /// it, as `flagpole rollout` does.
    func feature(_ feature: Feature, at share: Double) throws -> Feature {
        if share >= 100 { return try feature.rolledOut(to: variation) }
        var next = feature
        next.testBiases = biases(at: share)
        return next
    }
}
