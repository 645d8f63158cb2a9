import FlagpoleCore

/// Why an operation on an environment's configs failed; nothing was written.
public enum ConfigError: FlagpoleError {
    case configNotFound(EnvironmentPath, name: String, existing: [String])
    /// The configs have errors (a value of the wrong type, a feature or variation that doesn't exist).
    case refused(EnvironmentPath, issues: [ConfigIssue])
    /// `?release=` names a release no declaration import recorded.
    case unknownRelease(EnvironmentPath, release: String, known: [String])

    public var description: String {
        switch self {
        case .configNotFound(let path, let name, let existing):
            "\(path) has no config \"\(name)\""
                + (existing.isEmpty
                    ? " (it has none yet): create one with `flagpole config set`."
                    : ". It has \(existing.prefix(10).map { "\"\($0)\"" }.joined(separator: ", "))\(existing.count > 10 ? ", …" : "").")
        case .refused(let path, let issues):
            "Configs of \(path) refused: \(issues.filter { $0.severity == .error }.map(\.description).joined(separator: " | ")). Nothing was written."
        case .unknownRelease(let path, let release, let known):
            "\(path) has no release \"\(release)\": import that release's featureConfigs.json with `flagpole config import featureConfigs.json --release \(release)`"
                + (known.isEmpty ? "." : " (it has \(known.prefix(10).map { "\"\($0)\"" }.joined(separator: ", "))).")
        }
    }

    public var code: String {
        switch self {
        case .configNotFound, .unknownRelease: "not_found"
        case .refused: "invalid_config"
        }
    }
}
