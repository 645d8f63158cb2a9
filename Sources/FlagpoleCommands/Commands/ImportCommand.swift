import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole import FILE --tenant SLUG [--env NAME] [--dry-run] [--message TEXT] [--strict]`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace an environment's features with a features.json, as one new revision.",
        discussion: """
            Refused (exit 1, nothing written) when the app would reject the file, or on any warning with --strict. \
            Features are matched by name: absent ones are archived and keep their salt; a file identical \
            to the current revision creates no revision.
            """)

    @Argument(help: ArgumentHelp("The file to import, or - for standard input.", valueName: "file"))
    var file: String

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Show what would change; write nothing.")
    var dryRun = false

    @Option(help: "The revision message.")
    var message: String?

    @Flag(help: "Refuse the file on warnings too.")
    var strict = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let input = InputFile(argument: file)
        let bytes = try input.read(atMost: DocumentDecoder.maximumInputSize)
        let path = try environment.path()
        let options = ImportOptions(
            isDryRun: dryRun, isStrict: strict, message: message, defaultMessage: "import \(input.displayName)",
            actor: Invocation.current.actor)
        let outcome: ImportOutcome
        do {
            // The file is decoded on another thread while the store opens (and migrates).
            async let decoded = DocumentDecoder.decode(bytes)
            let store = try await database.openStore(dryRun ? .readOnly : .readWrite)
            outcome = try await store.catalog.importDocument(await decoded, into: path, options: options)
        } catch let error as DocumentError {
            guard case .importRefused(_, let diagnostics, _) = error else { throw error }
            DiagnosticReport(file: input.displayName, diagnostics: diagnostics).printToStandardError()
            Console.error(error.description)
            throw ExitCode.failure
        }
        if output.json {
            Console.json(outcome.jsonValue)
        } else {
            Console.out(ImportSummary(outcome: outcome, file: input.displayName).text)
        }
        DiagnosticReport(file: input.displayName, diagnostics: outcome.warnings).printToStandardError()
    }
}

/// How an import's outcome is shown.
struct ImportSummary {
    let outcome: ImportOutcome
    let file: String

    var text: String {
        let path = outcome.path
        var lines: [String]
        switch outcome.status {
        case .unchanged(let revision):
            return "\(file) is identical to revision \(revision) of \(path): nothing to import."
        case .applied(let revision):
            lines = ["Imported \(file) into \(path) as revision \(revision)."]
        case .planned(let revision):
            lines = ["Dry run: importing \(file) into \(path) would create revision \(revision). Nothing was written."]
        }
        func row(_ label: String, _ names: [String]) {
            guard !names.isEmpty else { return }
            let shown =
                names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", … (\(names.count - 10) more)" : "")
            lines.append(
                "  \(label.padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(names.count).leftPadded(6))  \(shown)"
            )
        }
        row("added", outcome.added.filter { !outcome.returned.contains($0) })
        row("returned", outcome.returned)
        row("changed", outcome.changed)
        row("archived", outcome.archived)
        lines.append(
            "  \("unchanged".padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(outcome.unchangedCount).leftPadded(6))"
        )
        if outcome.reassigned > 0 {
            lines.append("  \(outcome.reassigned) recorded users changed group (their tests' ranges changed).")
        }
        return lines.joined(separator: "\n")
    }

}

extension String {
    func leftPadded(_ width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
