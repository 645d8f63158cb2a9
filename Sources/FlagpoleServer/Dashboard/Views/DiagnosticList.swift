import FlagpoleCore

/// Validation diagnostics as the pages list them: code, position, message and fix.
struct DiagnosticList: Sendable {
    struct Item: Sendable {
        struct Location: Sendable {
            var line: Int
            var column: Int
            /// Where the page lists the line (`#L12`), on a page that shows the source.
            var lineLink: String?
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

    /// `listsLines`: the page shows the source with its lines (the import page), so a location
    /// links to its line; elsewhere it is said, not linked to a line the page doesn't have.
    init(_ diagnostics: [Diagnostic], listsLines: Bool = false) {
        self.diagnostics = diagnostics.map { diagnostic in
            Item(
                code: diagnostic.code.rawValue, severity: diagnostic.severity.rawValue, feature: diagnostic.feature,
                location: diagnostic.location.map {
                    Item.Location(line: $0.line, column: $0.column, lineLink: listsLines ? "#L\($0.line)" : nil)
                },
                message: diagnostic.message, fix: diagnostic.fix)
        }
        hasDiagnostics = !diagnostics.isEmpty
    }
}
