import FlagpoleCore

/// Why a change of rules or segments was refused, worded for the person who can fix it.
public enum TargetingError: FlagpoleError, Hashable {
    /// The rules or the segment have errors: an unknown variation or segment, a variation a
    /// FeatureFlags app couldn't show.
    case refused(EnvironmentPath, issues: [ConfigIssue])
    case segmentNotFound(EnvironmentPath, name: String, existing: [String])
    /// Rules still name the segment: `(feature, rule id)` pairs.
    case segmentInUse(EnvironmentPath, name: String, rules: [String])

    public var description: String {
        switch self {
        case .refused(let path, let issues):
            "Targeting of \(path) refused: \(issues.filter { $0.severity == .error }.map(\.description).joined(separator: " | ")). Nothing was written."
        case .segmentNotFound(let path, let name, let existing):
            "\(path) has no segment \"\(name)\""
                + (existing.isEmpty
                    ? " (it has none yet): create one with `flagpole segment set`."
                    : ". It has \(existing.prefix(10).map { "\"\($0)\"" }.joined(separator: ", "))\(existing.count > 10 ? ", …" : "").")
        case .segmentInUse(let path, let name, let rules):
            "The segment \"\(name)\" of \(path) is used by \(rules.prefix(5).joined(separator: ", "))\(rules.count > 5 ? " and \(rules.count - 5) more" : ""): change those rules first. Nothing was written."
        }
    }

    public var code: String {
        switch self {
        case .refused: "invalid_targeting"
        case .segmentNotFound: "not_found"
        case .segmentInUse: "segment_in_use"
        }
    }
}
