import Foundation

/// One variation's per-user totals, kept incrementally: the user is the unit of randomisation,
/// so a variation is summed by its users' totals, not its events.
public struct ArmTotals: Sendable, Equatable, Codable {
    public var users: Int
    public var sum: Double
    public var sumOfSquares: Double

    public init(users: Int, sum: Double, sumOfSquares: Double) {
        self.users = users
        self.sum = sum
        self.sumOfSquares = sumOfSquares
    }

    public var mean: Double { users > 0 ? sum / Double(users) : 0 }

    /// The sample variance of users' totals (n − 1), clamped at 0 against rounding; 0 below 2 users.
    public var sampleVariance: Double {
        guard users >= 2 else { return 0 }
        let n = Double(users)
        return max(0, (sumOfSquares - sum * sum / n) / (n - 1))
    }
}

/// How a goal's per-user totals are compared.
public enum MetricScale: String, Sendable, Codable {
    /// Totals are 0 or 1 (conversion): rates, the pooled two-proportion z-test.
    case proportion
    /// Any totals: means, Welch's t-test.
    case mean
}

/// A 95 % interval.
public struct Interval: Sendable, Equatable, Codable {
    public var low: Double
    public var high: Double

    public init(low: Double, high: Double) {
        self.low = low
        self.high = high
    }

    init(center: Double, halfWidth: Double) {
        self.init(low: center - halfWidth, high: center + halfWidth)
    }
}

/// One variation against the control.
public struct Comparison: Sendable, Equatable, Codable {
    /// Treatment mean − control mean.
    public var difference: Double
    /// Unpooled: √(v_t/n_t + v_c/n_c), with v = p(1 − p) for rates and the sample variance for means.
    public var standardError: Double
    /// Wald: difference ± z(0.975)·SE.
    public var interval: Interval
    /// difference / control mean; `nil` when the control's mean is 0.
    public var relativeDifference: Double?
    /// By the delta method: Var(r) ≈ V_t/μ_c² + μ_t²·V_c/μ_c⁴, with V = v/n.
    public var relativeInterval: Interval?
    /// Two-sided: Welch's t for means, the pooled two-proportion z-test for rates.
    public var pValue: Double
    /// Welch–Satterthwaite's, for means; `nil` for rates.
    public var degreesOfFreedom: Double?
    /// Φ(Δ/SE) (Φ(−Δ/SE) when lower is better): a normal approximation with a flat prior.
    public var chanceToBeatControl: Double
    /// Always valid, however often the readout is looked at: the normal-mixture confidence
    /// sequence of the mixture sequential probability ratio test (Johari, Pekelis & Walsh,
    /// "Always valid inference", 2017; Howard et al. 2021; GrowthBook's sequential testing).
    /// Half-width √(V(V + τ²)/τ² · (ln((V + τ²)/V) − 2 ln α)) with V = SE², α = 0.05 and
    /// τ² = ρ²·(v_t + v_c), ρ² = (−2 ln α + ln(−2 ln α + 1))/N*, tuned for N* = 10 000 users.
    public var sequentialInterval: Interval
    /// v_t + v_c, the per-user variances the always-valid interval is tuned by.
    public var perUserVariances: Double

    /// The tuning of the always-valid interval: it is tightest near this many users per variation.
    public static let sequentialTuningUsers = 10_000.0

    /// `treatment` against `control`; `nil` when either has fewer than 2 users or the standard
    /// error is 0 (every user has the same total: nothing to test).
    public static func compare(
        treatment: ArmTotals, control: ArmTotals, scale: MetricScale, higherIsBetter: Bool
    ) -> Comparison? {
        guard treatment.users >= 2, control.users >= 2 else { return nil }
        let nt = Double(treatment.users)
        let nc = Double(control.users)
        let mt = treatment.mean
        let mc = control.mean
        let (vt, vc) =
            switch scale {
            case .proportion: (mt * (1 - mt), mc * (1 - mc))
            case .mean: (treatment.sampleVariance, control.sampleVariance)
            }
        let varianceT = vt / nt
        let varianceC = vc / nc
        let standardError = (varianceT + varianceC).squareRoot()
        guard standardError > 0, standardError.isFinite else { return nil }
        let difference = mt - mc

        let pValue: Double
        var degreesOfFreedom: Double?
        switch scale {
        case .proportion:
            let pooled = (treatment.sum + control.sum) / (nt + nc)
            let pooledError = (pooled * (1 - pooled) * (1 / nt + 1 / nc)).squareRoot()
            pValue = pooledError > 0 ? erfc(abs(difference / pooledError) / 2.0.squareRoot()) : 1
        case .mean:
            let df =
                (varianceT + varianceC) * (varianceT + varianceC)
                / (varianceT * varianceT / (nt - 1) + varianceC * varianceC / (nc - 1))
            degreesOfFreedom = df
            pValue = Distributions.studentTTwoSided(difference / standardError, degreesOfFreedom: df)
        }

        var relativeDifference: Double?
        var relativeInterval: Interval?
        if mc != 0 {
            let ratio = difference / mc
            let relativeVariance = varianceT / (mc * mc) + mt * mt * varianceC / (mc * mc * mc * mc)
            relativeDifference = ratio
            relativeInterval = Interval(center: ratio, halfWidth: Distributions.z975 * relativeVariance.squareRoot())
        }

        let sequentialHalfWidth = sequentialHalfWidth(
            standardError: standardError, perUserVariances: vt + vc, alpha: 0.05)
        let z = difference / standardError
        return Comparison(
            difference: difference, standardError: standardError,
            interval: Interval(center: difference, halfWidth: Distributions.z975 * standardError),
            relativeDifference: relativeDifference, relativeInterval: relativeInterval, pValue: min(1, pValue),
            degreesOfFreedom: degreesOfFreedom,
            chanceToBeatControl: higherIsBetter ? Distributions.normalCDF(z) : Distributions.normalCDF(-z),
            sequentialInterval: Interval(center: difference, halfWidth: sequentialHalfWidth),
            perUserVariances: vt + vc)
    }

