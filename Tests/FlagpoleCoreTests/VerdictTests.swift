import FlagpoleCore
import Testing

/// Each branch of the verdict, from comparisons computed as the readout computes them.
struct VerdictTests {
    private static let signup = Goal(name: "signup", kind: .conversion)
    private static let crashes = Goal(name: "crashes", kind: .count, better: .lower)

    /// A conversion arm of `users` of whom `rate` converted.
    private static func rate(_ rate: Double, users: Int) -> ArmTotals {
        let converted = (rate * Double(users)).rounded()
        return ArmTotals(users: users, sum: converted, sumOfSquares: converted)
    }

    /// The readout's arms: the control first, then each treatment compared with it.
    private static func arms(
        control: ArmTotals, _ treatments: [(String, ArmTotals)], goal: Goal = signup, adjusted: [Double]? = nil
    ) -> [Verdict.Arm] {
        let scale: MetricScale = goal.kind == .conversion ? .proportion : .mean
        let variance = { (arm: ArmTotals) in scale == .proportion ? arm.mean * (1 - arm.mean) : arm.sampleVariance }
        let comparisons = treatments.map {
            Comparison.compare(treatment: $0.1, control: control, scale: scale, higherIsBetter: goal.better == .higher)
        }
        let holm = adjusted ?? MultipleComparisons.holm(comparisons.map { $0?.pValue ?? 1 })
        return [
            Verdict.Arm(
                variation: "Control", users: control.users, variance: variance(control), comparison: nil,
                adjustedPValue: nil)
        ]
            + treatments.indices.map { index in
                Verdict.Arm(
                    variation: treatments[index].0, users: treatments[index].1.users,
                    variance: variance(treatments[index].1), comparison: comparisons[index],
                    adjustedPValue: holm[index])
            }
    }

    private static func decide(_ arms: [Verdict.Arm], goal: Goal = signup, mismatch: Bool = false) -> Verdict {
        Verdict.decide(goal: goal, control: "Control", arms: arms, sampleRatioMismatch: mismatch, minimumUsers: 100)
    }

    @Test("A variation whose always-valid interval lies above 0 is shipped")
    func ship() throws {
        let arms = Self.arms(control: Self.rate(0.20, users: 5_000), [("New", Self.rate(0.25, users: 5_000))])
        let verdict = Self.decide(arms)
        guard case .ship(let finding) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(finding.variation == "New")
        #expect(finding.comparison.sequentialInterval.low > 0)
        #expect(verdict.winner == "New")
    }

    @Test("A variation reliably worse is worse, and the control is kept when it is the only other")
    func worse() {
        let arms = Self.arms(control: Self.rate(0.25, users: 5_000), [("New", Self.rate(0.20, users: 5_000))])
        let verdict = Self.decide(arms)
        guard case .worse(let findings, let keep) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(findings.map(\.variation) == ["New"])
        #expect(keep == "Control")
        #expect(verdict.winner == "Control")
    }

    @Test("A sample ratio mismatch stops the test whatever the differences")
    func mismatchOverrides() {
        let arms = Self.arms(control: Self.rate(0.20, users: 5_000), [("New", Self.rate(0.40, users: 5_000))])
        #expect(Self.decide(arms, mismatch: true) == .sampleRatioMismatch)
        #expect(Self.decide(arms, mismatch: true).winner == nil)
    }

    @Test("Below the minimum in any variation, nothing is concluded, however large the difference")
    func tooFewUsers() {
        let arms = Self.arms(control: Self.rate(0.10, users: 5_000), [("New", Self.rate(0.90, users: 99))])
        #expect(Self.decide(arms) == .tooFewUsers(fewest: 99, minimum: 100))
    }

