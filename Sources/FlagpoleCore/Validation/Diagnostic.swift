/// One problem in a features.json file: what, where, and how to fix it.
public struct Diagnostic: Hashable, Sendable {
    /// The stable code (docs/FORMAT.md §7).
    public var code: DiagnosticCode
    /// The feature concerned, when there is one.
    public var feature: String?
    /// Where in the document, as a JSON pointer.
    public var pointer: JSONPointer
    /// Where in the file; `nil` for problems with no place in it (a feature that is absent).
    public var location: SourceLocation?
    /// What is wrong and what the app does about it, in one sentence.
    public var message: String
    /// How to fix it, in one sentence.
    public var fix: String

    /// Whether the diagnostic refuses the document: its code's severity.
    public var severity: Severity { code.severity }

    /// Creates a diagnostic.
    public init(
        _ code: DiagnosticCode, feature: String?, pointer: JSONPointer, location: SourceLocation?,
        message: String, fix: String
    ) {
        self.code = code
        self.feature = feature
        self.pointer = pointer
        self.location = location
        self.message = message
        self.fix = fix
    }

    /// The diagnostic as the `validate --json` and API shape:
    /// `{"severity", "code", "message", "feature", "pointer", "line", "column", "fix"}`.
    public var jsonValue: JSONValue {
        [
            "severity": .string(severity.rawValue),
            "code": .string(code.rawValue),
            "message": .string(message),
            "feature": feature.map(JSONValue.string) ?? .null,
            "pointer": .string(pointer.description),
            "line": location.map { .number(Double($0.line)) } ?? .null,
            "column": location.map { .number(Double($0.column)) } ?? .null,
            "fix": .string(fix),
        ]
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object from a literal, keeping the order of its pairs.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}

extension Array where Element == Diagnostic {
    /// Whether any diagnostic refuses the document.
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// The errors only.
    public var errors: [Diagnostic] { filter { $0.severity == .error } }

    /// The warnings only.
    public var warnings: [Diagnostic] { filter { $0.severity == .warning } }
}
