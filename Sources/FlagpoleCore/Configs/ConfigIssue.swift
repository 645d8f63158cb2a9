/// A problem in a configs file or a config sent to the API: what, where, and how to fix it.
public struct ConfigIssue: Hashable, Sendable, CustomStringConvertible {
    public var severity: Severity
    /// The config concerned, when there is one.
    public var config: String?
    /// Where in the document, as a JSON pointer.
    public var pointer: JSONPointer
    /// Where in the file; `nil` when the problem has no place in it.
    public var location: SourceLocation?
    public var message: String
    public var fix: String

    public init(
        _ severity: Severity, config: String?, pointer: JSONPointer, location: SourceLocation?, message: String,
        fix: String
    ) {
        self.severity = severity
        self.config = config
        self.pointer = pointer
        self.location = location
        self.message = message
        self.fix = fix
    }

    /// `line:column: error: message (at /pointer); fix`, as the CLI prints it.
    public var description: String {
        let place = location.map { "\($0): " } ?? ""
        let pointerText = pointer == .root ? "" : " (at \(pointer))"
        return "\(place)\(severity.rawValue): \(message)\(pointerText); \(fix)"
    }

    /// The shape the API answers with: `{"severity", "message", "config", "pointer", "line", "column", "fix"}`.
    public var jsonValue: JSONValue {
        [
            "severity": .string(severity.rawValue),
            "message": .string(message),
            "config": config.map(JSONValue.string) ?? .null,
            "pointer": .string(pointer.description),
            "line": location.map { .number(Double($0.line)) } ?? .null,
            "column": location.map { .number(Double($0.column)) } ?? .null,
            "fix": .string(fix),
        ]
    }
}

/// Every configs file, declaration file and config body is refused when it has errors.
public struct ConfigsRefused: Error, Hashable, Sendable {
    public var issues: [ConfigIssue]

    public init(_ issues: [ConfigIssue]) {
        self.issues = issues
    }
}

extension ConfigIssue {
    /// `issues`, each given the line and column in `bytes` (the file its pointer points into) of
    /// the deepest value its pointer reaches, where it has none: the store checks what a file
    /// would write (a declared type, say) after the file is decoded, and knows only pointers.
    public static func locating(_ issues: [ConfigIssue], in bytes: [UInt8]) -> [ConfigIssue] {
        guard issues.contains(where: { $0.location == nil }), let root = try? JSONParser.parse(bytes) else {
            return issues
        }
        let locator = SourceLocator(bytes)
        return issues.map { issue in
            guard issue.location == nil else { return issue }
            var located = issue
            located.location = locator.location(of: deepest(issue.pointer, in: root).offset)
            return located
        }
    }

    /// The deepest value of `root` that `pointer` reaches.
    private static func deepest(_ pointer: JSONPointer, in root: JSONNode) -> JSONNode {
        var node = root
        for token in pointer.tokens {
            let next: JSONNode? =
                switch node.content {
                case .object: node.member(token)?.node
                case .array(let elements): Int(token).flatMap { elements.indices.contains($0) ? elements[$0] : nil }
                default: nil
                }
            guard let next else { break }
            node = next
        }
        return node
    }
}
