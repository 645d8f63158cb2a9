import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole backup FILE [--force]`.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the whole database into one standalone file, while others keep writing.",
        discussion: """
            The copy is SQLite's online backup of one moment: every write committed before it, none after, \
            while a server or other commands keep writing. It is written beside FILE, checked with SQLite's \
            integrity check and renamed into place, so a backup cut short never leaves a partial FILE. The copy \
            needs no -wal file beside it. An existing FILE is refused unless --force. Bring it back with \
            `flagpole restore FILE`.
            """)

    @Argument(help: ArgumentHelp("The file to write.", valueName: "file"))
    var file: String

    @Flag(help: "Replace FILE if it exists.")
    var force = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try database.refusePostgres(for: "backup")
        let summary = try await database.openStore(.readOnly).backup(
            toPath: Invocation.current.resolve(file), replacingExisting: force)
        if output.json {
            Console.json(["file": .string(file), "database": .string(try database.path), "copied": summary.jsonValue])
            return
        }
        Console.out(
            "Backed up \(try database.path) to \(file): \(summary.byteCount) bytes, schema \(summary.schemaVersion ?? "none")."
        )
        Console.out("\(summary.counts).")
        if !summary.environments.isEmpty { Console.out(summary.environmentTable) }
    }
}
