import Foundation

/// What a readout says to do about one goal of one epoch, decided only from figures the readout
/// already computed (docs/RESULTS.md, "The verdict").
///
/// Ship and worse are decided by the always-valid interval, not the fixed one: teams look at a
/// readout every day, and the fixed interval, looked at daily, finds an effect that isn't there
/// far more often than 5 % of the time.
public enum Verdict: Sendable, Equatable {
    /// Users did not split as the biases say: no other figure of the epoch can be trusted.
    case sampleRatioMismatch
    /// The smallest variation has `fewest` users, fewer than `minimum`.
    case tooFewUsers(fewest: Int, minimum: Int)
    /// `Finding` is reliably better than the control, and the best of those that are.
    case ship(Finding)
    /// Every finding is reliably worse than the control and none is better. When every variation
    /// but the control is among them, the control is the winner (`winner`).
    case worse([Finding], keep: String?)
    /// Nothing is decided yet: about `moreUsers` more users (in the two variations closest to
    /// deciding, at the current split) until it could be, `nil` when that can't be estimated.
    case keepRunning(moreUsers: Int?)

    /// A variation's comparison with the control, as the verdict read it.
    public struct Finding: Sendable, Equatable {
        public var variation: String
        public var comparison: Comparison

        public init(variation: String, comparison: Comparison) {
            self.variation = variation
            self.comparison = comparison
        }
    }

    /// One variation of the epoch as the readout gives it; the control has no comparison.
    public struct Arm: Sendable, Equatable {
        public var variation: String
        public var users: Int
        /// Of a user's total (p(1 − p) for a rate): what the always-valid interval is tuned by.
        public var variance: Double
        public var comparison: Comparison?
        /// Holm's, across the variations compared with the control.
        public var adjustedPValue: Double?

        public init(
            variation: String, users: Int, variance: Double, comparison: Comparison?, adjustedPValue: Double?
        ) {
            self.variation = variation
            self.users = users
            self.variance = variance
            self.comparison = comparison
            self.adjustedPValue = adjustedPValue
        }
    }

    /// The significance level of every verdict, as of the intervals it reads.
    public static let alpha = 0.05

    /// The variation to roll out: the one shipped, or the control when every other variation is
    /// worse; `nil` when nothing is decided.
    public var winner: String? {
        switch self {
        case .ship(let finding): finding.variation
        case .worse(_, let keep): keep
        default: nil
        }
    }

    /// The verdict on `goal` for `arms`, the control among them.
    public static func decide(
        goal: Goal, control: String, arms: [Arm], sampleRatioMismatch: Bool, minimumUsers: Int
    ) -> Verdict {
        if sampleRatioMismatch { return .sampleRatioMismatch }
        let fewest = arms.map(\.users).min() ?? 0
        if fewest < minimumUsers { return .tooFewUsers(fewest: fewest, minimum: minimumUsers) }
        let treatments = arms.filter { $0.variation != control }
        let decided = treatments.compactMap { arm -> (finding: Finding, gain: Double)? in
            guard let comparison = arm.comparison, isDecisive(comparison, adjusted: arm.adjustedPValue) else {
                return nil
            }
            let gain = goal.better == .higher ? comparison.difference : -comparison.difference
            return (Finding(variation: arm.variation, comparison: comparison), gain)
        }
        if let best = decided.filter({ $0.gain > 0 }).max(by: { $0.gain < $1.gain }) {
            return .ship(best.finding)
        }
        if !decided.isEmpty {
            let worst = decided.sorted { $0.gain < $1.gain }.map(\.finding)
            return .worse(worst, keep: worst.count == treatments.count ? control : nil)
        }
        guard let control = arms.first(where: { $0.variation == control }) else { return .keepRunning(moreUsers: nil) }
        let estimates = treatments.compactMap { moreUsers(treatment: $0, control: control) }
        return .keepRunning(moreUsers: estimates.min())
    }

    /// Decided when the always-valid interval excludes 0 and, with several variations, Holm's
    /// adjusted p-value is below α too: the always-valid interval is not corrected for comparing
    /// several variations with one control; with one, it is the stricter of the two.
    static func isDecisive(_ comparison: Comparison, adjusted: Double?) -> Bool {
        let interval = comparison.sequentialInterval
        return (interval.low > 0 || interval.high < 0) && (adjusted ?? comparison.pValue) < alpha
    }

    /// The users to add to `treatment` and the control, keeping their ratio, until the always-valid
    /// interval would exclude 0 if the observed difference stayed as it is. The standard error
    /// scales as 1/√n, so k times the users has variance V/k; the always-valid half-width at V/k
    /// (its τ² fixed by the per-user variances) is solved for k by bisection. `nil` when the
    /// difference is 0, or the interval already excludes 0 (what is missing is then Holm's).
    static func moreUsers(treatment: Arm, control: Arm) -> Int? {
        guard let comparison = treatment.comparison, comparison.difference != 0 else { return nil }
        let target = abs(comparison.difference)
        let variance = comparison.standardError * comparison.standardError
        let perUserVariances = treatment.variance + control.variance
        func halfWidth(_ variance: Double) -> Double {
            Comparison.sequentialHalfWidth(
                standardError: variance.squareRoot(), perUserVariances: perUserVariances, alpha: alpha)
        }
        guard perUserVariances > 0, halfWidth(variance) > target else { return nil }
        var low = 1.0
        var high = 2.0
        while halfWidth(variance / high) > target {
            low = high
            high *= 2
            // Beyond a billion times the users, the estimate says nothing useful.
            if high > 1e9 { return nil }
        }
        for _ in 0..<60 {
            let middle = (low + high) / 2
            if halfWidth(variance / middle) > target {
                low = middle
            } else {
                high = middle
            }
        }
        return Int(((high - 1) * Double(treatment.users + control.users)).rounded(.up))
    }
}
