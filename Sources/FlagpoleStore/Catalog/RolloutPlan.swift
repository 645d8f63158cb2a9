import FlagpoleCore
import Foundation

/// What a change of a test's ranges does to its users, before it is applied.
public struct RolloutPlan: Hashable, Sendable {
    /// One pair of variations users move between.
    public struct Move: Hashable, Sendable {
        public var from: String
        public var to: String
        /// The share of all users, in percent, from the range geometry alone.
        public var share: Double
        /// Recorded users who will move (QA overrides stay where they are).
        public var recordedUsers: Int
    }

    public var feature: String
    public var before: VariationRanges
    public var after: VariationRanges
    /// Pairs with a share or recorded users, in the order of the old then the new variations.
    public var moves: [Move]
    /// Recorded users of the feature, overrides included.
    public var recordedUsers: Int
    /// How many of the moving users a rule had placed: FeatureFlags apps that keep the point a
    /// rule gave them, which the new ranges move out of the rule's group (docs/TARGETING.md).
    public var movingPlacedByRules = 0

    /// The share of all users that changes group.
    public var movingShare: Double { moves.reduce(0) { $0 + $1.share } }
    /// The recorded users that change group.
    public var movingUsers: Int { moves.reduce(0) { $0 + $1.recordedUsers } }
}

/// The result of a change to one feature (biases, enabled, rollout) or of a rollback.
public struct EditOutcome: Hashable, Sendable {
    /// The new revision, or the current one when nothing changed.
    public var revision: Int
    /// Whether a revision was written (`false` for a dry run or a change to the same content).
    public var isApplied: Bool
    /// Whether the content equals the current revision's, so there is nothing to write.
    public var isUnchanged: Bool
    /// The plan of each test whose ranges change, by feature name.
    public var plans: [RolloutPlan]
    /// Warnings about the edited features (for a rollback, about the whole document).
    public var warnings: [Diagnostic]
}

/// How to apply an edit.
public struct EditOptions: Hashable, Sendable {
    public var isDryRun: Bool
    /// Apply biases the app would ignore.
    public var isForced: Bool
    public var message: String?
    public var actor: String
    /// The revision the caller read (HTTP `If-Match`): the edit is refused if another came first.
    public var expectedRevision: Int?
    /// When the revision is written: the system's clock when `nil`.
    public var time: Date?

    /// Options of an edit by `actor`; the defaults apply it, refusing biases the app would ignore.
    public init(
        isDryRun: Bool = false, isForced: Bool = false, message: String? = nil, actor: String,
        expectedRevision: Int? = nil, time: Date? = nil
    ) {
        self.isDryRun = isDryRun
        self.isForced = isForced
        self.message = message
        self.actor = actor
        self.expectedRevision = expectedRevision
        self.time = time
    }
}

/// One feature with what the store keeps beside it.
public struct FeatureDetail: Hashable, Sendable {
    public var feature: Feature
    /// The salt its users' points are computed with.
    public var salt: String
    /// The environment's current revision.
    public var revision: Int
    /// Users with a recorded group.
    public var recordedUsers: Int
}
