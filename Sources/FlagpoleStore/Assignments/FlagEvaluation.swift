import FlagpoleCore

/// A feature or a config evaluated as one typed flag, as OpenFeature clients and
/// `flagpole evaluate` receive it.
public struct FlagEvaluation: Hashable, Sendable {
    /// Why the flag has its value, in OpenFeature's words.
    public enum Reason: String, Hashable, Sendable {
        /// The same for every user: a plain flag, an unlock flag's default, a config's default.
        case `static` = "STATIC"
        /// Bucketed: the user's point falls in the variation's range.
        case split = "SPLIT"
        /// Decided for this user: a targeting rule, a QA override, a recorded unlock.
        case targetingMatch = "TARGETING_MATCH"
        /// The feature is off: disabled, or a development flag in a release build.
        case disabled = "DISABLED"
    }

    /// The flag's key: the feature's or config's name.
    public var key: String
    public var value: ConfigValue
    /// The variation the value comes from; a plain flag's state; `default` for a config's default.
    public var variant: String
    public var reason: Reason
    /// The revision evaluated: the flag's version.
    public var revision: Int
    /// The feature's kind (`ab-test`, `flag`, …) or `config`.
    public var kind: String
    /// The variation's analytics label, when it has one.
    public var label: String?
    /// The id of the targeting rule that decided the variation, when one did.
    public var rule: String? = nil
    /// The rule that placed a FeatureFlags app's point at its first fetch, when it no longer
    /// decides (`Evaluation.firstRule`): the reason is then `SPLIT`.
    public var firstRule: String? = nil
}

/// A flag that has no value for this request.
public enum FlagProblem: Error, Hashable, Sendable {
    /// No feature or config has this key.
    case notFound(key: String)
    /// The flag is a test (or a config that follows one) and the request names no user.
    case targetingKeyMissing(key: String)

    public var key: String {
        switch self {
        case .notFound(let key), .targetingKeyMissing(let key): key
        }
    }

    /// OpenFeature's error code.
    public var code: String {
        switch self {
        case .notFound: "FLAG_NOT_FOUND"
        case .targetingKeyMissing: "TARGETING_KEY_MISSING"
        }
    }

    public var details: String {
        switch self {
        case .notFound(let key):
            "There is no feature or config \"\(key)\" in this environment (keys are case-sensitive)."
        case .targetingKeyMissing(let key):
            "\"\(key)\" splits users between variations: give the user's id as context.targetingKey."
        }
    }
}

/// Every flag of an environment evaluated for one request.
public struct FlagEvaluations: Hashable, Sendable {
    public var revision: Int
    /// In the document's order: features, then configs.
    public var flags: [Result<FlagEvaluation, FlagProblem>]

    public init(revision: Int, flags: [Result<FlagEvaluation, FlagProblem>]) {
        self.revision = revision
        self.flags = flags
    }
}

extension FlagEvaluation {
    /// The evaluation as OFREP answers it: `{"key", "value", "reason", "variant", "metadata":
    /// {"revision", "kind", "label"?, "rule"?, "firstRule"?}}`, compact. Written by hand because a value's type must
    /// show: a double keeps its decimal point (`2.0`), which `JSONValue` would drop.
    public func writeJSON(into output: inout [UInt8]) {
        output.append(contentsOf: #"{"key":"#.utf8)
        JSONWriter.writeString(key, into: &output)
        output.append(contentsOf: #","value":"#.utf8)
        value.writeJSON(into: &output)
        output.append(contentsOf: #","reason":""#.utf8)
        output.append(contentsOf: reason.rawValue.utf8)
        output.append(contentsOf: #"","variant":"#.utf8)
        JSONWriter.writeString(variant, into: &output)
        output.append(contentsOf: #","metadata":{"revision":"#.utf8)
        output.append(contentsOf: String(revision).utf8)
        output.append(contentsOf: #","kind":"#.utf8)
        JSONWriter.writeString(kind, into: &output)
        if let label {
            output.append(contentsOf: #","label":"#.utf8)
            JSONWriter.writeString(label, into: &output)
        }
        if let rule {
            output.append(contentsOf: #","rule":"#.utf8)
            JSONWriter.writeString(rule, into: &output)
        }
        if let firstRule {
            output.append(contentsOf: #","firstRule":"#.utf8)
            JSONWriter.writeString(firstRule, into: &output)
        }
        output.append(contentsOf: "}}".utf8)
    }
}

extension FlagProblem {
    /// `{"key", "errorCode", "errorDetails"}`, as OFREP answers a flag without a value.
    public var jsonValue: JSONValue {
        ["key": .string(key), "errorCode": .string(code), "errorDetails": .string(details)]
    }
}
