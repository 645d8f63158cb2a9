import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole feature list`.
struct FeatureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feature",
        abstract: "Inspect an environment's features.",
        subcommands: [List.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List features with their kind, state, variations (with the biases the app uses) and labels.")

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let snapshot = try await database.openStore(.readOnly).snapshot(of: try environment.path())
            let listing = FeatureListing(document: snapshot.document)
            if output.json {
                Console.json(listing.jsonValue)
            } else {
                Console.out(listing.text)
            }
        }
    }
}