    /// The always-valid half-width at two-sided error `alpha` for a difference with
    /// `standardError`, its mixture tuned by `perUserVariances` (v_t + v_c): τ² = ρ²·(v_t + v_c).
    public static func sequentialHalfWidth(standardError: Double, perUserVariances: Double, alpha: Double) -> Double {
        let rhoSquared = (-2 * log(alpha) + log(-2 * log(alpha) + 1)) / sequentialTuningUsers
        let tauSquared = rhoSquared * perUserVariances
        let v = standardError * standardError
        return (v * (v + tauSquared) / tauSquared * (log((v + tauSquared) / v) - 2 * log(alpha))).squareRoot()
    }
}

/// Corrections for comparing several variations with one control.
public enum MultipleComparisons {
    /// Holm's step-down adjusted p-values, in the order given (statsmodels'
    /// `multipletests(method="holm")`).
    public static func holm(_ pValues: [Double]) -> [Double] {
        let m = pValues.count
        var adjusted = [Double](repeating: 1, count: m)
        var running = 0.0
        for (rank, index) in pValues.indices.sorted(by: { pValues[$0] < pValues[$1] }).enumerated() {
            running = max(running, min(1, Double(m - rank) * pValues[index]))
            adjusted[index] = running
        }
        return adjusted
    }
}

/// The sample-ratio-mismatch check: χ² of the users a split assigned against its shares.
public struct SampleRatioCheck: Sendable, Equatable, Codable {
    public var statistic: Double
    public var degreesOfFreedom: Int
    public var pValue: Double

    /// `nil` without users or with fewer than two variations of non-zero share. Users in a
    /// variation of share 0 can't come from the split: the statistic is infinite, p is 0.
    public static func test(observed: [Int], weights: [Double]) -> SampleRatioCheck? {
        let total = observed.reduce(0, +)
        let weightSum = weights.filter { $0 > 0 }.reduce(0, +)
        let categories = zip(observed, weights).filter { $0.1 > 0 }
        guard total > 0, categories.count >= 2, weightSum > 0 else { return nil }
        if zip(observed, weights).contains(where: { $0.1 <= 0 && $0.0 > 0 }) {
            return SampleRatioCheck(statistic: .infinity, degreesOfFreedom: categories.count - 1, pValue: 0)
        }
        let statistic = categories.reduce(0.0) { sum, category in
            let expected = Double(total) * category.1 / weightSum
            let deviation = Double(category.0) - expected
            return sum + deviation * deviation / expected
        }
        return SampleRatioCheck(
            statistic: statistic, degreesOfFreedom: categories.count - 1,
            pValue: Distributions.chiSquaredSurvival(statistic, degreesOfFreedom: categories.count - 1))
    }
}

/// Epochs' estimates of one difference pooled by fixed-effect inverse-variance weighting: each
/// epoch is its own stratum, so a change of biases can't reverse an effect (Simpson's paradox).
public struct PooledEstimate: Sendable, Equatable, Codable {
    public var difference: Double
    public var standardError: Double
    public var interval: Interval
    public var pValue: Double
    public var strata: Int

    public static func inverseVariance(_ strata: [(difference: Double, standardError: Double)]) -> PooledEstimate? {
        let usable = strata.filter { $0.standardError > 0 && $0.standardError.isFinite }
        guard !usable.isEmpty else { return nil }
        let weights = usable.map { 1 / ($0.standardError * $0.standardError) }
        let weightSum = weights.reduce(0, +)
        let difference = zip(usable, weights).reduce(0.0) { $0 + $1.0.difference * $1.1 } / weightSum
        let standardError = (1 / weightSum).squareRoot()
        return PooledEstimate(
            difference: difference, standardError: standardError,
            interval: Interval(center: difference, halfWidth: Distributions.z975 * standardError),
            pValue: erfc(abs(difference / standardError) / 2.0.squareRoot()), strata: usable.count)
    }
}
