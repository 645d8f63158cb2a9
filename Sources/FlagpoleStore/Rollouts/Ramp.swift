import FlagpoleCore
import Foundation

/// Where a ramp is.
public enum RampState: String, Hashable, Sendable, CaseIterable {
    /// The next step is applied when its hold is over.
    case running
    /// Waiting for a person: paused by one, or by the ramp itself (another revision changed the test).
    case paused
    /// The last step is applied.
    case finished
    /// Stopped by a person.
    case aborted

    /// Whether the ramp still holds its test: one such ramp per test.
    public var isActive: Bool { self == .running || self == .paused }

    /// What a person can do with a ramp in this state.
    var whatCanBeDone: String {
        switch self {
        case .running: "pause, advance or abort it."
        case .paused: "resume, advance or abort it."
        case .finished, .aborted: "it is over. Start another with `flagpole ramp create`."
        }
    }
}

/// A phased roll-out of one test: one variation grows, step by step, each step held for a
/// while before the next is applied (docs/RAMPS.md).
public struct Ramp: Hashable, Sendable {
    public var id: Int64
    public var path: EnvironmentPath
    public var feature: String
    /// The variation that grows.
    public var variation: String
    /// Its share at each step, in percent.
    public var steps: [Double]
    /// How long each step holds before the next.
    public var hold: RampHold
    /// What it watches while a step holds; none: it never stops on its own, and folds overdue steps.
    public var guards: [RampGuard]
    /// What a failed goal guard does.
    public var onFailure: RampFailureAction
    public var state: RampState
    /// Why it is paused or aborted.
    public var reason: String?
    /// The index of the next step to apply.
    public var nextStep: Int
    /// When the next step is applied, while running.
    public var dueAt: Date?
    public var createdBy: String
    public var createdAt: Date
    /// The steps applied, in order.
    public var applied: [RampStepRecord]
    /// What else happened to it, in order.
    public var events: [RampEvent]
    /// Each guard's latest look at each step's hold, by step then guard.
    public var looks: [RampLookRecord]
}

extension Ramp {
    /// What a failed guard does, in words, and that guards go one step at a time.
    public var failureSentence: String {
        (onFailure == .rollback
            ? "A failed goal guard rolls \(variation) back to 0 %; any other failed guard pauses the ramp."
            : "Any failed guard pauses the ramp.") + " A guarded ramp applies one step at a time, never folding."
    }
}

/// What a ramp does when a guardrail goal fails (a failed sample-ratio or traffic guard pauses).
public enum RampFailureAction: String, Hashable, Sendable, CaseIterable {
    /// The ramp pauses for a person to look.
    case pause
    /// The ramp is aborted and its variation goes back to 0 %.
    case rollback
}

/// A guard's latest look at a step's hold.
public struct RampLookRecord: Hashable, Sendable {
    /// The step whose hold was judged.
    public var step: Int
    /// The guard's index among the ramp's guards.
    public var guardIndex: Int
    public var verdict: GuardVerdict
    public var figures: GuardFigures
    public var reason: String
    /// How many times it looked at the step.
    public var looks: Int
    public var at: Date
}

/// What a person does to a running or paused ramp.
public enum RampAction: String, Hashable, Sendable, CaseIterable {
    case pause, resume, advance, abort
}

/// Where a step of a ramp is.
public enum RampStepStatus: Hashable, Sendable {
    case applied(RampStepRecord)
    /// Skipped after downtime and applied with a later step.
    case folded
    case due(Date)
    /// The ramp is paused: no step is due until it runs again.
    case waiting
    /// The ramp is over without it.
    case notApplied
}

/// A step of a ramp as applied.
public struct RampStepRecord: Hashable, Sendable {
    /// Its index among the ramp's steps.
    public var step: Int
    /// The revision it wrote (the current one when the test had its biases already).
    public var revision: Int
    /// `schedule`, or the person who advanced the ramp.
    public var appliedBy: String
    public var appliedAt: Date
    /// Steps skipped after downtime and applied with this one.
    public var folded: [Int]
    /// Recorded users who changed group.
    public var movedUsers: Int
    /// How many times clients fetched its revision, or a later one before the next step's, from
    /// the servers (a CDN's copies are not seen): a step nobody fetched has told nobody anything.
    public var fetches = FetchCounts()

    /// `folding steps 2, 3` (counting from 1), or `nil` when it folded none.
    public static func folding(_ folded: [Int]) -> String? {
        guard !folded.isEmpty else { return nil }
        return "folding step\(folded.count == 1 ? "" : "s") \(folded.map { String($0 + 1) }.joined(separator: ", "))"
    }
}

/// What happened to a ramp besides its steps.
public struct RampEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case created, paused, resumed, aborted, finished
    }

    public var kind: Kind
    public var actor: String
    public var detail: String?
    public var at: Date
}

/// A ramp's step with what applying it moves (or would).
public struct RampStepPlan: Hashable, Sendable {
    public var step: Int
    public var share: Double
    /// When it is due, by the schedule as it stands (`nil` while the ramp is not running).
    public var dueAt: Date?
    public var plan: RolloutPlan
}

/// What a ramp command did (or, for a dry run, would do): the ramp after it, the steps it
/// applied, and the plan of every step still to come.
public struct RampReport: Hashable, Sendable {
    public var ramp: Ramp
    public var isDryRun: Bool
    /// The steps this action applied (or would).
    public var applied: [RampStepRecord]
    /// The plan of each step applied now, then of every step still to come (a tick leaves
    /// those to `ramp show`).
    public var plans: [RampStepPlan]
    /// In words, what happened (or would).
    public var summary: String

    /// The plans of the steps this action applied.
    public var appliedPlans: [RampStepPlan] {
        let steps = Set(applied.map(\.step))
        return plans.filter { steps.contains($0.step) }
    }

    /// Where each of the ramp's steps is, in order: applied, folded, due (as the plans say), or not.
    public var stepStatuses: [RampStepStatus] {
        let due = Dictionary(plans.filter { $0.step >= 0 }.map { ($0.step, $0.dueAt) }, uniquingKeysWith: { a, _ in a })
        return ramp.steps.indices.map { index in
            if let step = ramp.applied.first(where: { $0.step == index }) { return .applied(step) }
            if ramp.applied.contains(where: { $0.folded.contains(index) }) { return .folded }
            if let dueAt = due[index] ?? nil { return .due(dueAt) }
            return ramp.state.isActive ? .waiting : .notApplied
        }
    }
}

/// How to create a ramp.
public struct RampRequest: Hashable, Sendable {
    public var feature: String
    /// The variation that grows; `nil`: `Enabled` for an on/off test, required otherwise.
    public var variation: String?
    public var steps: [Double]
    public var hold: RampHold
    /// When the first step is applied: now when `nil` or past.
    public var start: Date?
    /// The guards as asked for; a guarded ramp also gets the ones it keeps by default
    /// (`FeatureStore.guards(asked:publishes:)`).
    public var guards: [RampGuard]
    public var onFailure: RampFailureAction

    public init(
        feature: String, variation: String?, steps: [Double], hold: RampHold, start: Date? = nil,
        guards: [RampGuard] = [], onFailure: RampFailureAction = .pause
    ) {
        self.feature = feature
        self.variation = variation
        self.steps = steps
        self.hold = hold
        self.start = start
        self.guards = guards
        self.onFailure = onFailure
    }
}
