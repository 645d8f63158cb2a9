import FlagpoleCore
import Foundation

/// A guarded ramp simulated with a known truth, its guards run in process on the per-user
/// totals a readout keeps (docs/RAMPS.md, "How well the guards work").
///
/// New users arrive evenly, a batch at each look, and the split places each in the growing
/// variation with the step's share. Each user then crashes as a Poisson process at their
/// variation's rate, so per-user counts grow over the hold and some users crash twice: the
/// totals are counts, compared as means, with rare events at the small steps. Rates are stated
/// as the mean per-user total at the end of a one-day hold (the mean exposure is then half a
/// day): that is where the difference the guard estimates is largest, so "an effect exactly at
/// the threshold" is exactly at it there, and below it at every earlier look.
public struct RampSimulation: Sendable {
    public var steps: [Double] = [1, 5, 20, 50, 100]
    public var usersPerDay = 20_000
    /// Looks per one-day hold (the server looks every five minutes; the interval is valid at any number).
    public var looksPerHold = 24
    /// The source's mean crash total per user at the end of the hold.
    public var baseRate = 0.01
    /// The growing variation's, minus the base.
    public var effect = 0.0
    /// The guard's threshold, in the same units.
    public var threshold = 0.002
    /// The share of the growing variation's users the readout never hears of: a planted sample-ratio mismatch.
    public var lostShare = 0.0

    public init() {}

    /// How a simulated ramp ended.
    public enum Outcome: Hashable, Sendable {
        /// The goal guard failed during the hold of `step` (its index): rolled back.
        case rolledBack(step: Int)
        /// The sample-ratio guard failed at the end of the hold of `step`: paused.
        case paused(step: Int)
        case finished
    }

    /// One ramp from `random`.
    public func run(using random: inout some RandomNumberGenerator) -> Outcome {
        let alpha = RampGuard.alpha(steps: steps.count, goalGuards: 1)
        // A user's rate per look: the mean total at the hold's end is rate × half a day.
        let perLook = [baseRate, baseRate + effect].map { 2 * $0 / Double(looksPerHold) }
        let arrivals = usersPerDay / looksPerHold
        for step in steps.indices.dropLast() {
            let share = steps[step] / 100
            // Per variation (0: the growing one, 1: the source), its users by their count so
            // far: every user present has the same hazard, so each event lands on one chosen
            // uniformly, and earlier arrivals keep more.
            var counts: [[Int]] = [[0], [0]]
            var split = [0, 0]
            for look in 0..<looksPerHold {
                let growing = Self.binomial(arrivals, share, using: &random)
                let heard = growing - Self.binomial(growing, lostShare, using: &random)
                split[0] += heard
                split[1] += arrivals - growing
                counts[0][0] += heard
                counts[1][0] += arrivals - growing
                var totals: [ArmTotals] = []
                var events = [0, 0]
                for arm in 0..<2 {
                    let users = counts[arm].reduce(0, +)
                    for _ in 0..<Self.poisson(Double(users) * perLook[1 - arm], using: &random) {
                        Self.addEvent(to: &counts[arm], using: &random)
                    }
                    var total = ArmTotals(users: 0, sum: 0, sumOfSquares: 0)
                    for (count, many) in counts[arm].enumerated() {
                        total.users += many
                        total.sum += Double(count * many)
                        total.sumOfSquares += Double(count * count * many)
                        events[arm] += count * many
                    }
                    totals.append(total)
                }
                let goal = GuardLook.goal(
                    "crashes", growing: totals[0], source: totals[1], events: events, scale: .mean,
                    threshold: threshold, alpha: alpha)
                if goal.verdict == .fail { return .rolledBack(step: step) }
                if look == looksPerHold - 1,
                    GuardLook.sampleRatio(observed: split, weights: [share, 1 - share]).verdict == .fail
                {
                    return .paused(step: step)
                }
            }
        }
        return .finished
    }

    /// One more event for a user chosen uniformly among `counts` (users by their count so far).
    private static func addEvent(to counts: inout [Int], using random: inout some RandomNumberGenerator) {
        var chosen = Int.random(in: 0..<counts.reduce(0, +), using: &random)
        for count in counts.indices {
            if chosen < counts[count] {
                counts[count] -= 1
                if count + 1 == counts.count { counts.append(0) }
                counts[count + 1] += 1
                return
            }
            chosen -= counts[count]
        }
    }

    /// Poisson(`mean`) by multiplying uniforms (Knuth), split into parts of mean ≤ 10.
    public static func poisson(_ mean: Double, using random: inout some RandomNumberGenerator) -> Int {
        guard mean > 0 else { return 0 }
        var remaining = mean
        var count = 0
        while remaining > 0 {
            let part = min(remaining, 10)
            remaining -= part
            let limit = exp(-part)
            var product = Double.random(in: 0..<1, using: &random)
            while product > limit {
                count += 1
                product *= Double.random(in: 0..<1, using: &random)
            }
        }
        return count
    }

    /// Binomial(`n`, `p`): by inversion while n·min(p, 1 − p) is small, by the normal
    /// approximation (rounded, clamped) once its variance passes 50.
    static func binomial(_ n: Int, _ p: Double, using random: inout some RandomNumberGenerator) -> Int {
        guard p > 0, n > 0 else { return 0 }
        guard p < 1 else { return n }
        if p > 0.5 { return n - binomial(n, 1 - p, using: &random) }
        let variance = Double(n) * p * (1 - p)
        if variance > 50 {
            // Box–Muller.
            let u = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &random)
            let v = Double.random(in: 0..<1, using: &random)
            let z = (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
            return min(n, max(0, Int((Double(n) * p + z * variance.squareRoot()).rounded())))
        }
        let ratio = p / (1 - p)
        var probability = pow(1 - p, Double(n))
        var u = Double.random(in: 0..<1, using: &random)
        var k = 0
        while u > probability, k < n {
            u -= probability
            k += 1
            probability *= ratio * Double(n - k + 1) / Double(k)
        }
        return k
    }

    /// The rate of `hits` in `runs` with its 95 % Wilson interval.
    public static func rate(_ hits: Int, of runs: Int) -> (rate: Double, low: Double, high: Double) {
        let n = Double(runs)
        let p = Double(hits) / n
        let z = Distributions.z975
        let center = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()
        return (p, max(0, center - half), min(1, center + half))
    }
}
