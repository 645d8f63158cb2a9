import ArgumentParser
import FlagpoleCore

/// `flagpole validate FILE [--json]`: the client's verdict on a file, no database needed.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a features.json as the app reads it: errors it would reject, warnings it silently changes.",
        discussion: "Exits 0 when the app would accept the file (warnings allowed), 1 when it has errors.")

    @Argument(help: ArgumentHelp("The file to check, or - for standard input.", valueName: "file"))
    var file: String

    @OptionGroup var output: OutputOptions

    func run() throws {
        let input = InputFile(argument: file)
        let decoded = DocumentDecoder.decode(try input.read(atMost: DocumentDecoder.maximumInputSize))
        let report = DiagnosticReport(file: input.displayName, diagnostics: decoded.diagnostics)
        if output.json {
            Console.json(report.jsonValue)
        } else {
            report.printToStandardError()
            let features =
                decoded.document.map { " (\($0.features.count) feature\($0.features.count == 1 ? "" : "s"))" } ?? ""
            Console.out("\(input.displayName): \(decoded.isValid ? "valid" : "invalid")\(features), \(report.summary)")
        }
        if !decoded.isValid { throw ExitCode.failure }
    }
}
