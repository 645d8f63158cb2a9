import Foundation

/// What a ramp watches while one of its steps holds, judged from the readout of the step's epoch
/// (docs/RAMPS.md, "Guards").
public enum RampGuard: Hashable, Sendable, CustomStringConvertible {
    /// A guardrail goal. It fails when the always-valid interval of the growing variation's
    /// difference against the variation it takes users from lies entirely beyond `threshold` on
    /// the bad side. The threshold is absolute, on the scale the interval is on (a rate for a
    /// conversion goal, a mean total per user otherwise), and signed toward the bad side:
    /// positive for a goal where lower is better. `inPoints`: written in percentage points.
    case goal(String, threshold: Double, inPoints: Bool)
    /// The users the split placed in the step's epoch, against its shares: χ² once, at the end
    /// of the hold (a fixed-sample test looked at every few minutes would pause healthy ramps).
    case sampleRatio
    /// No user joined the step's epoch and no event arrived for it during the hold.
    case traffic
    /// Fewer users than this in the growing variation: the step waits rather than advance.
    case minimumUsers(Int)

    /// The minimum a guarded ramp keeps unless told otherwise: a readout's own minimum.
    public static let defaultMinimumUsers = 100
    /// The p-value below which the sample-ratio guard fails, as the readout's.
    public static let sampleRatioThreshold = 0.001
    /// The one-sided error a ramp's goal guards spend in all: 5 %.
    public static let errorBudget = 0.05

    /// Reads `crashes:+0.2pt`, `purchase:-0.5pt`, `revenue:-2`, `sample-ratio`, `traffic` or
    /// `min-users:500`.
    ///
    /// - throws: `GuardProblem` saying what is wrong and what is expected.
    public init(parsing text: String) throws(GuardProblem) {
        let text = text.trimmingCharacters(in: .whitespaces)
        switch text {
        case "sample-ratio": self = .sampleRatio
        case "traffic": self = .traffic
        default:
            guard let colon = text.lastIndex(of: ":") else {
                throw GuardProblem(
                    text: text,
                    reason:
                        "a guard is `GOAL:+0.2pt` (or `GOAL:-0.5pt` when higher is better), `sample-ratio`, `traffic` or `min-users:N`"
                )
            }
            let name = String(text[..<colon])
            var value = String(text[text.index(after: colon)...])
            if name == "min-users", let users = Int(value), users >= 1 {
                self = .minimumUsers(users)
                return
            }
            let inPoints = value.hasSuffix("pt")
            if inPoints { value.removeLast(2) }
            guard value.first == "+" || value.first == "-", let number = Double(value), number.isFinite, number != 0
            else {
                throw GuardProblem(
                    text: text,
                    reason:
                        "a goal's threshold is signed toward the bad side and not 0: `+0.2pt` when lower is better, `-0.5pt` when higher is"
                )
            }
            self = .goal(name, threshold: inPoints ? number / 100 : number, inPoints: inPoints)
        }
    }

