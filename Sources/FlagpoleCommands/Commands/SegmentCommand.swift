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
            let outcome = try await store.catalog.setSegment(
                segment, in: try environment.path(), options: revision.options())
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
            let snapshot = try await database.openStore(.readOnly).catalog.targeting(in: try environment.path())
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
            let snapshot = try await database.openStore(.readOnly).catalog.targeting(in: path)
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
            let outcome = try await store.catalog.deleteSegment(
                named: name, in: try environment.path(), options: revision.options())
            TargetingOutput.report(outcome, isDryRun: revision.dryRun, json: output.json, file: nil)
        }
    }
}
