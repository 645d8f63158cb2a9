import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole restore FILE [--force]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the database's contents with a backup made by `flagpole backup`.",
        discussion: """
            FILE is checked first, on a copy, and refused, with the database left as it was, when it is not an \
            SQLite database, fails SQLite's integrity or foreign key check, is not a Flagpole database, or was \
            migrated by a newer Flagpole; an older schema is migrated (the copy, never FILE). Then the copy \
            replaces everything in the database in one transaction, through SQLite's backup API, so processes \
            that have the database open see the old contents or the new, never a mix.
            A database that holds tenants is only replaced with --force: take a `flagpole backup` of it first. \
            A running `flagpole serve` keeps the documents it has cached while revision numbers go back: \
            restart it after a restore.
            """)

    @Argument(help: ArgumentHelp("The backup to restore.", valueName: "file"))
    var file: String

    @Flag(help: "Replace a database that holds tenants.")
    var force = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try database.refusePostgres(for: "restore")
        let outcome = try await FeatureStore.restore(
            fromPath: Invocation.current.resolve(file), intoPath: try database.path, replacingData: force)
        if output.json {
            Console.json([
                "file": .string(file), "database": .string(try database.path),
                "fileSchema": outcome.fileSchemaVersion.map(JSONValue.string) ?? .null,
                "restored": outcome.restored.jsonValue, "replaced": outcome.replaced.jsonValue,
            ])
            return
        }
        let restored = outcome.restored
        let migrated =
            outcome.fileSchemaVersion == restored.schemaVersion
            ? "" : ", migrated from \(outcome.fileSchemaVersion ?? "none")"
        Console.out(
            "Restored \(file) into \(try database.path): schema \(restored.schemaVersion ?? "none")\(migrated).")
        Console.out("\(restored.counts).")
        if !restored.environments.isEmpty { Console.out(restored.environmentTable) }
        if outcome.replaced.tenantCount > 0 {
            Console.out("Replaced what was there: \(outcome.replaced.counts).")
            Console.error(
                "A running `flagpole serve` on \(try database.path) keeps the documents it cached: restart it.")
        }
    }
}
