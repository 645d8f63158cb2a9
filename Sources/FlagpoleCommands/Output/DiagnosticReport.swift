import FlagpoleCore

/// Diagnostics as compilers print them: `file:line:column: severity: CODE message`, then the fix.
struct DiagnosticReport {
    let file: String
    let diagnostics: [Diagnostic]

    var lines: [String] {
        diagnostics.map { diagnostic in
            let place = diagnostic.location.map { "\(file):\($0.line):\($0.column)" } ?? file
            let feature = diagnostic.feature.map { " [\($0)]" } ?? ""
            return
                "\(place): \(diagnostic.severity.rawValue): \(diagnostic.code.rawValue)\(feature) \(diagnostic.message)\n    fix: \(diagnostic.fix)"
        }
    }

    /// "1 error, 2 warnings" or "no problems".
    var summary: String {
        let errors = diagnostics.errors.count
        let warnings = diagnostics.warnings.count
        if errors == 0 && warnings == 0 { return "no problems" }
        return "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
    }

    /// Prints every diagnostic on stderr.
    func printToStandardError() {
        for line in lines { Console.error(line) }
    }

    /// `{"valid": Bool, "diagnostics": [...]}`, the shape of `validate --json`.
    var jsonValue: JSONValue {
        ["valid": .bool(!diagnostics.hasErrors), "diagnostics": .array(diagnostics.map(\.jsonValue))]
    }
}