    @Test("When lower is better, a variation that lowers the goal is shipped and one that raises it is worse")
    func lowerIsBetter() {
        // Counts: 2 000 users per arm with totals 0 or 1 (or 2), a mean of 0.5 against 0.3.
        let high = ArmTotals(users: 2_000, sum: 1_000, sumOfSquares: 1_000)
        let low = ArmTotals(users: 2_000, sum: 600, sumOfSquares: 600)
        let fewer = Self.decide(Self.arms(control: high, [("Fix", low)], goal: Self.crashes), goal: Self.crashes)
        #expect(fewer.winner == "Fix")
        let more = Self.decide(Self.arms(control: low, [("Bug", high)], goal: Self.crashes), goal: Self.crashes)
        guard case .worse(let findings, _) = more else {
            Issue.record("\(more)")
            return
        }
        #expect(findings.map(\.variation) == ["Bug"])
    }

    @Test("Undecided: the estimate of more users is what makes the always-valid interval exclude 0")
    func keepRunningEstimate() throws {
        let control = Self.rate(0.20, users: 1_000)
        let treatment = Self.rate(0.23, users: 1_000)
        let verdict = Self.decide(Self.arms(control: control, [("New", treatment)]))
        guard case .keepRunning(let more) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        let moreUsers = try #require(more)
        // The same rates with the estimated users (split as now) just decide; 5 % fewer do not.
        let scaled = { (factor: Double) in
            let perArm = Int((Double(2_000 + moreUsers) * factor / 2).rounded())
            return Comparison.compare(
                treatment: Self.rate(0.23, users: perArm), control: Self.rate(0.20, users: perArm), scale: .proportion,
                higherIsBetter: true)!
        }
        #expect(scaled(1.01).sequentialInterval.low > 0)
        #expect(scaled(0.95).sequentialInterval.low < 0)
    }

    @Test("With no observed difference, how many more users can't be estimated")
    func keepRunningWithoutDifference() {
        let arms = Self.arms(control: Self.rate(0.20, users: 1_000), [("New", Self.rate(0.20, users: 1_000))])
        #expect(Self.decide(arms) == .keepRunning(moreUsers: nil))
    }

    @Test("Several variations: the better with the larger gain ships; Holm's adjusted p must be below 5 % too")
    func severalVariations() {
        let control = Self.rate(0.20, users: 5_000)
        let both = Self.arms(
            control: control, [("Small", Self.rate(0.24, users: 5_000)), ("Large", Self.rate(0.27, users: 5_000))])
        #expect(Self.decide(both).winner == "Large")
        // The always-valid interval of "Large" excludes 0, but its adjusted p-value is not below α.
        let adjusted = Self.arms(
            control: control, [("Flat", Self.rate(0.20, users: 5_000)), ("Large", Self.rate(0.27, users: 5_000))],
            adjusted: [1, 0.06])
        guard case .keepRunning = Self.decide(adjusted) else {
            Issue.record("\(Self.decide(adjusted))")
            return
        }
    }

    @Test("One better and one worse variation: the better ships")
    func betterBeatsWorse() {
        let arms = Self.arms(
            control: Self.rate(0.20, users: 5_000),
            [("Worse", Self.rate(0.15, users: 5_000)), ("Better", Self.rate(0.25, users: 5_000))])
        #expect(Self.decide(arms).winner == "Better")
    }

    @Test("Several variations all worse: the control is kept; some worse and the rest undecided: nothing to roll out")
    func worseKeepsControlOnlyWhenAllAre() {
        let control = Self.rate(0.25, users: 5_000)
        let all = Self.arms(
            control: control, [("A", Self.rate(0.20, users: 5_000)), ("B", Self.rate(0.18, users: 5_000))])
        guard case .worse(let findings, let keep) = Self.decide(all) else {
            Issue.record("\(Self.decide(all))")
            return
        }
        #expect(findings.map(\.variation) == ["B", "A"])
        #expect(keep == "Control")
        let some = Self.arms(
            control: control, [("A", Self.rate(0.20, users: 5_000)), ("C", Self.rate(0.25, users: 5_000))])
        guard case .worse(_, let none) = Self.decide(some) else {
            Issue.record("\(Self.decide(some))")
            return
        }
        #expect(none == nil)
    }
}
