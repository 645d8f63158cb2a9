/// The stable codes shared by the CLI, the API, the dashboard and the docs (FORMAT.md §7).
public enum DiagnosticCode: String, Hashable, Sendable, CaseIterable, Comparable {
    case notStrictJSON = "E100"
    case notAFeaturesDocument = "E101"
    case featuresNotAnArray = "E102"
    case featureNotAnObject = "E110"
    case missingName = "E111"
    case wrongType = "E112"
    case invalidTypeObject = "E113"
    /// Not a client rule: SQLite text cannot hold U+0000, so the store refuses it rather than cut the text short.
    case nulCharacter = "E114"
    case biasCountMismatch = "W200"
    case biasSumShort = "W201"
    case biasSumOver = "W202"
    case biasClamped = "W203"
    case biasesOnPlainFlag = "W204"
    case labelCountMismatch = "W210"
    case duplicateName = "W220"
    case singleVariation = "W230"
    case typeIgnored = "W231"
    case unlockedIgnored = "W232"
    case assignmentDropped = "W240"
    case featureAbsent = "W250"
    case flagBecameTest = "W251"
    case needlessMoves = "W252"

    /// Errors make the client reject (or crash on) the document; warnings are what it
    /// accepts but silently changes.
    public var severity: Severity {
        rawValue.hasPrefix("E") ? .error : .warning
    }

    /// Code order: errors first, then warnings, each by number.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether a diagnostic refuses the document.
public enum Severity: String, Hashable, Sendable, Codable {
    case error
    case warning
}
