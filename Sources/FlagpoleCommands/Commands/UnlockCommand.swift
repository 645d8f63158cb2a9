import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole unlock NAME --user ID [--source TEXT]`.
struct UnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock an unlock flag for one user, on record (the user's pinned export carries it).")

    @Argument(help: "The unlock flag's name.")
    var name: String

    @OptionGroup var user: UserOptions

    @Option(help: ArgumentHelp("Why: a purchase id, a ticket.", valueName: "text"))
    var source: String?

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await Self.set(true, name, user: try user.id(), source: source, environment, database)
    }

    static func set(
        _ isUnlocked: Bool, _ name: String, user: UserID, source: String?, _ environment: EnvironmentOptions,
        _ database: DatabaseOptions
    ) async throws {
        let changed = try await database.openStore().assignments.setUnlocked(
            isUnlocked, feature: name, user: user, source: source, actor: Invocation.current.actor,
            in: try environment.path())
        let state = isUnlocked ? "unlocked" : "locked"
        Console.out(
            changed
                ? "\(name) is now \(state) for \(user)." : "\(name) was already \(state) for \(user); nothing written.")
    }
}

/// `flagpole lock NAME --user ID`.
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock an unlock flag for one user, on record.")

    @Argument(help: "The unlock flag's name.")
    var name: String

    @OptionGroup var user: UserOptions

    @Option(help: ArgumentHelp("Why: a refund, a ticket.", valueName: "text"))
    var source: String?

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await UnlockCommand.set(false, name, user: try user.id(), source: source, environment, database)
    }
}

/// `flagpole unlocks [--user ID] [--feature NAME]`.
struct UnlocksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlocks",
        abstract: "List users' recorded unlock states, or with --history every unlock and lock.")

    @Option(help: ArgumentHelp("Only this user.", valueName: "id"))
    var user: String?

    @Option(help: ArgumentHelp("Only this unlock flag.", valueName: "name"))
    var feature: String?

    @Flag(help: "Every unlock and lock, newest first, with who made it.")
    var history = false

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        _ = try user.map(UserOptions.id)
    }

    func run() async throws {
        let records = try await database.openStore(.readOnly)
            .assignments.unlocks(
                in: try environment.path(), user: try user.map(UserOptions.id), feature: feature, history: history)
        if output.json {
            Console.json(.array(records.map(\.jsonValue)))
            return
        }
        guard !records.isEmpty else {
            Console.out("No recorded unlocks match.")
            return
        }
        var table = TextTable(
            history
                ? ["FEATURE", "USER", "STATE", "TIME", "SOURCE", "ACTOR"]
                : ["FEATURE", "USER", "STATE", "SINCE", "SOURCE"])
        for record in records {
            let cells = [
                record.feature, record.user.rawValue, record.isUnlocked ? "unlocked" : "locked",
                record.time.iso8601Milliseconds, record.source ?? "",
            ]
            table.rows.append(cells + (history ? [record.actor ?? ""] : []))
        }
        Console.out(table.text)
    }
}

/// `flagpole override NAME --user ID --variation V` and `flagpole override clear NAME --user ID`.
struct OverrideCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "override",
        abstract: "Force a user into a test's variation for QA, until cleared.",
        subcommands: [SetOverride.self, Clear.self],
        defaultSubcommand: SetOverride.self)

    struct SetOverride: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract:
                "Force a user into a variation; bias changes leave them there, and their pinned export lands them there."
        )

        @Argument(help: "The test's name.")
        var name: String

        @OptionGroup var user: UserOptions

        @Option(help: ArgumentHelp("The variation (compared ignoring case).", valueName: "name"))
        var variation: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let assignment = try await database.openStore().assignments.setOverride(
                name, user: try user.id(), variation: variation, in: try environment.path())
            output.json ? Console.json(assignment.jsonValue) : Console.out(assignment.sentence)
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a user's override: they go back to the group of their point.")

        @Argument(help: "The test's name.")
        var name: String

        @OptionGroup var user: UserOptions
        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let assignment = try await database.openStore().assignments.clearOverride(
                name, user: try user.id(), in: try environment.path())
            output.json ? Console.json(assignment.jsonValue) : Console.out(assignment.sentence)
        }
    }
}
