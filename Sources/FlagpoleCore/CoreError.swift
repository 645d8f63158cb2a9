/// The errors of FlagpoleCore, worded for the person who can fix them.
public enum CoreError: FlagpoleError, Hashable {
    /// A tenant slug or environment name breaks the slug rules.
    case invalidSlug(kind: String, value: String, reason: String)
    /// A user id breaks the user id rules.
    case invalidUserID(value: String, reason: String)
    /// An operation on tests was asked of a feature that is not one.
    case notATest(feature: String, kind: FeatureKind)
    /// A test with no obvious winner was rolled out without naming one.
    case winnerRequired(feature: String, variations: [String])
    /// A variation the feature does not have.
    case unknownVariation(feature: String, variation: String, variations: [String])

    /// The message for the person who can fix the problem, saying how.
    public var description: String {
        switch self {
        case .invalidSlug(let kind, let value, let reason):
            "\"\(value)\" is not a valid \(kind): \(reason) (for example \"my-app\")."
        case .invalidUserID(let value, let reason):
            "\(JSONWriter(style: .compact).string(of: .string(String(value.prefix(80))))) is not a valid user id: \(reason)."
        case .notATest(let feature, let kind):
            "\"\(feature)\" is \(kind.withArticle), not a test with variations: every user sees the same state, so it has no groups. `flagpole feature list` shows each feature's kind; switch a flag with `flagpole feature enable` or `disable`."
        case .winnerRequired(let feature, let variations):
            "Name the winning variation of \"\(feature)\" with --variation (one of \(Self.list(variations)))."
        case .unknownVariation(let feature, let variation, let variations):
            "\"\(feature)\" has no variation \"\(variation)\"; its variations are \(Self.list(variations)) (compared ignoring case)."
        }
    }

    private static func list(_ names: [String]) -> String {
        names.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    /// Every core error is the caller's input breaking a rule of the format.
    public var code: String { "invalid" }
}
