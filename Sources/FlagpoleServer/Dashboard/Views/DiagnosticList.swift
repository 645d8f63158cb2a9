import FlagpoleCore

/// Validation diagnostics as the pages list them: code, position, message and fix.
struct DiagnosticList: Sendable {
    struct Item: Sendable {
        struct Location: Sendable {
            var line: Int
            var column: Int
        }

        var code: String
        var severity: String
        var feature: String?
        var location: Location?
        var message: String
        var fix: String
    }

    var diagnostics: [Item]
    /// Stored, not computed: templates see stored properties only.
    var hasDiagnostics: Bool

    init(_ diagnostics: [Diagnostic]) {
        self.diagnostics = diagnostics.map { diagnostic in
            Item(
                code: diagnostic.code.rawValue, severity: diagnostic.severity.rawValue, feature: diagnostic.feature,
                location: diagnostic.location.map { Item.Location(line: $0.line, column: $0.column) },
                message: diagnostic.message, fix: diagnostic.fix)
        }
        hasDiagnostics = !diagnostics.isEmpty
    }
}
