import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole assignments [list] …` and `flagpole assignments stats …`.
struct AssignmentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assignments",
        abstract: "Query assignment history, or users per variation now or at a past time.",
        subcommands: [List.self, Stats.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Assignment events, newest first: first assignments and every change of group, with the reason.")

        @Option(help: ArgumentHelp("Only this user's events.", valueName: "id"))
        var user: String?

        @Option(help: ArgumentHelp("Only this feature's events (current or archived).", valueName: "name"))
        var feature: String?

        @Option(
            help: ArgumentHelp(
                "Events at or after this time (ISO 8601, e.g. 2026-11-22T09:30:00Z or 2026-11-22).", valueName: "time"))
        var since: String?

        @Option(help: ArgumentHelp("Events before this time.", valueName: "time"))
        var until: String?

        @Option(help: ArgumentHelp("At most this many events.", valueName: "n"))
        var limit = 100

        @Option(
            help: ArgumentHelp("Events older than this event id: the last id of the previous page.", valueName: "id"))
        var before: Int64?

        @Flag(help: "Print CSV (RFC 4180) with a header row.")
        var csv = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            _ = try query()
            guard limit >= 1 else { throw ValidationError("--limit must be at least 1.") }
            guard !(csv && output.json) else { throw ValidationError("Choose one of --csv and --json.") }
        }

        private func query() throws -> AssignmentEventQuery {
            AssignmentEventQuery(
                user: try user.map(UserOptions.id), feature: feature,
                since: try since.map { try TimeArgument.parse($0, option: "--since") },
                until: try until.map { try TimeArgument.parse($0, option: "--until") },
                before: before, limit: limit)
        }

        func run() async throws {
            let events = try await database.openStore(.readOnly).assignments.assignmentEvents(
                in: try environment.path(), matching: try query())
            if output.json {
                Console.json(.array(events.map(\.jsonValue)))
            } else if csv {
                Console.out(([AssignmentEvent.columns] + events.map(\.cells)).map(CSV.row).joined(separator: "\n"))
            } else if events.isEmpty {
                Console.out("No assignment events match.")
            } else {
                var table = TextTable(
                    "TIME", "USER", "FEATURE", "FROM", "TO", "POINT", "REVISION", "REASON", "ID", "RULE")
                for event in events {
                    var cells = event.cells
                    if cells[3].isEmpty { cells[3] = "–" }
                    table.rows.append(cells)
                }
                Console.out(table.text)
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recorded users per variation of a test, now or as they stood at a past time.")

        @Option(help: ArgumentHelp("The test's name.", valueName: "name"))
        var feature: String

        @Option(help: ArgumentHelp("A past time (ISO 8601); default now.", valueName: "time"))
        var at: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            _ = try at.map { try TimeArgument.parse($0, option: "--at") }
        }

        func run() async throws {
            let time = try at.map { try TimeArgument.parse($0, option: "--at") }
            let counts = try await database.openStore(.readOnly).assignments.assignmentCounts(
                of: feature, in: try environment.path(), at: time)
            let total = counts.reduce(0) { $0 + $1.users }
            if output.json {
                Console.json(counts.jsonValue(feature: feature, at: time ?? Date()))
                return
            }
            var table = TextTable("VARIATION", "USERS", "SHARE")
            for count in counts {
                table.append(
                    count.variation, String(count.users),
                    total == 0 ? "–" : Percent.format(Double(count.users) * 100 / Double(total)))
            }
            Console.out(
                "\(feature) \(time.map { "at \($0.iso8601Milliseconds)" } ?? "now"): \(total) recorded user\(total == 1 ? "" : "s")\n\(table.text)"
            )
        }
    }
}
