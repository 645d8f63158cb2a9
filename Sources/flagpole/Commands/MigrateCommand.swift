import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole migrate [--status]`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Bring the database's schema up to date, or show which migrations it has.",
        discussion:
            "Every command that writes migrates on first use; this one makes it explicit. Commands that only read migrate nothing: they refuse a database whose migrations are pending. A database migrated by a newer Flagpole is refused."
    )

    @Flag(help: "Show applied and pending migrations; change nothing.")
    var status = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let path = database.path
        if status && !FileManager.default.fileExists(atPath: path) {
            if output.json {
                Console.json([
                    "exists": .bool(false), "applied": .array([]), "pending": .array([]), "unknown": .array([]),
                ])
            } else {
                Console.out("No database at \(path) yet; `flagpole migrate`, or any command that writes, creates it.")
            }
            return
        }
        let existed = FileManager.default.fileExists(atPath: path)
        let before = existed ? try FeatureStore.migrationStatus(atPath: path) : nil
        if !status { _ = try FeatureStore.open(atPath: path) }
        let after = try FeatureStore.migrationStatus(atPath: path)
        if output.json {
            let names = { (ids: [String]) in JSONValue.array(ids.map(JSONValue.string)) }
            Console.json([
                "exists": .bool(true), "applied": names(after.applied), "pending": names(after.pending),
                "unknown": names(after.unknown),
            ])
            return
        }
        if status {
            for id in after.applied { Console.out("applied  \(id)") }
            for id in after.pending { Console.out("pending  \(id)") }
            for id in after.unknown { Console.out("unknown  \(id)  (made by a newer Flagpole)") }
            return
        }
        let newlyApplied = before?.pending ?? after.applied
        Console.out(
            newlyApplied.isEmpty
                ? "\(path) is up to date (\(after.applied.last ?? "no migrations"))."
                : "Applied \(newlyApplied.joined(separator: ", ")) to \(path).")
    }
}
