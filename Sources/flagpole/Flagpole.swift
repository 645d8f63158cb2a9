import ArgumentParser

@main
struct Flagpole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
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
}
