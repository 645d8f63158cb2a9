import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole goal create|list`: what tests are judged on.
struct GoalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goal",
        abstract: "The goals of an environment: what its tests are judged on.",
        subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a goal.",
            discussion: """
                conversion: did the user do it at least once (a rate). count: how many times (a mean per user). \
                value: a sum per user, such as revenue; each event carries a `value`.
                """)

        @Argument(help: "The goal's name, as events name it.")
        var name: String

        @Option(help: ArgumentHelp("conversion, count or value.", valueName: "kind"))
        var kind: String

        @Option(help: ArgumentHelp("Which way is good: higher or lower.", valueName: "direction"))
        var better: String = Goal.Direction.higher.rawValue

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let kind = Goal.Kind(rawValue: kind) else {
                throw ValidationError("--kind is conversion, count or value, not \"\(kind)\".")
            }
            guard let better = Goal.Direction(rawValue: better) else {
                throw ValidationError("--better is higher or lower, not \"\(better)\".")
            }
            let path = try environment.path()
            try await database.openStore().experiments.createGoal(
                Goal(name: name, kind: kind, better: better), in: path)
            Console.out("Created the \(kind.rawValue) goal \"\(name)\" in \(path) (\(better.rawValue) is better).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the goals.")

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let goals = try await database.openStore().experiments.goals(in: try environment.path())
            if output.json {
                Console.json(.array(goals.map(\.jsonValue)))
                return
            }
            var table = TextTable("GOAL", "KIND", "BETTER")
            for goal in goals { table.append(goal.name, goal.kind.rawValue, goal.better.rawValue) }
            Console.out(goals.isEmpty ? "No goals yet: create one with `flagpole goal create`." : table.text)
        }
    }
}

/// `flagpole events import|expire`.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Goal and exposure events: import history, expire raw events.",
        subcommands: [Import.self, Expire.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import events from NDJSON (one event object per line) or CSV (a header row first).",
            discussion: """
                Each event is {id, user, goal, value?, time, feature?} as apps send them; CSV columns are named by \
                the header (id,user,goal,value,time,feature). Events are kept in batches of 1 000, each one \
                transaction; ids already seen are duplicates, so a file imported twice counts once. Events refused \
                are listed with their line and reason; the others are kept.
                """)

        @Argument(help: "The file (.ndjson, .jsonl or .csv), or - for standard input (NDJSON).")
        var file: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let path = try environment.path()
            let store = try await database.openStore()
            let lines = try InputFile(argument: file).read().split(
                separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            let isCSV = file.lowercased().hasSuffix(".csv")
            var header: [String] = []
            var total = EventBatchReport()
            var events: [(index: Int, event: ReceivedEvent)] = []
            var refused: [RefusedEvent] = []
            func flush() async throws {
                let report = try await store.experiments.record(events, refused: refused, in: path)
                total.accepted += report.accepted
                total.duplicates += report.duplicates
                total.refused += report.refused
                events = []
                refused = []
            }
            for (offset, line) in lines.enumerated() {
                let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { continue }
                let number = offset + 1
                let parsed: Result<ReceivedEvent, RefusedEvent>
                if isCSV {
                    let fields = CSVLine.fields(text)
                    if header.isEmpty {
                        header = fields.map { $0.lowercased() }
                        continue
                    }
                    parsed = EventParser.event(
                        csvRow: Dictionary(zip(header, fields), uniquingKeysWith: { a, _ in a }), index: number,
                        receivedAt: Date())
                } else {
                    do {
                        parsed = EventParser.event(
                            try JSONParser.parse(Array(text.utf8)), index: number, receivedAt: Date())
                    } catch {
                        parsed = .failure(
                            RefusedEvent(index: number, id: nil, reason: .invalid, message: "not JSON: \(error)"))
                    }
                }
                switch parsed {
                case .success(let event): events.append((number, event))
                case .failure(let refusal): refused.append(refusal)
                }
                if events.count + refused.count == Experiments.eventsPerBatch { try await flush() }
            }
            try await flush()
            if output.json {
                Console.json(total.jsonValue)
                return
            }
            Console.out(
                "\(total.accepted) event\(total.accepted == 1 ? "" : "s") accepted, \(total.duplicates) duplicate\(total.duplicates == 1 ? "" : "s"), \(total.refused.count) refused."
            )
            for refusal in total.refused.prefix(50) {
                Console.out(
                    "  line \(refusal.index)\(refusal.id.map { " (\($0))" } ?? ""): \(refusal.reason.rawValue): \(refusal.message)"
                )
            }
            if total.refused.count > 50 { Console.out("  … and \(total.refused.count - 50) more (--json lists all)") }
        }
    }

    struct Expire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "expire",
            abstract: "Delete raw events received longer ago than the retention; the results keep their figures.")

        @Option(
            help: ArgumentHelp(
                "Keep raw events this many days (at least 30, the acceptance window).", valueName: "days"))
        var retentionDays: Int = 90

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            var policy = EventPolicy.standard
            policy.retention = Double(retentionDays) * EventPolicy.days
            if let problem = policy.problem { throw ValidationError("--retention-days: \(problem).") }
            let deleted = try await database.openStore().experiments.expireEvents(policy: policy)
            Console.out(
                "Deleted \(deleted) raw event\(deleted == 1 ? "" : "s") received more than \(retentionDays) days ago.")
        }
    }
}

/// Splits one CSV line: commas, with double-quoted fields that may hold commas and `""`.
enum CSVLine {
    static func fields(_ line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            switch (character, quoted) {
            case ("\"", true):
                // `""` inside quotes is one quote; a lone one closes them.
                if let next = characters.next() {
                    if next == "\"" {
                        field.append("\"")
                    } else {
                        quoted = false
                        if next == "," {
                            fields.append(field)
                            field = ""
                        } else {
                            field.append(next)
                        }
                    }
                } else {
                    quoted = false
                }
            case ("\"", false) where field.isEmpty: quoted = true
            case (",", false):
                fields.append(field)
                field = ""
            default: field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
