import FlagpoleCore

/// Why an operation on an environment's document: its revisions, imports and edits failed, worded for the person who can fix it.
public enum DocumentError: FlagpoleError {
    case noRevision(EnvironmentPath)
    case revisionNotFound(EnvironmentPath, number: Int, latest: Int?)
    /// The file has errors, or warnings under `--strict`; nothing was written.
    case importRefused(EnvironmentPath, diagnostics: [Diagnostic], isStrict: Bool)
    case featureNotFound(EnvironmentPath, name: String)
    /// Biases the app would ignore; nothing was written.
    case biasesIgnored(feature: String, diagnostics: [Diagnostic])
    /// A write named the revision it expected to change (`If-Match`), and another came first.
    case revisionConflict(EnvironmentPath, expected: Int, current: Int?)
    /// The environment asks a reason of every change (`flagpole env mark --requires-reason`),
    /// and this one came without.
    case reasonRequired(EnvironmentPath)
    /// A description over `Catalog.maximumDescriptionLength` characters.
    case descriptionTooLong(feature: String, length: Int)

    public var description: String {
        switch self {
        case .noRevision(let path):
            "\(path) has no revision yet. Import a file first: `flagpole import FILE --tenant \(path.tenant) --env \(path.environment)`."
        case .revisionNotFound(let path, let number, let latest):
            "\(path) has no revision \(number)"
                + (latest.map { " (revisions run from 1 to \($0))." } ?? " (it has none yet).")
        case .importRefused(let path, let diagnostics, let isStrict):
            isStrict && !diagnostics.hasErrors
                ? "Import into \(path) refused under --strict: \(diagnostics.count) warning(s). Nothing was written."
                : "Import into \(path) refused: \(diagnostics.errors.count) error(s) the app would reject. Nothing was written."
        case .featureNotFound(let path, let name):
            "\(path) has no feature \"\(name)\" (names are case-sensitive). List them with `flagpole feature list --tenant \(path.tenant) --env \(path.environment)`."
        case .biasesIgnored(let feature, let diagnostics):
            "\(Self.ignoredBiases(feature, diagnostics)) Nothing was written; fix them, or force them (--force, \"force\": true in the API) to store them anyway."
        case .revisionConflict(let path, let expected, let current):
            "\(path) is at revision \(current.map(String.init) ?? "none"), not \(expected): someone changed it since you read it. Nothing was written; read the current revision and try again."
        case .descriptionTooLong(let feature, let length):
            "The description of \"\(feature)\" is \(length) characters long; the app shows it in its debug screen, so it is kept to \(Catalog.maximumDescriptionLength). Nothing was written: shorten it."
        case .reasonRequired(let path):
            "\(path) asks a reason for every change: nothing was written. Say what the change is for, such as \"phase 2 of the roll-out\": --message on the command line, \"message\" in the API, the Reason field in the dashboard. (`flagpole env mark \(path.environment) --tenant \(path.tenant) --no-requires-reason` lifts the rule.)"
        }
    }

    /// What is wrong with biases an edit states, each with the split the app would apply instead.
    public static func ignoredBiases(_ feature: String, _ diagnostics: [Diagnostic]) -> String {
        "The app would not apply the split these biases of \"\(feature)\" state: \(diagnostics.map { "\($0.message) (fix: \($0.fix))" }.joined(separator: "; "))."
    }

    public var code: String {
        switch self {
        case .noRevision: "no_revision"
        case .revisionNotFound, .featureNotFound: "not_found"
        case .importRefused, .biasesIgnored: "invalid_document"
        case .revisionConflict: "stale_revision"
        case .reasonRequired: "reason_required"
        case .descriptionTooLong: "invalid_description"
        }
    }
}
