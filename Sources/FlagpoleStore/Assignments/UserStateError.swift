import FlagpoleCore

/// Why an operation on one user's state: QA overrides and unlocks failed, worded for the person who can fix it.
public enum UserStateError: FlagpoleError {
    case notAnUnlockFlag(feature: String, kind: FeatureKind)
    /// A QA override into a variation that owns no points: the app could never land there.
    case unreachableVariation(feature: String, variation: String)
    case noOverride(feature: String, user: UserID)
    /// A QA override on a disabled test: every app shows it as `Disabled`.
    case testDisabled(feature: String)

    public var description: String {
        switch self {
        case .notAnUnlockFlag(let feature, let kind):
            "\"\(feature)\" is \(kind.withArticle), not an unlock flag: only features with an \"unlocked\" key (and not exactly two variations) can be unlocked per user."
        case .unreachableVariation(let feature, let variation):
            "Variation \"\(variation)\" of \"\(feature)\" owns no users under the current biases, so no app could land in it. Give it a bias first with `flagpole bias set \(feature) …`."
        case .noOverride(let feature, let user):
            "User \"\(user)\" has no override on \"\(feature)\"; nothing to clear."
        case .testDisabled(let feature):
            "\"\(feature)\" is disabled, so every app shows it as \"Disabled\" and an override would not show. Enable it first with `flagpole feature enable \(feature)`."
        }
    }

    public var code: String {
        switch self {
        case .notAnUnlockFlag, .unreachableVariation, .testDisabled: "invalid"
        case .noOverride: "not_found"
        }
    }
}
