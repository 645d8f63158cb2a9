import Foundation

/// A URL an alert in another system (Crashlytics, Sentry) calls to stop a test's ramp or switch
/// a feature off (docs/RAMPS.md).
public struct Trigger: Hashable, Sendable {
    /// What calling it does.
    public enum Action: String, Hashable, Sendable, CaseIterable {
        /// The feature's running ramp pauses.
        case pause
        /// The feature's active ramp is aborted and its variation goes back to 0 %.
        case rollback
        /// The feature is switched off, as one revision; its ramp pauses.
        case disable
    }

    public var prefix: String
    public var name: String
    public var feature: String
    public var action: Action
    public var createdBy: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// Its latest calls, newest first.
    public var calls: [TriggerCall]
}

/// One call of a trigger.
public struct TriggerCall: Hashable, Sendable {
    public var at: Date
    public var address: String
    public var userAgent: String?
    /// Whether it acted (a call within a minute of the last one that acted does not).
    public var acted: Bool
    public var outcome: String
}

/// A trigger just made, with the token its URL carries: shown once, never stored.
public struct CreatedTrigger: Hashable, Sendable {
    public var trigger: Trigger
    public var token: String
}

/// What a call of a trigger did.
public struct TriggerOutcome: Hashable, Sendable {
    public var trigger: Trigger
    public var acted: Bool
    public var outcome: String
    /// The revision it wrote, if it wrote one.
    public var revision: Int?
    /// When it did not act because it acted less than a minute ago: the seconds until it would.
    public var retryAfter: Int?
}

extension Trigger.Action {
    /// The action named `text`.
    ///
    /// - throws: `TriggerError.invalidAction`.
    public init(validating text: String) throws(TriggerError) {
        guard let action = Self(rawValue: text) else { throw TriggerError.invalidAction(text) }
        self = action
    }
}
