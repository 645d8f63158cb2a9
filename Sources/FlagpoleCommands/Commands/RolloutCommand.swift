import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole rollout NAME [--variation V]`.
struct RolloutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout",
        abstract: "Roll a finished test out to its winner, as a new revision.",
        discussion: """
            A feature on/off A/B test becomes a plain flag, enabled for everyone (or disabled, with \
            --variation Disabled). Any other test keeps its variations, so the app's isTestVariation checks \
            keep working, and the winner gets bias 100. Recorded users move to the winner.
            """)

    @Argument(help: "The test's name.")
    var name: String

    @Option(help: ArgumentHelp("The winning variation (default Enabled for an on/off A/B test).", valueName: "name"))
    var variation: String?

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var revision: RevisionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let path = try environment.path()
        try await revision.apply(database, output: output) { store, options in
            try await store.catalog.rollOut(name, to: variation, in: path, options: options)
        }
    }
}

/// `flagpole rollback --to N`.
struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract:
            "Make an earlier revision's content current again, as a new revision; recorded users are re-evaluated.")

    @Option(help: ArgumentHelp("The revision to go back to.", valueName: "n"))
    var to: Int

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var revision: RevisionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard to >= 1 else { throw ValidationError("--to counts from 1.") }
    }

    func run() async throws {
        let path = try environment.path()
        try await revision.apply(database, output: output) { store, options in
            try await store.catalog.rollBack(path, to: to, options: options)
        }
    }
}

/// `flagpole diff A B`.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "What changed from revision A to revision B: features added, removed and changed, field by field.")

    @Argument(help: "The older revision.")
    var from: Int

    @Argument(help: "The newer revision.")
    var to: Int

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let diff = try await database.openStore(.readOnly).catalog.diff(try environment.path(), from: from, to: to)
        if output.json {
            Console.json(diff.jsonValue)
            return
        }
        guard !diff.changes.isEmpty else {
            Console.out("Revisions \(from) and \(to) have the same content.")
            return
        }
        let compact = JSONWriter(style: .compact)
        Console.out(
            "added: \(diff.addedFeatures.count), removed: \(diff.removedFeatures.count), changed: \(diff.changedFeatures.count)"
        )
        for change in diff.changes {
            // The thing changed: a feature, a config or a segment (by name), then the field.
            let owner =
                change.config.map { "config \"\($0)\"" } ?? change.segment.map { "segment \"\($0)\"" }
                ?? change.feature.map { "\"\($0)\"" }
            let subject = [owner, change.field].compactMap { $0 }.joined(separator: " ")
            let before = change.before.map(compact.string(of:)) ?? "–"
            let after = change.after.map(compact.string(of:)) ?? "–"
            switch change.kind {
            case .added: Console.out("+ \(subject.isEmpty ? "top-level keys" : subject): \(after)")
            case .removed: Console.out("- \(subject.isEmpty ? "top-level keys" : subject): \(before)")
            case .changed: Console.out("~ \(subject.isEmpty ? "top-level key order" : subject): \(before) → \(after)")
            }
        }
    }
}
