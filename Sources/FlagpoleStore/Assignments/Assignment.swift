import FlagpoleCore
import Foundation

/// A user's current group in a test.
public struct Assignment: Hashable, Sendable {
    public var user: UserID
    public var feature: String
    public var variation: String
    /// The user's point in [0, 100), fixed for the feature's life.
    public var point: Double
    /// The revision the variation was computed under.
    public var revision: Int
    /// Whether a QA override forces the variation.
    public var isOverride: Bool
}

/// Why a user's group was recorded or changed.
public enum AssignmentReason: String, Hashable, Sendable, CaseIterable {
    /// The user was assigned for the first time.
    case first
    /// The biases changed.
    case bias
    /// The variations changed (renamed, added, removed or re-ordered).
    case variations
    /// The feature was enabled or disabled (everyone is `Disabled` while it is off).
    case enable, disable
    /// A test was rolled out to its winner.
    case rollout
    /// An earlier revision was restored.
    case rollback
    /// A QA override was set or cleared.
    case override
    case overrideCleared = "override-cleared"
    /// A revision changed the rules or segments.
    case rules
    /// The user came back with attributes the rules decide otherwise.
    case attributes

    /// The reason a recorded user changes group when `old` becomes `new` in a revision of `kind`.
    static func reevaluation(from old: Feature, to new: Feature, in kind: RevisionKind) -> AssignmentReason {
        switch kind {
        case .rollback: return .rollback
        case .rollout: return .rollout
        case .import, .edit, .bias: break
        }
        if old.isEnabled != new.isEnabled { return new.isEnabled ? .enable : .disable }
        let sameVariations = old.isBucketed == new.isBucketed && old.effectiveVariations == new.effectiveVariations
        return sameVariations ? .bias : .variations
    }
}

/// One entry of the append-only assignment history.
public struct AssignmentEvent: Hashable, Sendable {
    /// Increases with every event: the cursor for paging through history.
    public var id: Int64
    public var user: UserID
    public var feature: String
    /// `nil` for a first assignment.
    public var previousVariation: String?
    public var variation: String
    public var point: Double
    public var revision: Int
    public var reason: AssignmentReason
    public var time: Date
    /// The targeting rule that decided the new group, when one did.
    public var rule: String? = nil
}

/// Which assignment events to read, newest first.
public struct AssignmentEventQuery: Hashable, Sendable {
    public var user: UserID?
    public var feature: String?
    /// Events at or after this time.
    public var since: Date?
    /// Events before this time.
    public var until: Date?
    /// Events older than this event id (the previous page's last id).
    public var before: Int64?
    public var limit: Int

    /// A query of the newest `limit` events, every filter optional.
    public init(
        user: UserID? = nil, feature: String? = nil, since: Date? = nil, until: Date? = nil, before: Int64? = nil,
        limit: Int = 100
    ) {
        self.user = user
        self.feature = feature
        self.since = since
        self.until = until
        self.before = before
        self.limit = limit
    }
}

/// How many users a variation holds.
public struct VariationCount: Hashable, Sendable {
    public var variation: String
    public var users: Int
}

/// What a bulk assignment did.
public struct AssignmentSummary: Hashable, Sendable {
    /// Users assigned for the first time (each with a `first` event).
    public var recorded: Int
    /// Users already recorded: nothing written for them.
    public var known: Int
}

/// Users per variation of a test at one moment.
public struct AssignmentSnapshot: Hashable, Sendable {
    public var time: Date
    public var counts: [VariationCount]
}
