import FlagpoleCore
import FlagpoleStore
import Foundation

/// The ramp page: the test's ramp as a timeline, its actions, and the create form.
struct RampPage: Sendable {
    /// One step of the timeline.
    struct Step: Sendable {
        var number: Int
        var share: String
        /// Applied (when, as which revision, by whom, folding what), folded, due, or waiting.
        var status: String
        var time: ShownTime?
        var movedUsers: String?
        /// How many times clients fetched it: a step nobody fetched has told nobody anything.
        var fetches: String?
        var isApplied: Bool
        var isNext: Bool
    }

    /// Something else that happened to the ramp.
    struct Event: Sendable {
        var time: ShownTime
        var text: String
    }

    /// A button that plans an action.
    struct Action: Sendable {
        var name: String
        var label: String
        var isRollBack: Bool
    }

    /// One step's plan, in words.
    struct StepPlan: Sendable {
        var title: String
        /// "applies now", or when it is due by the schedule as it stands; `nil` while not running.
        var when: String?
        var dueTime: ShownTime?
        var moves: [String]
        var summary: String
        var cachedGroups: String?
    }

    /// An action planned: what it will do, and the button that does it.
    struct Confirmation: Sendable {
        var summary: String
        var plans: [StepPlan]
        var name: String
        var label: String
        var variation: String?
        var steps: String
        var hold: String
        var guards: String
        var onFailure: String
        var rollBack: String?
        var start: String
        /// The ramp's guards as it would run, and what a failed one does.
        var guardLines: [String]
        var hasGuardLines: Bool

        init(_ report: RampReport, form: RampForm, now: Date) {
            summary = report.summary
            plans = RampPage.plans(report, now: now)
            let ramp = report.ramp
            guardLines =
                ramp.guards.isEmpty
                ? []
                : ramp.guards.map { "Guard \($0.description)" } + [ramp.failureSentence]
            hasGuardLines = !guardLines.isEmpty
            name = form.do
            label =
                switch form.do {
                case "create": "Start the ramp"
                case "pause": "Pause the ramp"
                case "resume": "Resume the ramp"
                case "advance": "Apply the next step now"
                default: form.rollBack == "true" ? "Abort and roll back to 0 %" : "Abort the ramp"
                }
            variation = form.variation
            steps = form.steps ?? ""
            hold = form.hold ?? ""
            guards = form.guards ?? ""
            onFailure = form.onFailure ?? "pause"
            rollBack = form.rollBack
            start = form.start ?? ""
        }
    }

    /// A trigger of the feature, as listed: never its token.
    struct TriggerRow: Sendable {
        var name: String
        var action: String
        var prefix: String
        var isActive: Bool
        var state: String
        var lastCall: String?
    }

    /// A trigger just made: its URL, shown this once.
    struct CreatedTriggerView: Sendable {
        var name: String
        var url: String
    }

    /// The form that starts a ramp: the variations that can grow, steps, hold, guards and what a
    /// failed goal guard does.
    struct CreateForm: Sendable {
        var variations: [Choice]
        var steps: String
        var hold: String
        var guards: String
        /// When the first step applies, as typed (blank: now).
        var startText: String
        var failureActions: [Choice]
        /// Whether the environment is published to object storage: the form then says why a
        /// guarded ramp here does not watch traffic.
        var publishes: Bool
    }

    /// A guard and its latest look at the holding step.
    struct GuardRow: Sendable {
        var text: String
        var verdict: String
        var reason: String
        var isFailed: Bool
    }

