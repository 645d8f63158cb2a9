import ArgumentParser

/// `flagpole`: the command tree. The binary is a thin front end over it (`Sources/flagpole`), and
/// tests run commands in process through `run(_:in:)`.
public struct Flagpole: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "flagpole",
        abstract: "A self-hosted store for the features.json files of the FeatureFlags iOS library.",
        discussion: """
            Every command works on one database: a SQLite file, --db PATH, else $FLAGPOLE_DB, else \
            ./flagpole.sqlite (created and migrated on first use by a command that writes; a command that only \
            reads refuses a missing file, or one whose migrations are pending), or PostgreSQL, \
            --db postgres://USER@HOST/DB, shared by several servers (docs/POSTGRES.md).
            """,
        version: "0.1.0",
        subcommands: [
            DemoCommand.self,
            ValidateCommand.self,
            ImportCommand.self,
            ExportCommand.self,
            PublishCommand.self,
            TenantCommand.self,
            EnvCommand.self,
            FeatureCommand.self,
            ConfigCommand.self,
            SegmentCommand.self,
            RuleCommand.self,
            UserCommand.self,
            MemberCommand.self,
            GoalCommand.self,
            EventsCommand.self,
            ResultsCommand.self,
            EvaluateCommand.self,
            BiasCommand.self,
            RolloutCommand.self,
            RampCommand.self,
            TickCommand.self,
            TriggerCommand.self,
            WebhookCommand.self,
            AssignCommand.self,
            AssignmentsCommand.self,
            UnlockCommand.self,
            LockCommand.self,
            UnlocksCommand.self,
            OverrideCommand.self,
            RevisionsCommand.self,
            DiffCommand.self,
            RollbackCommand.self,
            KeyCommand.self,
            ServeCommand.self,
            MigrateCommand.self,
            CopyCommand.self,
            BackupCommand.self,
            RestoreCommand.self,
        ])

    public init() {}

    /// Runs one command line as the binary runs it, with `invocation`'s variables, working
    /// directory and streams, and returns the exit status: 0, 1 for a failure of the command's
    /// work, 64 for bad arguments (ArgumentParser's own messages and codes).
    public static func run(_ arguments: [String], in invocation: Invocation) async -> Int32 {
        await Invocation.$current.withValue(invocation) {
            do {
                var command = try parseAsRoot(arguments)
                if var asynchronous = command as? any AsyncParsableCommand {
                    try await asynchronous.run()
                } else {
                    try command.run()
                }
                return ExitCode.success.rawValue
            } catch {
                // As ArgumentParser's `main()` ends: help and versions to stdout, the rest to stderr.
                let code = exitCode(for: error)
                let message = fullMessage(for: error)
                if !message.isEmpty {
                    (code == .success ? invocation.standardOutput : invocation.standardError).write(message + "\n")
                }
                return code.rawValue
            }
        }
    }

    /// Runs the process's arguments as bytes, as the system hands them over: one that isn't
    /// UTF-8 is refused (64) before any command runs. Swift's `CommandLine.arguments` would
    /// turn each bad byte into U+FFFD, and the store would keep a name nobody typed.
    public static func run(argumentBytes: [[UInt8]], in invocation: Invocation) async -> Int32 {
        var arguments: [String] = []
        for (index, bytes) in argumentBytes.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let shown = String(decoding: bytes, as: UTF8.self)
                invocation.standardError.write(
                    "Error: argument \(index + 1) (\"\(shown)\") is not valid UTF-8: the store keeps names and values as text, so nothing was run. Write it in UTF-8 (check the terminal's or the script's encoding).\n"
                )
                return ExitCode.validationFailure.rawValue
            }
            arguments.append(text)
        }
        return await run(arguments, in: invocation)
    }
}
