import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole segment set|list|show|delete`: an environment's named sets of users.
struct SegmentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "segment",
        abstract: "Segments: named sets of users (listed ids and/or clauses on attributes) that rules reuse.",
        discussion:
            "See docs/TARGETING.md. Rules are kept with each revision and decide users' groups as soon as they are applied: a change is planned from the recorded users and their last attributes (--dry-run shows the plan), then moves the users who follow rules; FeatureFlags apps keep the point they cached.",
        subcommands: [Set.self, List.self, Show.self, Delete.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or replace a segment, as a new revision.",
            discussion: """
                flagpole segment set beta-testers --users-file ids.txt --tenant acme
                flagpole segment set corp --clause '{"attribute": "email", "operator": "endsWith", "values": ["@corp.com"]}'
                flagpole segment set beta-testers --file segment.json   (as the API takes it)
                A users file has one id per line (up to 100 000); blank lines are skipped.
                """)

        @Argument(help: "The segment's name: 1 to 64 letters, digits, '-', '_' or '.'.")
        var name: String

        @Option(help: ArgumentHelp("The whole segment as JSON: description, users, clauses.", valueName: "file"))
        var file: String?

        @Option(help: ArgumentHelp("The users, one id per line (- for standard input).", valueName: "file"))
        var usersFile: String?

        @Option(
            name: .customLong("clause"),
            help: ArgumentHelp("A clause as JSON (repeat: a member matches them all).", valueName: "json"))
        var clauses: [String] = []

        @Option(help: "A sentence for the team.")
        var description: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if file != nil && (usersFile != nil || !clauses.isEmpty || description != nil) {
                throw ValidationError(
                    "--file holds the whole segment: don't combine it with --users-file, --clause or --description.")
            }
        }

        func run() async throws {
            let (segment, source) = try decoded()
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome = try await store.setSegment(segment, in: try environment.path(), options: revision.options())
            TargetingOutput.report(outcome, isDryRun: revision.dryRun, json: output.json, file: source)
        }

        /// The segment the options describe, checked as the API checks it.
        private func decoded() throws -> (Segment, String) {
            var source = "the segment"
            var bytes: [UInt8]
            if let file {
                source = file
                bytes = try InputFile(argument: file).read(atMost: DocumentDecoder.maximumInputSize)
                // Decoded as written, so errors point into the file; a file without a name takes the argument's.
                if case .object(var object) = try? JSONParser.parse(bytes).value {
                    if object["name"] == nil {
                        object.append("name", .string(name))
                        bytes = JSONWriter().bytes(of: .object(object))
                    } else if object["name"] != .string(name) {
                        throw ValidationError("\(file) names another segment than \(name).")
                    }
                }
            } else {
                var object: JSONObject = ["name": .string(name)]
                if let description { object.append("description", .string(description)) }
                if let usersFile {
                    let text = String(decoding: try InputFile(argument: usersFile).read(), as: UTF8.self)
                    let users = text.split(whereSeparator: \.isNewline).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
                        .filter { !$0.isEmpty }.map { JSONValue.string(String($0)) }
                    object.append("users", .array(users))
                }
                if !clauses.isEmpty {
                    object.append(
                        "clauses",
                        .array(
                            try clauses.map { text throws(ValidationError) in
                                do throws(JSONSyntaxError) { return try JSONParser.parse(Array(text.utf8)).value } catch
                                {
                                    throw ValidationError("--clause \(text) is not JSON: \(error.message)")
                                }
                            }))
                }
                bytes = JSONWriter().bytes(of: .object(object))
            }
            return try decode(bytes, source: source)
        }

        private func decode(_ bytes: [UInt8], source: String) throws -> (Segment, String) {
            do {
                return (try TargetingDecoder.decodeSegment(bytes).segment, source)
            } catch {
                ConfigCommand.print(error.issues, file: source)
                throw CommandFailure("\(source) refused: nothing was written.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the segments: users listed, clauses.")

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let snapshot = try await database.openStore(.readOnly).targeting(in: try environment.path())
            if output.json {
                Console.json(.array(snapshot.segments.map(\.jsonValue)))
                return
            }
            guard !snapshot.segments.isEmpty else {
                Console.out("No segments. Make one with `flagpole segment set`.")
                return
            }
            var table = TextTable("NAME", "USERS", "CLAUSES", "DESCRIPTION")
            for segment in snapshot.segments {
                table.append(
                    segment.name, String(segment.users.count), String(segment.clauses.count), segment.description ?? "")
            }
            Console.out(table.text)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one segment, its users listed, as JSON.")

        @Argument(help: "The segment's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let path = try environment.path()
            let snapshot = try await database.openStore(.readOnly).targeting(in: path)
            guard let segment = snapshot.segments.first(where: { $0.name == name }) else {
                throw TargetingError.segmentNotFound(path, name: name, existing: snapshot.segments.map(\.name))
            }
            Console.json(segment.jsonValue)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a segment no rule names, as a new revision.")

        @Argument(help: "The segment's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome = try await store.deleteSegment(
                named: name, in: try environment.path(), options: revision.options())
            TargetingOutput.report(outcome, isDryRun: revision.dryRun, json: output.json, file: nil)
        }
    }
}

/// `flagpole rule set|list`: the ordered rules of a feature.
struct RuleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rule",
        abstract: "A feature's targeting rules: the first that matches a user decides their variation.",
        discussion:
            "See docs/TARGETING.md. Rules are kept with each revision and decide users' groups as soon as they are applied: a change is planned from the recorded users and their last attributes (--dry-run shows the plan), then moves the users who follow rules; FeatureFlags apps keep the point they cached.",
        subcommands: [Set.self, List.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a feature's rules with those of a file ({\"rules\": [...]}), as a new revision.",
            discussion: """
                flagpole rule set "New checkout" --file rules.json --dry-run --tenant acme
                flagpole rule set "New checkout" --clear --tenant acme
                Refused, with the place and a fix: an unknown operator, a value an operator can't compare with, a \
                variation or segment that doesn't exist. Warned of: a rule that can never match.
                """)

        @Argument(help: "The feature's name.")
        var feature: String

        @Option(help: ArgumentHelp("The rules: {\"rules\": [...]} (- for standard input).", valueName: "file"))
        var file: String?

        @Flag(help: "Remove the feature's rules.")
        var clear = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (file == nil) != !clear else { throw ValidationError("Give the rules with --file FILE, or --clear.") }
        }

        func run() async throws {
            var rules: [TargetingRule] = []
            if let file {
                let input = InputFile(argument: file)
                do {
                    rules = try TargetingDecoder.decodeRules(try input.read(atMost: DocumentDecoder.maximumInputSize))
                        .rules
                } catch let refused as ConfigsRefused {
                    ConfigCommand.print(refused.issues, file: input.displayName)
                    throw CommandFailure("\(input.displayName) refused: nothing was written.")
                }
            }
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome = try await store.setRules(
                rules, ofFeature: feature, in: try environment.path(), options: revision.options())
            TargetingOutput.report(outcome, isDryRun: revision.dryRun, json: output.json, file: file)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rules of every feature (or of one), as JSON.")

        @Argument(help: "Only this feature's.")
        var feature: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let snapshot = try await database.openStore(.readOnly).targeting(in: try environment.path())
            let rules = snapshot.featureRules.filter { feature == nil || $0.key == feature }
            Console.json(
                .object(
                    JSONObject(
                        rules.sorted { $0.key < $1.key }.map {
                            JSONObject.Member(key: $0.key, value: .array($0.value.map(\.jsonValue)))
                        })))
        }
    }
}

/// How the targeting commands print what a change did.
enum TargetingOutput {
    /// Who moves in one test: followers of rules pair by pair, with examples, then the apps
    /// that keep their group.
    static func text(of plan: TargetingPlan, isDryRun: Bool) -> String {
        let verb = isDryRun ? "would move" : "moved"
        var lines = [
            "\(plan.feature): \(plan.movingUsers) of \(plan.recordedUsers) recorded user\(plan.recordedUsers == 1 ? "" : "s") \(verb) (\(plan.usersWithAttributes) with attributes on record)"
        ]
        for move in plan.moves {
            let examples = move.examples.map(\.rawValue).joined(separator: ", ")
            lines.append("    \(move.from) → \(move.to): \(move.users)  e.g. \(examples)")
        }
        let kept = plan.keptByApps.reduce(0) { $0 + $1.users }
        if kept > 0 {
            lines.append(
                "  \(kept) FeatureFlags app\(kept == 1 ? "" : "s") keep\(kept == 1 ? "s" : "") its group: the point it cached decides, not rules (FORMAT §6)"
            )
            for move in plan.keptByApps {
                lines.append("    stay in \(move.from) (rules say \(move.to)): \(move.users)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func report(_ outcome: ConfigsOutcome, isDryRun: Bool, json: Bool, file: String?) {
        if json {
            guard case .object(var object) = outcome.jsonValue(isDryRun: isDryRun) else { return }
            object.append("warnings", .array(outcome.warnings.map(\.jsonValue)))
            Console.json(.object(object))
            return
        }
        ConfigCommand.print(outcome.warnings, file: file ?? "rules")
        if outcome.isUnchanged {
            Console.out("Unchanged: revision \(outcome.revision) already has these.")
            return
        }
        for change in outcome.changes {
            let subject =
                change.segment.map { "segment \"\($0)\"" } ?? change.feature.map { "rules of \"\($0)\"" } ?? "targeting"
            let field = change.segment != nil ? change.field.map { " \($0)" } ?? "" : ""
            Console.out("  \(change.kind.rawValue) \(subject)\(field)")
        }
        for plan in outcome.plans { Console.out(text(of: plan, isDryRun: isDryRun)) }
        Console.out(
            isDryRun
                ? "Would write revision \(outcome.revision) (dry run: nothing written)."
                : "Wrote revision \(outcome.revision).")
    }
}