    var chrome: Chrome
    var name: String
    var featureURL: String
    var canEdit: Bool
    var csrf: String
    var error: String?
    var rampTitle: String?
    var state: String?
    var steps: [Step] = []
    var guards: [GuardRow] = []
    var hasGuards = false
    var guardSummary: String?
    var events: [Event] = []
    var hasEvents = false
    var actions: [Action] = []
    /// The plans of the steps to come, when no action is being confirmed.
    var upcoming: [StepPlan] = []
    var hasUpcoming = false
    var create: CreateForm?
    var confirmation: Confirmation?
    var triggers: [TriggerRow]
    var hasTriggers: Bool
    var triggerActions = Trigger.Action.allCases.map {
        Choice(name: RampPage.describe($0), value: $0.rawValue, isSelected: false)
    }
    var createdTrigger: CreatedTriggerView?
    /// The environment's webhooks, where they are added (Settings › Environments › Webhooks).
    var webhooksURL: String
    var revoking: TriggerRow?

    init(
        chrome: Chrome, feature: Feature, featureURL: String, webhooksURL: String, report: RampReport?,
        triggers: [Trigger], canEdit: Bool, csrf: String, draft: RampForm, publishes: Bool
    ) {
        self.chrome = chrome
        self.webhooksURL = webhooksURL
        self.triggers = triggers.map { trigger in
            TriggerRow(
                name: trigger.name, action: Self.describe(trigger.action), prefix: trigger.prefix,
                isActive: trigger.revokedAt == nil,
                state: trigger.revokedAt.map { "revoked \($0.iso8601)" } ?? "active",
                lastCall: trigger.calls.first.map { "\($0.at.iso8601) from \($0.address): \($0.outcome)" })
        }
        hasTriggers = !triggers.isEmpty
        name = feature.name
        self.featureURL = featureURL
        self.canEdit = canEdit
        self.csrf = csrf
        if let report {
            let ramp = report.ramp
            rampTitle =
                "Ramp \(ramp.id): \(ramp.variation) \(ramp.steps.map { Percent.format($0) }.joined(separator: " → ")), each step held \(ramp.hold.phrase). Created by \(ramp.createdBy)."
            state = report.summary
            steps = Self.timeline(report)
            guards = Self.guardRows(ramp)
            hasGuards = !guards.isEmpty
            if hasGuards {
                guardSummary =
                    "Judged from the readout of each step's epoch, against the variation the step takes users from. "
                    + ramp.failureSentence
            }
            events = ramp.events.map { Event(time: ShownTime($0.at), text: Self.text(of: $0)) }
            hasEvents = !events.isEmpty
            upcoming = Self.plans(report)
            hasUpcoming = !upcoming.isEmpty
            if canEdit {
                actions =
                    switch ramp.state {
                    case .running:
                        [
                            Action(name: "pause", label: "Plan pausing", isRollBack: false),
                            Action(name: "advance", label: "Plan the next step now", isRollBack: false),
                        ]
                    case .paused:
                        [
                            Action(name: "resume", label: "Plan resuming", isRollBack: false),
                            Action(name: "advance", label: "Plan the next step now", isRollBack: false),
                        ]
                    case .finished, .aborted: []
                    }
                if ramp.state.isActive {
                    actions += [
                        Action(name: "abort", label: "Plan aborting", isRollBack: false),
                        Action(name: "abort", label: "Plan aborting and rolling back to 0 %", isRollBack: true),
                    ]
                }
            }
        }
        // A test without an active ramp takes one: only a variation at either end can grow.
        if canEdit, feature.kind.isTest, report.map({ !$0.ramp.state.isActive }) ?? true {
            let variations = feature.effectiveVariations
            let ends = variations.count > 1 ? [variations[0], variations[variations.count - 1]] : variations
            let chosen = draft.variation ?? (feature.kind == .onOffABTest ? "Enabled" : ends.last)
            create = CreateForm(
                variations: ends.map {
                    Choice(name: $0, value: $0, isSelected: $0.lowercased() == chosen?.lowercased())
                },
                steps: draft.steps ?? "", hold: draft.hold ?? "", guards: draft.guards ?? "",
                startText: draft.start ?? "",
                failureActions: RampFailureAction.allCases.map {
                    Choice(
                        name: $0 == .pause ? "pause the ramp" : "abort it and roll back to 0 %", value: $0.rawValue,
                        isSelected: $0.rawValue == (draft.onFailure ?? "pause"))
                }, publishes: publishes)
        }
    }

