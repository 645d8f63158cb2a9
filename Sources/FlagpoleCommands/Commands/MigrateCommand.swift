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
        let address = try database.address
        let before = try await FeatureStore.migrationStatus(at: address)
        if status && before == nil {
            if output.json {
                Console.json([
                    "exists": .bool(false), "applied": .array([]), "pending": .array([]), "unknown": .array([]),
                ])
            } else {
                Console.out(
                    "No database at \(address) yet; `flagpole migrate`, or any command that writes, creates it.")
            }
            return
        }
        let newlyApplied = status ? [] : try await FeatureStore.migrate(address)
        guard let after = try await FeatureStore.migrationStatus(at: address) else { return }
        // What earlier versions stored that no app can take, now that the schema is current.
        let configWarnings =
            status || !after.pending.isEmpty || !after.unknown.isEmpty
            ? [] : try await database.openStore(.readOnly).catalog.configWarnings()
        if output.json {
            let names = { (ids: [String]) in JSONValue.array(ids.map(JSONValue.string)) }
            var object: JSONObject = [
                "exists": .bool(true), "applied": names(after.applied), "pending": names(after.pending),
                "unknown": names(after.unknown),
            ]
            if !status {
                object.append(
                    "configWarnings",
                    .array(
                        configWarnings.flatMap { path, warnings in
                            warnings.map { warning in
                                guard case .object(var issue) = warning.jsonValue else { return warning.jsonValue }
                                issue.members.insert(.init(key: "environment", value: .string(path.description)), at: 0)
                                return .object(issue)
                            }
                        }))
            }
            Console.json(.object(object))
            return
        }
        for (path, warnings) in configWarnings {
            for warning in warnings { Console.error("\(path): config \"\(warning.config ?? "")\": \(warning)") }
        }
        if status {
            for id in after.applied { Console.out("applied  \(id)") }
            for id in after.pending { Console.out("pending  \(id)") }
            for id in after.unknown { Console.out("unknown  \(id)  (made by a newer Flagpole)") }
            return
        }
        Console.out(
            newlyApplied.isEmpty
                ? "\(address) is up to date (\(after.applied.last ?? "no migrations"))."
                : "Applied \(newlyApplied.joined(separator: ", ")) to \(address).")
    }
}
