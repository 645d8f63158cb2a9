import FlagpoleCore
import Foundation

/// What one user's app shows for one feature, and why.
public struct Evaluation: Hashable, Sendable {
    /// Why the user's app shows that variation.
    public enum Reason: String, Hashable, Sendable {
        /// The feature is disabled: every user sees it off (tests show `Disabled`).
        case disabled
        /// A flag, or a test without variations: every user sees the same state.
        case flag
        /// The user's point falls in this variation's range.
        case bucket
        /// A QA override holds the user in this variation.
        case override
        /// A targeting rule decided the variation (`Evaluation.rule` names it).
        case rule
        /// An unlock flag, in the user's unlock state (or the file's default).
        case unlock
    }

    public var feature: String
    public var kind: FeatureKind
    /// The variation shown: a test's variation, `Enabled`/`Disabled` for a flag, `Unlocked`/`Locked`.
    public var variation: String
    public var reason: Reason
    /// The user's point, for bucketed tests.
    public var point: Double?
    /// Whether the store has this user's group (or unlock state) on record; otherwise it is
    /// what the user would get, and nothing is recorded by evaluating.
    public var isRecorded: Bool
    /// The id of the rule that decided the variation, when one did.
    public var rule: String? = nil
    /// For a FeatureFlags app that keeps its point: the rule that placed it there at its first
    /// fetch, when one did and no longer decides (the app's point does: `reason` is `bucket`).
    public var firstRule: String? = nil
    /// For a FeatureFlags app that keeps its point: the revision it was given that point under.
    public var pinnedRevision: Int? = nil
    /// For a FeatureFlags app that keeps its point, when the rules would now place a user with
    /// the same attributes elsewhere: where a user new to the environment would land, and by
    /// which rule. The app stays put: its cached point wins (FORMAT §6).
    public var newUserPlacement: NewUserPlacement? = nil

    /// Where the rules would place a user new to the environment.
    public struct NewUserPlacement: Hashable, Sendable {
        public var variation: String
        public var rule: String
    }
}

extension Assignments {
    /// Every feature of the current document as `user`'s app would show it, with the reason.
    /// Reads only, as a recorded user's pinned document does (the revision's plan and one
    /// statement): unlike fetching the pinned document, it records no first assignment.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    ///
    /// - parameter attributes: the attributes to evaluate rules with; `nil`: the user's last on record.
    public func evaluate(
        _ user: UserID, in path: EnvironmentPath, attributes: UserAttributes? = nil
    ) async throws -> [Evaluation] {
        do {
            return try await readUserDocument(for: user, in: path, attributes: attributes).evaluations
        } catch DocumentError.noRevision {
            return []
        }
    }
}

extension UserDocumentRead {
    /// What the user's app shows for every feature of the plan's document.
    var evaluations: [Evaluation] {
        plan.features.map(evaluation(of:))
    }

    /// What the user's app shows for `stored`, a feature of the plan's document.
    func evaluation(of stored: StoredFeature) -> Evaluation {
        let feature = stored.feature
        if stored.kind == .unlockFlag {
            let recorded = state.unlocks[stored.id]
            let isUnlocked = recorded ?? feature.unlocked ?? false
            return Evaluation(
                feature: feature.name, kind: stored.kind, variation: isUnlocked ? "Unlocked" : "Locked",
                reason: .unlock, point: nil, isRecorded: recorded != nil)
        }
        // A release app: a development flag is off (FORMAT.md §3); `flagpole evaluate
        // --development` and OFREP's `development` context turn it on (`FlagContext`).
        if stored.kind == .developmentFlag {
            return Evaluation(
                feature: feature.name, kind: stored.kind, variation: "Disabled", reason: .disabled, point: nil,
                isRecorded: false)
        }
        if !feature.isEnabled || !feature.isBucketed {
            // A disabled test still has its users' groups on record, for when it is enabled again.
            return Evaluation(
                feature: feature.name, kind: stored.kind, variation: feature.variation(at: 0),
                reason: feature.isEnabled ? .flag : .disabled, point: nil,
                isRecorded: feature.isBucketed && state.assignments[stored.id] != nil)
        }
        let test = plan.test(featureID: stored.id)
        if let assignment = state.assignments[stored.id] {
            // A client that follows rules gets what they decide with the attributes read, which
            // is what is recorded unless they are new (then this read records it, or, for an
            // evaluation that only reads, reports what would be).
            if let test, !test.rules.isEmpty, !assignment.isOverride, !assignment.isPinned {
                let decision = test.decision(for: context, segments: plan.segments)
                if decision.variation != assignment.variation {
                    return evaluation(of: stored, decision, point: assignment.point, isRecorded: false)
                }
            }
            // A FeatureFlags app keeps the point it was given: that point is what it shows, and a
            // rule that placed it there decides nothing once the rule is gone.
            let point = assignment.isPinned ? assignment.appPoint ?? assignment.point : assignment.point
            let rule = assignment.isOverride ? nil : assignment.rule
            let isRuleGone =
                assignment.isPinned && rule.map { id in !(test?.rules.contains { $0.id == id } ?? false) } ?? false
            var evaluation = Evaluation(
                feature: feature.name, kind: stored.kind, variation: assignment.variation,
                reason: assignment.isOverride ? .override : rule != nil && !isRuleGone ? .rule : .bucket,
                point: point, isRecorded: true, rule: isRuleGone ? nil : rule, firstRule: isRuleGone ? rule : nil)
            if assignment.isPinned, !assignment.isOverride {
                evaluation.pinnedRevision = assignment.revision
                if let test, !test.rules.isEmpty {
                    let decision = test.decision(for: context, segments: plan.segments)
                    if let decidingRule = decision.rule, decision.variation != assignment.variation {
                        evaluation.newUserPlacement = Evaluation.NewUserPlacement(
                            variation: decision.variation, rule: decidingRule)
                    }
                }
            }
            return evaluation
        }
        let point = UserPoints(salt: stored.salt).point(for: user.rawValue)
        let decision =
            test?.decision(for: context, segments: plan.segments)
            ?? PinningPlan.Decision(variation: feature.variation(at: point), rule: nil)
        return evaluation(of: stored, decision, point: point, isRecorded: false)
    }

    private func evaluation(
        of stored: StoredFeature, _ decision: PinningPlan.Decision, point: Double, isRecorded: Bool
    ) -> Evaluation {
        Evaluation(
            feature: stored.feature.name, kind: stored.kind, variation: decision.variation,
            reason: decision.rule != nil ? .rule : .bucket, point: point, isRecorded: isRecorded, rule: decision.rule)
    }
}
