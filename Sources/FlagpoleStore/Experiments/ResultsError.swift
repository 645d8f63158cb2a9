import FlagpoleCore

/// Why an operation on goals, events or results failed; nothing was written.
public enum ResultsError: FlagpoleError, Hashable {
    case invalidGoal(name: String, problem: String)
    case goalExists(EnvironmentPath, name: String)
    case goalNotFound(EnvironmentPath, name: String, existing: [String])
    case batchTooLarge(events: Int, limit: Int)
    /// The feature exists but is no test: it has no variations to compare.
    case notATest(EnvironmentPath, feature: String)
    case epochNotFound(EnvironmentPath, feature: String, epoch: Int, epochs: Int)
    /// A control that is no variation of the test.
    case controlNotAVariation(EnvironmentPath, feature: String, control: String, variations: [String])

    public var description: String {
        switch self {
        case .invalidGoal(let name, let problem):
            "\"\(name)\" can't name a goal: \(problem)."
        case .goalExists(let path, let name):
            "\(path) already has a goal \"\(name)\": goals keep their kind for good; pick another name."
        case .goalNotFound(let path, let name, let existing):
            "\(path) has no goal \"\(name)\""
                + (existing.isEmpty
                    ? " (it has none yet): create one with `flagpole goal create`."
                    : ". It has \(existing.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")).")
        case .batchTooLarge(let events, let limit):
            "A batch holds at most \(limit) events; this one has \(events): send it in parts. Nothing was written."
        case .notATest(let path, let feature):
            "\"\(feature)\" in \(path) is no A/B or multivariate test: only tests have results."
        case .epochNotFound(let path, let feature, let epoch, let epochs):
            "\"\(feature)\" in \(path) has no epoch \(epoch)"
                + (epochs == 0
                    ? " (it has none yet: it has never been part of a revision)." : "; it has 1 to \(epochs).")
        case .controlNotAVariation(let path, let feature, let control, let variations):
            "\"\(control)\" is no variation of \"\(feature)\" in \(path), so it can't be its control: name one of "
                + variations.map { "\"\($0)\"" }.joined(separator: ", ") + "."
        }
    }

    public var code: String {
        switch self {
        case .invalidGoal: "invalid"
        case .goalExists: "exists"
        case .goalNotFound, .epochNotFound: "not_found"
        case .batchTooLarge: "too_large"
        case .notATest: "not_a_test"
        case .controlNotAVariation: "invalid"
        }
    }
}
