import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole bias set NAME B1 B2 … [--dry-run] [--message TEXT] [--force]`.
struct BiasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bias",
        abstract: "Change a test's biases for a phased roll-out.",
        subcommands: [SetBiases.self])

    struct SetBiases: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract:
                "Set a test's biases: prints who moves (share of all users and recorded users, pair by pair), then applies it as a new revision.",
            discussion: """
                Growing the first or the last group moves only users into it; changing a middle group or \
                re-ordering moves more (warning W252). Biases that don't state the split the app would apply \
                (a count that differs from the variations', a sum short of 100, a sum over 100 beyond rounding) \
                are refused unless --force, saying which split the app would give.
                """)

        @Argument(help: "The test's name.")
        var name: String

        @Argument(help: "One bias per variation, in percent, in order.")
        var biases: [Double]

        @Flag(help: "Store biases the app would ignore or clamp.")
        var force = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var revision: RevisionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !biases.isEmpty else {
                throw ValidationError("Give one bias per variation, e.g. `flagpole bias set \(name) 20 80`.")
            }
            if let bad = biases.first(where: { !$0.isFinite }) {
                throw ValidationError("\(bad) is not a number of percent; biases are finite numbers, e.g. 20 80.")
            }
        }

        func run() async throws {
            let path = try environment.path()
            try await revision.apply(database, output: output, isForced: force) { store, options in
                try await store.catalog.setBiases(biases, of: name, in: path, options: options)
            }
        }
    }
}
