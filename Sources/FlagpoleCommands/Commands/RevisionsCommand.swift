import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole revisions --tenant SLUG [--env NAME] [--json]`.
struct RevisionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revisions",
        abstract: "List an environment's revisions, newest first.")

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let path = try environment.path()
        let revisions = try await database.openStore(.readOnly).revisions(of: path)
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
}
