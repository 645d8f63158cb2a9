import FlagpoleCore
import Foundation
import GRDB

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
}

extension FeatureStore {
    /// Every feature of the current document as `user`'s app would show it, with the reason.
    /// Reads only, as a recorded user's pinned document does (the revision's plan and one
    /// statement): unlike fetching the pinned document, it records no first assignment.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func evaluate(_ user: UserID, in path: EnvironmentPath) async throws -> [Evaluation] {
        do {
            return try await readUserDocument(for: user, in: path).evaluations
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
        if feature.kind == .unlockFlag {
            let recorded = state.unlocks[stored.id]
            let isUnlocked = recorded ?? feature.unlocked ?? false
            return Evaluation(
                feature: feature.name, kind: feature.kind, variation: isUnlocked ? "Unlocked" : "Locked",
                reason: .unlock, point: nil, isRecorded: recorded != nil)
        }
        if !feature.isEnabled || !feature.isBucketed {
            return Evaluation(
                feature: feature.name, kind: feature.kind, variation: feature.variation(at: 0),
                reason: feature.isEnabled ? .flag : .disabled, point: nil, isRecorded: false)
        }
        if let assignment = state.assignments[stored.id] {
            return Evaluation(
                feature: feature.name, kind: feature.kind, variation: assignment.variation,
                reason: assignment.isOverride ? .override : .bucket, point: assignment.point, isRecorded: true)
        }
        let point = UserPoints(salt: stored.salt).point(for: user.rawValue)
        return Evaluation(
            feature: feature.name, kind: feature.kind, variation: feature.variation(at: point),
            reason: .bucket, point: point, isRecorded: false)
    }
}
