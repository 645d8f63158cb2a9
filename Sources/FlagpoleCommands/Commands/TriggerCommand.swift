import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole trigger create|list|revoke`: URLs an alert calls to stop a ramp or switch a feature off.
struct TriggerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "URLs an alert in another system calls to stop a ramp or switch a feature off (docs/RAMPS.md).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Make a trigger of a feature and print its URL, once: POST to it acts.",
            discussion: """
                pause: the feature's running ramp pauses. rollback: its ramp is aborted and the growing variation goes \
                back to 0 %. disable: the feature is switched off (its ramp pauses). Every call is recorded with its \
                caller; a trigger acts at most once a minute.
                """)

        @Argument(help: "The feature (or test) it acts on.")
        var feature: String

        @Option(help: ArgumentHelp("pause, rollback or disable.", valueName: "action"))
        var action: String

        @Option(help: ArgumentHelp("What calls it, e.g. \"Crashlytics velocity alert\".", valueName: "text"))
        var name: String

        @Option(
            help: ArgumentHelp(
                "The address alerts reach the server at (default: $FLAGPOLE_URL, else http://localhost:8080).",
                valueName: "url"))
        var url: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let created = try await database.openStore().rollouts.createTrigger(
                for: feature, action: try Trigger.Action(validating: action), name: name, in: try environment.path(),
                actor: Invocation.current.actor,
                now: Invocation.current.clock.now)
            let server = ServerURL.base(url)
            if output.json {
                Console.json(created.jsonValue(serverURL: server))
                return
            }
            Console.out(created.url(serverURL: server))
            Console.error(
                "Give this URL to the alert (POST, any body). It is shown once; `flagpole trigger revoke \(created.trigger.prefix)` stops it."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List an environment's triggers and their latest calls, never their tokens.")

        @Option(help: ArgumentHelp("Only this feature's.", valueName: "name"))
        var feature: String?

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let triggers = try await database.openStore(.readOnly).rollouts.triggers(
                in: try environment.path(), feature: feature)
            if output.json {
                Console.json(.array(triggers.map(\.jsonValue)))
                return
            }
            var table = TextTable("PREFIX", "NAME", "FEATURE", "ACTION", "STATE", "LAST CALL")
            for trigger in triggers {
                let last =
                    trigger.calls.first.map { "\($0.at.iso8601) from \($0.address): \($0.outcome)" } ?? "never called"
                table.append(
                    trigger.prefix, trigger.name, trigger.feature, trigger.action.rawValue,
                    trigger.revokedAt == nil ? "active" : "revoked", last)
            }
            Console.out(triggers.isEmpty ? "No triggers." : table.text)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a trigger: its URL does nothing from now on.")

        @Argument(help: "The trigger's prefix, as `trigger list` shows it.")
        var prefix: String

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let path = try environment.path()
            try await database.openStore().rollouts.revokeTrigger(prefix, in: path, now: Invocation.current.clock.now)
            Console.out("Revoked the trigger \(prefix) in \(path).")
        }
    }
}
