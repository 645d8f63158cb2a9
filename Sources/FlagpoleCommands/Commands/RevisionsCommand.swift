import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole revisions --tenant SLUG [--env NAME] [--since TIME] [--json]`.
struct RevisionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revisions",
        abstract: "List an environment's revisions, newest first.",
        discussion: """
            With --since, the audit feed: the revisions made at or after TIME, oldest first (at most 1 000; ask \
            again from the last one's time), and with --json one object per line, with the fields of the \
            revision.created webhook event (docs/WEBHOOKS.md), for shipping the audit trail to a log system.
            """)

    @Option(help: ArgumentHelp("Only revisions made at or after this time (ISO 8601).", valueName: "time"))
    var since: String?

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let path = try environment.path()
        if let since {
            try await printFeed(of: path, since: try TimeArgument.parse(since, option: "--since"))
            return
        }
        let revisions = try await database.openStore(.readOnly).catalog.revisions(of: path)
        if output.json {
            Console.json(.array(revisions.map(\.jsonValue)))
            return
        }
        guard !revisions.isEmpty else {
            Console.out(
                "\(path) has no revisions yet. Import a file with `flagpole import FILE --tenant \(path.tenant) --env \(path.environment)`."
            )
            return
        }
        var table = TextTable("REVISION", "CREATED", "KIND", "ACTOR", "CHANGES", "BYTES", "MESSAGE")
        for revision in revisions {
            table.append(
                String(revision.number), revision.createdAt.iso8601, revision.kind.rawValue, revision.actor,
                String(revision.changeCount), String(revision.size), revision.message)
        }
        Console.out(table.text)
    }

    /// The audit feed: one JSON object per line with --json, else one line of text each.
    private func printFeed(of path: EnvironmentPath, since time: Date) async throws {
        let events = try await database.openStore(.readOnly).changes.revisionEvents(in: path, since: time)
        let lines = events.map { event in
            guard !output.json else { return JSONWriter(style: .compact).string(of: event.jsonValue) }
            guard case .object(let object) = event.jsonValue, case .string(let text)? = object["text"] else {
                return "revision \(event.revision)"
            }
            return "\(event.createdAt.iso8601)  \(text)"
        }
        if !lines.isEmpty { Console.out(lines.joined(separator: "\n")) }
    }
}
