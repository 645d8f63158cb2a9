import Foundation

/// The distribution functions a readout needs, accurate in the far tails: p-values of 1e-30
/// are reported as such, not as 0.
public enum Distributions {
    /// Φ(x), the standard normal distribution function.
    public static func normalCDF(_ x: Double) -> Double {
        0.5 * erfc(-x / 2.0.squareRoot())
    }

    /// 1 − Φ(x), without the cancellation of computing it that way.
    public static func normalSurvival(_ x: Double) -> Double {
        0.5 * erfc(x / 2.0.squareRoot())
    }

    /// The 97.5th percentile of the standard normal: the half-width of a 95 % interval in
    /// standard errors (scipy.stats.norm.ppf(0.975)).
    public static let z975 = 1.959963984540054

    /// The two-sided p-value of Student's t statistic `t` with `degreesOfFreedom` (real-valued,
    /// as Welch's are): I_{ν/(ν+t²)}(ν/2, 1/2).
    public static func studentTTwoSided(_ t: Double, degreesOfFreedom: Double) -> Double {
        guard t.isFinite else { return t.isNaN ? .nan : 0 }
        let nu = degreesOfFreedom
        // x = ν/(ν+t²) and 1 − x = t²/(ν+t²), each computed without cancellation.
        let x = nu / (nu + t * t)
        let complement = t * t / (nu + t * t)
        return regularizedBeta(x: x, complement: complement, a: nu / 2, b: 0.5)
    }

    /// The chi-squared survival function: P(X ≥ x) for `degreesOfFreedom`, Q(k/2, x/2).
    public static func chiSquaredSurvival(_ x: Double, degreesOfFreedom: Int) -> Double {
        guard x > 0 else { return 1 }
        guard x.isFinite else { return 0 }
        return regularizedUpperGamma(a: Double(degreesOfFreedom) / 2, x: x / 2)
    }

    // MARK: Special functions

    /// I_x(a, b), the regularized incomplete beta function, by its continued fraction (Lentz),
    /// on the side of the symmetry where it converges fast. `complement` is 1 − x, given apart
    /// so that an x within rounding of 1 keeps its precision.
    static func regularizedBeta(x: Double, complement: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if complement <= 0 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(complement)
        if x < (a + 1) / (a + b + 2) {
            return exp(logFront) * betaFraction(x: x, a: a, b: b) / a
        }
        return 1 - exp(logFront) * betaFraction(x: complement, a: b, b: a) / b
    }

    private static func betaFraction(x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        let qab = a + b
        let qap = a + 1
        let qam = a - 1
        var c = 1.0
        var d = 1 - qab * x / qap
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...100_000 {
            let m = Double(m)
            let m2 = 2 * m
            var aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return h
    }

    /// Q(a, x), the regularized upper incomplete gamma function: by its series below a + 1,
    /// by its continued fraction above, where tiny values keep their precision.
    static func regularizedUpperGamma(a: Double, x: Double) -> Double {
        let logFront = a * log(x) - x - lgamma(a)
        if x < a + 1 {
            var term = 1 / a
            var sum = term
            var n = a
            for _ in 0..<100_000 {
                n += 1
                term *= x / n
                sum += term
                if abs(term) < abs(sum) * 1e-17 { break }
            }
            return 1 - sum * exp(logFront)
        }
        let tiny = 1e-300
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1...100_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return exp(logFront) * h
    }
}
