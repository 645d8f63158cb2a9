import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

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
            let outcome = try await store.catalog.setRules(
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
            let snapshot = try await database.openStore(.readOnly).catalog.targeting(in: try environment.path())
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
