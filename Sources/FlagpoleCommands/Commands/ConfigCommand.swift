import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole config set|list|show|delete|import|export`: an environment's typed configs.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "An environment's typed configs: what SwiftFeatureConfigs apps and OpenFeature clients read.",
        subcommands: [List.self, Show.self, Set.self, Delete.self, Import.self, Export.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the configs with their type, default, the feature they follow and their tags.")

        @Option(help: ArgumentHelp("Only the configs tagged so.", valueName: "tag"))
        var tag: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let snapshot = try await database.openStore(.readOnly).catalog.configs(in: try environment.path())
            let configs = snapshot.document.configs.filter { config in tag.map(config.tags.contains) ?? true }
            ConfigCommand.print(snapshot.warnings, file: "revision \(snapshot.revision ?? 0)")
            if output.json {
                Console.out(bytes: Config.rendered(configs))
                return
            }
            guard !configs.isEmpty else {
                Console.out("No configs\(tag.map { " tagged \($0)" } ?? ""). Add one with `flagpole config set`.")
                return
            }
            var table = TextTable("NAME", "TYPE", "DEFAULT", "FOLLOWS", "TAGS", "DECLARED")
            for config in configs {
                table.append(
                    config.name, config.type.rawValue, config.defaultValue.shown,
                    config.follows.map { "\($0) (\(config.values.count) values)" } ?? "-",
                    config.tags.joined(separator: ","), ConfigCommand.declared(config) ?? "-")
            }
            Console.out(table.text)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one config's definition.")

        @Argument(help: "The config's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let path = try environment.path()
            let snapshot = try await database.openStore(.readOnly).catalog.configs(in: path)
            guard let config = snapshot.document.config(named: name) else {
                throw ConfigError.configNotFound(path, name: name, existing: snapshot.document.configs.map(\.name))
            }
            ConfigCommand.print(
                snapshot.warnings.filter { $0.config == config.name }, file: "revision \(snapshot.revision ?? 0)")
            if output.json {
                Console.out(bytes: config.rendered())
                return
            }
            var lines = ["\(config.name)  ·  \(config.type)  ·  revision \(snapshot.revision ?? 0)"]
            if let description = config.description { lines.append("description   \(description)") }
            if !config.tags.isEmpty { lines.append("tags          \(config.tags.joined(separator: ", "))") }
            lines.append("default       \(config.defaultValue.shown)")
            if let follows = config.follows {
                lines.append("follows       \(follows)")
                for variant in config.values {
                    lines.append("  \(variant.variation) → \(variant.value.shown)")
                }
            }
            if let declared = ConfigCommand.declared(config) { lines.append("declared      \(declared)") }
            Console.out(lines.joined(separator: "\n"))
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a config, or change the fields given of an existing one, as a new revision.",
            discussion: """
                Values are written as on a command line: true/false, 15, 12.4, any text for a string, a JSON object \
                for json. Examples:
                  flagpole config set numberOfItems --type int --default 15 --tenant acme
                  flagpole config set mainViewTitle --type string --default Welcome \\
                      --follows "Onboarding test" --value "Group A=Welcome" --value "Group B=Hello" --tenant acme
                """)

        @Argument(help: "The config's name: the key apps look the value up by.")
        var name: String

        @Option(help: ArgumentHelp("bool, int, double, string or json (required for a new config).", valueName: "type"))
        var type: String?

        @Option(name: .customLong("default"), help: ArgumentHelp("The default value.", valueName: "value"))
        var defaultValue: String?

        @Option(help: "A sentence for the team.")
        var description: String?

        @Option(
            name: .customLong("tag"),
            help: ArgumentHelp("A tag (repeat for several; replaces the tags).", valueName: "tag"))
        var tags: [String] = []

        @Flag(help: "Remove every tag.")
        var clearTags = false

        @Option(help: ArgumentHelp("The feature whose variation picks the value.", valueName: "feature"))
        var follows: String?

        @Option(
            name: .customLong("value"),
            help: ArgumentHelp(
                "VARIATION=VALUE for the followed feature (repeat; replaces the values).", valueName: "pair"))
        var values: [String] = []

        @Flag(help: "Stop following a feature: everyone gets the default.")
        var unfollow = false

        @Flag(
            help:
                "Write it even though the app's declared type would skip it (a change of type, or a value a Float doesn't hold)."
        )
        var force = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if let type, ConfigType(rawValue: type) == nil {
                throw ValidationError(
                    "--type is one of \(ConfigType.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            if unfollow && (follows != nil || !values.isEmpty) {
                throw ValidationError("--unfollow removes --follows and --value: don't combine them.")
            }
            if clearTags && !tags.isEmpty { throw ValidationError("--clear-tags removes every --tag: choose one.") }
            if let bad = values.first(where: { !$0.contains("=") }) {
                throw ValidationError("--value is VARIATION=VALUE, such as \"Group A=Welcome\"; got \"\(bad)\".")
            }
        }

        func run() async throws {
            let path = try environment.path()
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let snapshot = try await store.catalog.configs(in: path)
            let config = try updated(snapshot.document.config(named: name))
            let outcome = try await store.catalog.setConfig(
                config, in: path, options: revision.options(expected: snapshot.revision ?? 0, isForced: force))
            ConfigCommand.report(outcome, isDryRun: revision.dryRun, json: output.json)
        }

        /// `existing` with the fields given changed, or a new config from them.
        private func updated(_ existing: Config?) throws -> Config {
            guard let type = type.flatMap(ConfigType.init(rawValue:)) ?? existing?.type else {
                throw ValidationError("\"\(name)\" is a new config: give its --type and --default.")
            }
            var config =
                try existing
                ?? Config(
                    name: name, type: type, defaultValue: try ConfigCommand.value(defaultValue, as: type, "--default"))
            if config.type != type {
                guard defaultValue != nil else {
                    throw ValidationError("A new --type needs a new --default of that type.")
                }
                config.type = type
                config.values = []
            }
            if let defaultValue { config.defaultValue = try ConfigCommand.value(defaultValue, as: type, "--default") }
            if let description { config.description = description }
            if clearTags { config.tags = [] } else if !tags.isEmpty { config.tags = tags }
            if unfollow {
                config.follows = nil
                config.values = []
            }
            if let follows { config.follows = follows }
            if !values.isEmpty {
                guard config.follows != nil else { throw ValidationError("--value needs --follows FEATURE.") }
                config.values = try values.map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    return Config.Variant(
                        variation: String(parts[0]),
                        value: try ConfigCommand.value(String(parts[1]), as: type, "--value \(parts[0])"))
                }
            }
            if config.follows != nil && config.values.isEmpty && existing?.follows == nil {
                throw ValidationError(
                    "--follows needs the values: --value VARIATION=VALUE for each variation that differs.")
            }
            return config
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a config, as a new revision.")

        @Argument(help: "The config's name.")
        var name: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome = try await store.catalog.deleteConfig(
                named: name, in: try environment.path(), options: revision.options())
            ConfigCommand.report(outcome, isDryRun: revision.dryRun, json: output.json)
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Import configs: a configs file (replaces them all) or SwiftFeatureConfigs' featureConfigs.json (merges what it declares).",
            discussion: """
                A configs file is what `flagpole config export` writes: {"configs": [...]}, values in their types. \
                SwiftFeatureConfigs' declaration file ({"configCollectionName", "features": [{"type", "name", "key", \
                "default", "doc"}]}) is recognised by its "features" array; its trailing commas are accepted with a \
                warning, and each config is named by its "key", else its "name", as the library looks it up. \
                Importing it again merges, and prints the plan first: new declarations are added; a config no \
                longer declared stays served, marked withdrawn; a default or description the team edited is kept, \
                one nobody edited follows the declaration; a changed type needs --force, since installed apps \
                still read the old one. With --release, the file is recorded as that release's: \
                configs.json?release=R and `config export --format plist --release R` then serve that release only \
                the configs it declares (but those whose key is no property name), so that its persist() never \
                meets a key its class has no getter for.
                """)

        @Argument(help: "The file, or - for standard input.")
        var file: String

        @Option(
            help: ArgumentHelp(
                "Record a declaration file as this release's (5.2): what configs.json?release=5.2 serves.",
                valueName: "release"))
        var release: String?

        @Flag(help: "Apply a change of a declared type, which installed apps skip until they are updated.")
        var force = false

        func validate() throws {
            if let release, !ConfigsDecoder.isValidRelease(release) {
                throw ValidationError("--release is 1 to 64 characters without control characters, such as 5.2.")
            }
        }

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let input = InputFile(argument: file)
            let bytes = try input.read(atMost: DocumentDecoder.maximumInputSize)
            let path = try environment.path()
            let store = try await database.openStore(revision.dryRun ? .readOnly : .readWrite)
            let outcome: ConfigsOutcome
            var merge: DeclarationsMerge?
            do {
                if Self.isDeclarationFile(bytes) {
                    let declarations = try ConfigDeclarations.decode(bytes)
                    ConfigCommand.print(declarations.warnings, file: input.displayName)
                    if declarations.configs.contains(where: { $0.type == .double }) {
                        Console.error(
                            "note: Float and Double declarations become double configs. An app's `as? Float` takes a JSON number only when a Float holds it exactly (12.5, not 12.4): declare Double in the app."
                        )
                    }
                    let snapshot = try await store.catalog.configs(in: path)
                    let plan = DeclarationsMerge(
                        declarations.configs, into: snapshot.document, release: release,
                        leavingOut: declarations.keysWithoutGetters)
                    merge = plan
                    if !output.json {
                        Console.out("Plan for \(path) from \(input.displayName):")
                        for line in plan.lines { Console.out(line) }
                    }
                    outcome = try await store.catalog.importDeclarations(
                        plan, in: path,
                        options: revision.options(expected: snapshot.revision ?? 0, isForced: force),
                        defaultMessage: "import \(input.displayName)")
                } else {
                    if release != nil {
                        throw CommandFailure(
                            "--release is for SwiftFeatureConfigs' featureConfigs.json: a configs file carries its releases in \"releases\"."
                        )
                    }
                    let (document, warnings) = try ConfigsDecoder.decode(bytes)
                    ConfigCommand.print(warnings, file: input.displayName)
                    outcome = try await store.catalog.importConfigs(
                        document, in: path,
                        options: revision.options(isForced: force), defaultMessage: "import \(input.displayName)")
                }
            } catch let refused as ConfigsRefused {
                ConfigCommand.print(refused.issues, file: input.displayName)
                throw CommandFailure("\(input.displayName) refused: nothing was written.")
            } catch ConfigError.refused(_, let issues) {
                // A declaration import's issues point into each config, which they name; a
                // configs file's into the file, where each is located.
                for issue in merge == nil ? ConfigIssue.locating(issues, in: bytes) : issues {
                    Console.error(
                        "\(input.displayName):\(merge != nil ? " config \"\(issue.config ?? "")\": " : "")\(issue.description)"
                    )
                }
                throw CommandFailure("\(input.displayName) refused: nothing was written.")
            }
            if output.json, let merge, case .object(var object) = outcome.jsonValue(isDryRun: revision.dryRun) {
                object.append("plan", merge.jsonValue)
                return Console.json(.object(object))
            }
            ConfigCommand.report(outcome, isDryRun: revision.dryRun, json: output.json)
        }

        /// SwiftFeatureConfigs' declarations have a "features" array where a configs file has "configs".
        static func isDeclarationFile(_ bytes: [UInt8]) -> Bool {
            let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
            return text.contains("\"features\"") && !text.contains("\"configs\"")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Export the configs: their definitions, the dictionary apps receive, or SwiftFeatureConfigs' override plist.",
            discussion: """
                --format json (default): the configs file, for `flagpole config import` and version control.
                --format dictionary: configs.json as apps receive it, for everyone or --user ID.
                --format plist: the same values as the XML property list SwiftFeatureConfigs reads as its override \
                file (<SubclassName>.plist in the app's bundle).
                A --user export records the user's first assignments, as their app's first fetch would.
                """)

        @Option(help: ArgumentHelp("json, dictionary or plist.", valueName: "format"))
        var format = "json"

        @Option(help: ArgumentHelp("This user's values (dictionary and plist).", valueName: "id"))
        var user: String?

        @Option(help: ArgumentHelp("Only the configs tagged so (dictionary and plist).", valueName: "tag"))
        var tag: String?

        @Option(
            help: ArgumentHelp(
                "Only the configs this release of the app declares (dictionary and plist): see config import --release.",
                valueName: "release"))
        var release: String?

        @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
        var output: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            guard ["json", "dictionary", "plist"].contains(format) else {
                throw ValidationError("--format is json, dictionary or plist.")
            }
            if format == "json" && (user != nil || tag != nil || release != nil) {
                throw ValidationError("--user, --tag and --release are for --format dictionary or plist.")
            }
            _ = try user.map(UserOptions.id)
        }

        func run() async throws {
            let path = try environment.path()
            let store = try await database.openStore(user == nil ? .readOnly : .readWrite)
            let bytes: [UInt8]
            if format == "json" {
                bytes = try await store.catalog.configs(in: path).document.rendered()
            } else {
                let values =
                    if let user {
                        try await store.assignments.userConfigs(
                            for: try UserOptions.id(user), in: path, tag: tag, release: release)
                    } else {
                        try await store.catalog.sharedConfigs(in: path, tag: tag, release: release)
                    }
                bytes = format == "plist" ? ConfigPlist.render(values.entries) : values.bytes
            }
            guard let output else { return Console.out(bytes: bytes) }
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: Invocation.current.resolve(output)), options: .atomic)
            } catch {
                throw CommandFailure(
                    "Cannot write \(output): \(error.localizedDescription) Check that its folder exists and is writable."
                )
            }
            Console.error("Wrote the configs of \(path) to \(output) (\(bytes.count) bytes).")
        }
    }

    // MARK: Shared

    /// A value of `type` written on the command line; one that is not is refused (exit 1), as
    /// the API refuses it (422).
    static func value(_ text: String?, as type: ConfigType, _ option: String) throws -> ConfigValue {
        guard let text else { throw ValidationError("Give \(option) of the config (\(type)).") }
        do {
            return try ConfigValue(text: text, as: type)
        } catch {
            throw CommandFailure("\(option): \(error.message); \(error.fix). Nothing was written.")
        }
    }

    /// What the app's declaration says of the config: `Int, default 12`, marked when withdrawn.
    static func declared(_ config: Config) -> String? {
        config.declaration.map {
            "\($0.type), default \($0.defaultValue.shown)\($0.isWithdrawn ? " (no longer declared)" : "")"
        }
    }

    static func print(_ issues: [ConfigIssue], file: String) {
        for issue in issues { Console.error("\(file):\(issue.description)") }
    }

    static func report(_ outcome: ConfigsOutcome, isDryRun: Bool, json: Bool) {
        if json {
            Console.json(outcome.jsonValue(isDryRun: isDryRun))
            return
        }
        if outcome.isUnchanged {
            Console.out("Unchanged: revision \(outcome.revision) already has these configs.")
            return
        }
        for change in outcome.changes {
            let subject =
                change.config.map { "config \"\($0)\"" } ?? change.feature.map { "feature \"\($0)\"" } ?? "configs"
            Console.out("  \(change.kind.rawValue) \(subject)\(change.field.map { " \($0)" } ?? "")")
        }
        Console.out(
            isDryRun
                ? "Would write revision \(outcome.revision) (dry run: nothing written)."
                : "Wrote revision \(outcome.revision).")
    }
}

extension RevisionOptions {
    /// Edit options of this command line, refused if the current revision is not `expected` (0:
    /// none) when given: a command that read before writing never overwrites a change in between.
    func options(expected: Int? = nil, isForced: Bool = false) -> EditOptions {
        EditOptions(
            isDryRun: dryRun, isForced: isForced, message: message, actor: Invocation.current.actor,
            expectedRevision: expected)
    }
}
