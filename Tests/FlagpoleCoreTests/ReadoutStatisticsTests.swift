import FlagpoleCore
import Foundation
import Testing

/// The readout's statistics: properties that hold whatever the data, and A/A tests over many
/// seeds. Scripts/check-results compares every figure with scipy and statsmodels.
struct ReadoutStatisticsTests {
    /// SplitMix64: a seeded generator, so every run draws the same populations and the A/A
    /// counts below are fixed numbers, not chances.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static func arm(_ totals: [Double]) -> ArmTotals {
        ArmTotals(users: totals.count, sum: totals.reduce(0, +), sumOfSquares: totals.reduce(0) { $0 + $1 * $1 })
    }

    private static func conversions(_ count: Int, rate: Double, using generator: inout Seeded) -> [Double] {
        (0..<count).map { _ in Double.random(in: 0..<1, using: &generator) < rate ? 1 : 0 }
    }

    private static func exponential(_ count: Int, mean: Double, using generator: inout Seeded) -> [Double] {
        (0..<count).map { _ in -mean * log(1 - Double.random(in: 0..<1, using: &generator)) }
    }

    /// Runs where p < 0.05 among 2 000 A/A tests must lie within 5 standard deviations of
    /// 2 000 × 0.05 = 100 (sd ≈ 9.7): a correct test lands there, a test that is too eager or
    /// too shy does not.
    @Test(arguments: [MetricScale.proportion, .mean])
    func aaTestsRejectAboutFivePercent(scale: MetricScale) {
        var generator = Seeded(state: scale == .proportion ? 1 : 2)
        var rejections = 0
        for _ in 0..<2_000 {
            let (a, b) =
                scale == .proportion
                ? (
                    Self.conversions(500, rate: 0.1, using: &generator),
                    Self.conversions(500, rate: 0.1, using: &generator)
                )
                : (
                    Self.exponential(500, mean: 20, using: &generator),
                    Self.exponential(500, mean: 20, using: &generator)
                )
            let comparison = Comparison.compare(
                treatment: Self.arm(b), control: Self.arm(a), scale: scale, higherIsBetter: true)
            if let comparison, comparison.pValue < 0.05 { rejections += 1 }
        }
        #expect(abs(Double(rejections) - 100) <= 5 * (2_000 * 0.05 * 0.95).squareRoot(), "\(rejections) of 2 000")
    }

    @Test func aRealEffectIsFoundMostOfTheTime() {
        var generator = Seeded(state: 3)
        var found = 0
        for _ in 0..<200 {
            let control = Self.conversions(2_000, rate: 0.10, using: &generator)
            let treatment = Self.conversions(2_000, rate: 0.14, using: &generator)
            let comparison = Comparison.compare(
                treatment: Self.arm(treatment), control: Self.arm(control), scale: .proportion, higherIsBetter: true)
            if let comparison, comparison.pValue < 0.05, comparison.difference > 0 { found += 1 }
        }
        #expect(found > 160, "\(found) of 200")
    }

    @Test func theAlwaysValidIntervalIsWiderThanTheFixedOne() throws {
        var generator = Seeded(state: 4)
        for users in [50, 500, 5_000, 50_000] {
            let comparison = try #require(
                Comparison.compare(
                    treatment: Self.arm(Self.exponential(users, mean: 11, using: &generator)),
                    control: Self.arm(Self.exponential(users, mean: 10, using: &generator)), scale: .mean,
                    higherIsBetter: true))
            #expect(comparison.sequentialInterval.low < comparison.interval.low)
            #expect(comparison.sequentialInterval.high > comparison.interval.high)
        }
    }

    @Test func lowerIsBetterTurnsTheChanceToBeatAround() throws {
        let treatment = ArmTotals(users: 1_000, sum: 150, sumOfSquares: 150)
        let control = ArmTotals(users: 1_000, sum: 100, sumOfSquares: 100)
        let higher = try #require(
            Comparison.compare(treatment: treatment, control: control, scale: .proportion, higherIsBetter: true))
        let lower = try #require(
            Comparison.compare(treatment: treatment, control: control, scale: .proportion, higherIsBetter: false))
        #expect(higher.chanceToBeatControl > 0.99)
        #expect(abs(higher.chanceToBeatControl + lower.chanceToBeatControl - 1) < 1e-12)
    }

    @Test func nothingToCompareWithoutTwoUsersOrAnySpread() {
        let one = ArmTotals(users: 1, sum: 1, sumOfSquares: 1)
        let many = ArmTotals(users: 100, sum: 10, sumOfSquares: 10)
        #expect(Comparison.compare(treatment: one, control: many, scale: .proportion, higherIsBetter: true) == nil)
        let flat = ArmTotals(users: 100, sum: 0, sumOfSquares: 0)
        #expect(Comparison.compare(treatment: flat, control: flat, scale: .mean, higherIsBetter: true) == nil)
    }

    @Test func holmIsMonotoneAndNeverBelowTheRawPValue() {
        let raw = [0.01, 0.04, 0.03, 0.2]
        let adjusted = MultipleComparisons.holm(raw)
        #expect(zip(adjusted, [0.04, 0.09, 0.09, 0.2]).allSatisfy { abs($0 - $1) < 1e-15 })
        #expect(zip(raw, adjusted).allSatisfy { $0 <= $1 })
    }

    @Test func sampleRatioFlagsASkewAndNotAFairSplit() throws {
        let skewed = try #require(SampleRatioCheck.test(observed: [5_300, 4_700], weights: [50, 50]))
        #expect(skewed.pValue < 0.001)
        let fair = try #require(SampleRatioCheck.test(observed: [5_030, 4_970], weights: [50, 50]))
        #expect(fair.pValue > 0.5)
        let impossible = try #require(SampleRatioCheck.test(observed: [10, 90, 3], weights: [10, 90, 0]))
        #expect(impossible.pValue == 0)
        #expect(SampleRatioCheck.test(observed: [0, 0], weights: [50, 50]) == nil)
    }

    @Test func tinyPValuesKeepTheirPrecision() {
        // 2·Φ(−12) ≈ 3.55e-33: computed as 1 − Φ it would be 0.
        let p = Distributions.studentTTwoSided(12, degreesOfFreedom: 1e6)
        #expect(p > 1e-34 && p < 1e-31)
        #expect(Distributions.chiSquaredSurvival(200, degreesOfFreedom: 1) > 0)
    }

    @Test func poolingWeighsEpochsByTheirPrecision() throws {
        let pooled = try #require(PooledEstimate.inverseVariance([(1, 1), (3, 1)]))
        #expect(abs(pooled.difference - 2) < 1e-12)
        #expect(abs(pooled.standardError - 0.5.squareRoot()) < 1e-12)
        let weighted = try #require(PooledEstimate.inverseVariance([(1, 0.1), (3, 1)]))
        #expect(weighted.difference < 1.1)
    }
}