    /// Each guard with its latest look at the step holding now (or the last one looked at).
    private static func guardRows(_ ramp: Ramp) -> [GuardRow] {
        let step = ramp.looks.map(\.step).max()
        return ramp.guards.enumerated().map { index, guardrail in
            let look = ramp.looks.first { $0.step == step && $0.guardIndex == index }
            return GuardRow(
                text: guardrail.description,
                verdict: look.map {
                    "step \($0.step + 1): \($0.verdict.rawValue), \($0.looks) look\($0.looks == 1 ? "" : "s")"
                }
                    ?? "not looked at yet",
                reason: look?.reason ?? "", isFailed: look?.verdict == .fail)
        }
    }

    private static func timeline(_ report: RampReport) -> [Step] {
        let ramp = report.ramp
        return report.stepStatuses.enumerated().map { index, status in
            var step = Step(
                number: index + 1, share: Percent.format(ramp.steps[index]), status: "", isApplied: false,
                isNext: ramp.state.isActive && index == ramp.nextStep)
            switch status {
            case .applied(let applied):
                step.isApplied = true
                step.time = ShownTime(applied.appliedAt)
                step.status =
                    "Applied as revision \(applied.revision) by \(applied.appliedBy)"
                    + (RampStepRecord.folding(applied.folded).map { ", " + $0 } ?? "")
                step.movedUsers =
                    "\(applied.movedUsers.grouped) recorded user\(applied.movedUsers == 1 ? "" : "s") moved"
                step.fetches = applied.fetches.description
            case .folded: step.status = "Folded into a later step after downtime"
            case .due(let date):
                step.time = ShownTime(date)
                step.status = "Due"
            case .waiting: step.status = "Waits until the ramp runs"
            case .notApplied: step.status = "Not applied"
            }
            return step
        }
    }

    /// Each step's plan; `now`, when given, is the time of the action planned: a step due by then
    /// applies now.
    static func plans(_ report: RampReport, now: Date? = nil) -> [StepPlan] {
        let appliedNow = Set(report.applied.map(\.step))
        return report.plans.map { step in
            let plan = step.plan
            let isNow =
                step.step < 0 || appliedNow.contains(step.step)
                || now.flatMap { now in step.dueAt.map { $0 <= now } } == true
            return StepPlan(
                title: step.step < 0
                    ? "Rolling back to 0 %"
                    : "Step \(step.step + 1): \(report.ramp.variation) \(Percent.format(step.share))",
                when: isNow ? "applies now" : step.dueAt.map { _ in "due" },
                dueTime: isNow ? nil : step.dueAt.map(ShownTime.init),
                moves: plan.moves.map(PlanView.sentence),
                summary:
                    "\(Percent.format(plan.movingShare)) of all users change group; \(plan.movingUsers.grouped) of \(plan.recordedUsers.grouped) recorded users move.",
                cachedGroups: plan.movingPlacedByRules > 0
                    ? "\(plan.movingPlacedByRules.grouped) of them were placed by a rule: FeatureFlags apps that keep the rule's point leave its group."
                    : nil)
        }
    }

    /// What a trigger does, in words.
    static func describe(_ action: Trigger.Action) -> String {
        switch action {
        case .pause: "pause the running ramp"
        case .rollback: "abort the ramp, back to 0 %"
        case .disable: "disable the feature"
        }
    }

    private static func text(of event: RampEvent) -> String {
        let detail = event.detail.map { ": \($0)" } ?? ""
        return switch event.kind {
        case .created: "Created by \(event.actor)"
        case .paused: "Paused\(detail)"
        case .resumed: "Resumed by \(event.actor)\(detail)"
        case .aborted: "Aborted\(detail)"
        case .finished: "Finished"
        }
    }
}