    public var description: String {
        switch self {
        case .goal(let name, let threshold, let inPoints):
            let value = inPoints ? threshold * 100 : threshold
            return "\(name):\(value > 0 ? "+" : "")\(Self.format(value))\(inPoints ? "pt" : "")"
        case .sampleRatio: return "sample-ratio"
        case .traffic: return "traffic"
        case .minimumUsers(let users): return "min-users:\(users)"
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// The one-sided error each goal guard's sequence may spend: the budget split evenly across
    /// the holds that are judged (every step's but the last) and the goal guards, since each
    /// step starts a new epoch and so a new sequence (Bonferroni).
    public static func alpha(steps: Int, goalGuards: Int) -> Double {
        errorBudget / Double(max(1, steps - 1) * max(1, goalGuards))
    }
}

/// Why a guard's text is not one.
public struct GuardProblem: Error, Hashable, Sendable {
    public var text: String
    public var reason: String
}

/// What a guard decided at one look.
public enum GuardVerdict: String, Hashable, Sendable, Codable {
    /// Nothing against the step.
    case pass
    /// Too little evidence yet: the step holds.
    case wait
    /// The guard failed: the ramp pauses or rolls back.
    case fail
}

/// The figures a guard's verdict was made on.
public struct GuardFigures: Hashable, Sendable, Codable {
    /// Users of the growing variation and of the one it takes users from.
    public var users: [Int]?
    /// Their events for the goal.
    public var events: [Int]?
    /// Growing minus source, on the goal's scale.
    public var difference: Double?
    /// The always-valid interval at the guard's error.
    public var low: Double?
    public var high: Double?
    public var threshold: Double?
    /// The one-sided error the interval spends.
    public var alpha: Double?
    /// The sample-ratio χ² test's.
    public var pValue: Double?
    /// The traffic guard's: fetches of the step's revision (or a later one) since it was applied.
    public var fetches: Int?

    public init(
        users: [Int]? = nil, events: [Int]? = nil, difference: Double? = nil, low: Double? = nil,
        high: Double? = nil, threshold: Double? = nil, alpha: Double? = nil, pValue: Double? = nil,
        fetches: Int? = nil
    ) {
        self.fetches = fetches
        self.users = users
        self.events = events
        self.difference = difference
        self.low = low
        self.high = high
        self.threshold = threshold
        self.alpha = alpha
        self.pValue = pValue
    }
}

/// One guard's verdict at one look, with its figures and, in words, why.
public struct GuardLook: Hashable, Sendable {
    public var verdict: GuardVerdict
    public var figures: GuardFigures
    public var reason: String

    public init(verdict: GuardVerdict, figures: GuardFigures, reason: String) {
        self.verdict = verdict
        self.figures = figures
        self.reason = reason
    }

    /// A guardrail goal's look: `growing` against `source` (the variation it takes users from),
    /// failing when the always-valid interval at one-sided error `alpha` lies entirely beyond
    /// `threshold` on the bad side (`threshold` > 0: lower is better). Without a comparison
    /// (fewer than 2 users in either, or no spread) it passes.
    public static func goal(
        _ name: String, growing: ArmTotals, source: ArmTotals, events: [Int], scale: MetricScale,
        threshold: Double, alpha: Double
    ) -> GuardLook {
        var figures = GuardFigures(
            users: [growing.users, source.users], events: events, threshold: threshold, alpha: alpha)
        guard
            let comparison = Comparison.compare(
                treatment: growing, control: source, scale: scale, higherIsBetter: threshold < 0)
        else {
            // No spread (no events yet, or every user alike): nothing against the step. Whether
            // there are users enough to advance is the evidence guard's to say.
            return GuardLook(verdict: .pass, figures: figures, reason: "\(name): nothing to compare yet")
        }
        // A two-sided sequence at 2α bounds each side's error by α.
        let halfWidth = Comparison.sequentialHalfWidth(
            standardError: comparison.standardError, perUserVariances: comparison.perUserVariances, alpha: 2 * alpha)
        let interval = Interval(low: comparison.difference - halfWidth, high: comparison.difference + halfWidth)
        figures.difference = comparison.difference
        figures.low = interval.low
        figures.high = interval.high
        let beyond = threshold > 0 ? interval.low > threshold : interval.high < threshold
        let words =
            "\(name): [\(Self.format(interval.low)), \(Self.format(interval.high))] against \(Self.format(threshold))"
        return GuardLook(
            verdict: beyond ? .fail : .pass, figures: figures,
            reason: beyond ? "\(words): beyond the threshold" : "\(words): not beyond the threshold")
    }

    /// The sample-ratio look at the end of a hold: the users the split placed (`observed`)
    /// against the epoch's shares (`weights`).
    public static func sampleRatio(observed: [Int], weights: [Double]) -> GuardLook {
        guard let check = SampleRatioCheck.test(observed: observed, weights: weights) else {
            return GuardLook(
                verdict: .pass, figures: GuardFigures(users: observed),
                reason: "sample ratio: nobody placed by the split yet")
        }
        let figures = GuardFigures(users: observed, pValue: check.pValue)
        let fails = check.pValue < RampGuard.sampleRatioThreshold
        return GuardLook(
            verdict: fails ? .fail : .pass, figures: figures,
            reason:
                "sample ratio: \(observed.map(String.init).joined(separator: " / ")) placed by the split, p = \(Self.format(check.pValue))"
                + (fails ? ", below \(RampGuard.sampleRatioThreshold): the split is not what the biases say" : ""))
    }

    /// The traffic look at the end of a hold: fails when nobody joined the epoch, no event
    /// arrived and no client fetched the step's revision (or a later one) from this server.
    public static func traffic(users: Int, events: Int, fetches: Int) -> GuardLook {
        let silent = users == 0 && events == 0 && fetches == 0
        return GuardLook(
            verdict: silent ? .fail : .pass,
            figures: GuardFigures(users: [users], events: [events], fetches: fetches),
            reason: silent
                ? "traffic: no user joined the step, no event arrived and no client fetched it during its hold"
                : "traffic: \(users) users joined the step, \(events) events, \(fetches) fetches")
    }

    /// The evidence look at the end of a hold: waits while the split has placed fewer than
    /// `minimum` users in the growing variation since the step.
    public static func evidence(users: Int, minimum: Int, variation: String) -> GuardLook {
        GuardLook(
            verdict: users < minimum ? .wait : .pass, figures: GuardFigures(users: [users]),
            reason: users < minimum
                ? "evidence: \(users) new users placed in \(variation), fewer than \(minimum): the step waits"
                : "evidence: \(users) new users placed in \(variation), at least \(minimum)")
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.4g", value)
    }
}
