import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole feature list|show|enable|disable|tag`.
struct FeatureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feature",
        abstract: "Inspect an environment's features, and switch them on or off.",
        subcommands: [List.self, Show.self, Enable.self, Disable.self, Tag.self, Describe.self])

    struct Tag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a feature's tags (none: remove them), as a new revision; features.json is left as it is.",
            discussion: """
                Tags select what a client asks for: configs.json?tag=ios, OFREP bulk evaluation ?tag=ios, \
                `flagpole evaluate --tag ios`. A "tags" array written in the feature's features.json counts too.
                """)

        @Argument(help: "The feature's name.")
        var name: String

        @Argument(help: "The tags, such as ios watch.")
        var tags: [String] = []

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome = try await store.catalog.setTags(
                tags, ofFeature: name, in: try environment.path(), options: revision.options())
            ConfigCommand.report(outcome, isDryRun: revision.dryRun, json: output.json)
        }
    }

    /// `flagpole feature describe NAME "TEXT"`: the `description` the app shows in its debug screen.
    struct Describe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a feature's description (\"\" removes it), as a new revision; nobody moves.")

        @Argument(help: "The feature's name.")
        var name: String

        @Argument(help: "The description, shown in the app's debug screen.")
        var text: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await revision.apply(database, output: output) { store, options in
                try await store.catalog.setDescription(text, of: name, in: try environment.path(), options: options)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List features with their kind, state, variations (with the biases the app uses) and labels.")

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let snapshot = try await database.openStore(.readOnly).catalog.snapshot(of: try environment.path())
            let listing = FeatureListing(document: snapshot.document)
            if output.json {
                Console.json(listing.document.listingJSON)
            } else {
                Console.out(listing.text)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show one feature: kind, state, variations, biases as written and as the app uses them, labels, salt, revision."
        )

        @Argument(help: "The feature's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let detail = try await database.openStore(.readOnly).catalog.feature(name, in: try environment.path())
            let feature = detail.feature
            let variations = feature.effectiveVariations
            if output.json {
                Console.json(detail.jsonValue)
                return
            }
            var lines = [
                "\(feature.name)  ·  \(feature.kind)  ·  \(feature.isEnabled ? "enabled" : "disabled")  ·  revision \(detail.revision)"
            ]
            if let description = feature.description { lines.append("description   \(description)") }
            if let section = feature.section { lines.append("section       \(section)") }
            if let unlocked = feature.unlocked { lines.append("unlocked      \(unlocked) by default") }
            lines.append("salt          \(detail.salt)")
            if let biases = feature.testBiases {
                lines.append("test-biases   \(biases.map(JSONWriter.format).joined(separator: ", ")) (as written)")
            }
            var table = TextTable("  VARIATION", "BIAS USED", "SHARE", "LABEL")
            let labels = feature.labels ?? []
            for (index, variation) in variations.enumerated() {
                let label = labels.indices.contains(index) ? labels[index] ?? "" : ""
                table.append(
                    "  \(variation)", JSONWriter.format(feature.effectiveBiases[index]),
                    Percent.format(feature.effectiveShares[index]), label)
            }
            lines.append(table.text)
            if feature.isBucketed { lines.append("recorded users \(detail.recordedUsers)") }
            Console.out(lines.joined(separator: "\n"))
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Enable a feature for everyone, as a new revision (recorded users of a test go back to their groups).")

        @Argument(help: "The feature's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await FeatureCommand.setEnabled(true, name, environment, database, revision, output)
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Disable a feature for everyone, as a new revision (recorded users of a test move to \"Disabled\").")

        @Argument(help: "The feature's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            try await FeatureCommand.setEnabled(false, name, environment, database, revision, output)
        }
    }

    private static func setEnabled(
        _ isEnabled: Bool, _ name: String, _ environment: EnvironmentOptions, _ database: DatabaseOptions,
        _ revision: RevisionOptions, _ output: OutputOptions
    ) async throws {
        let path = try environment.path()
        try await revision.apply(database, output: output) { store, options in
            try await store.catalog.setEnabled(isEnabled, feature: name, in: path, options: options)
        }
    }
}
