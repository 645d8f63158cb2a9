import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import Foundation

/// `flagpole ramp create|show|list|pause|resume|advance|abort`: phased roll-outs that run themselves.
struct RampCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ramp",
        abstract: "Grow a test's variation step by step, each step held before the next (docs/RAMPS.md).",
        discussion: """
            Steps are applied by `flagpole serve`, or by `flagpole tick` from cron, when their hold is over; each is \
            one revision by the ramp, with the movement plan a bias change shows. Another revision of the test \
            pauses the ramp. Every command takes --dry-run, which shows what it would do and writes nothing.
            """,
        subcommands: [Create.self, Show.self, List.self, Pause.self, Resume.self, Advance.self, Abort.self])

    /// The test a ramp command acts on, and where.
    struct Target: ParsableArguments {
        @Argument(help: "The test's name.")
        var name: String

        @Flag(help: "Show what it would do, with every step's plan; write nothing.")
        var dryRun = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        /// Opens the store (read-only for a dry run), runs `action` at the clock's time, and prints its report.
        func run(
            _ action: (FeatureStore, EnvironmentPath, _ actor: String, _ now: Date) async throws -> RampReport
        ) async throws {
            let path = try environment.path()
            let store = try await database.openStore(dryRun ? .readOnly : .readWrite)
            RampOutput(report: try await action(store, path, Invocation.current.actor, Invocation.current.clock.now))
                .print(json: output.json)
        }

        /// Does `action` to the test's ramp and prints its report.
        func change(_ action: RampAction, rollingBack: Bool = false) async throws {
            try await run { store, path, actor, now in
                try await store.rollouts.changeRamp(
                    action, of: name, in: path, rollingBack: rollingBack, actor: actor, now: now, isDryRun: dryRun)
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Start a ramp: shows every step's plan, then applies the first (now, or at --start).",
            discussion: """
                The growing variation is Enabled for an on/off test; for any other test, name one at either end of \
                the order: only those grow by taking users from their neighbours alone. The last step at 100 rolls the \
                test out as `flagpole rollout` does.
                """)

        @OptionGroup var target: Target

        @Option(help: ArgumentHelp("The variation that grows (default Enabled for an on/off test).", valueName: "name"))
        var variation: String?

        @Option(
            help: ArgumentHelp("Its share at each step, in percent, growing, e.g. 1,5,20,50,100.", valueName: "list"))
        var steps: String

        @Option(
            help: ArgumentHelp(
                "How long each step holds: 24h, 30m, 1d12h, or \"weekdays at 10:00 Europe/Berlin\".",
                valueName: "duration")
        )
        var hold: String

        @Option(help: ArgumentHelp("When the first step is applied (default now).", valueName: "time"))
        var start: String?

        @Option(
            name: .customLong("guard"),
            help: ArgumentHelp(
                "What to watch while a step holds, repeatable: GOAL:+0.2pt (lower is better), GOAL:-0.5pt (higher is better), sample-ratio, traffic, min-users:N. A guarded ramp also keeps sample-ratio, min-users:100 and traffic unless told (traffic only where documents are not published to object storage).",
                valueName: "guard"))
        var guards: [String] = []

        @Option(
            help: ArgumentHelp(
                "What a failed goal guard does: pause, or rollback (abort and give the share back).",
                valueName: "action"))
        var onFailure: String = "pause"

        func run() async throws {
            let request = RampRequest(
                feature: target.name, variation: variation, steps: try RampText.steps(steps),
                hold: try RampHold(parsing: hold),
                start: try start.map { try TimeArgument.parse($0, option: "--start") },
                guards: try guards.map { text throws(RampError) in try RampText.guardrail(text) },
                onFailure: try RampText.failureAction(onFailure))
            try await target.run { store, path, actor, now in
                try await store.rollouts.createRamp(request, in: path, actor: actor, now: now, isDryRun: target.dryRun)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a test's ramp: its steps, their plans, and what happened to it.")

        @OptionGroup var target: Target

        func run() async throws {
            try await target.run { store, path, _, _ in try await store.rollouts.ramp(of: target.name, in: path) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List an environment's ramps.")

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let ramps = try await database.openStore(.readOnly).rollouts.ramps(in: try environment.path())
            if output.json {
                Console.json(.array(ramps.map(\.jsonValue)))
                return
            }
            var table = TextTable("ID", "TEST", "VARIATION", "STEPS", "HOLD", "STATE", "NEXT")
            for ramp in ramps {
                let next =
                    ramp.dueAt.map { "step \(ramp.nextStep + 1) at \($0.iso8601)" } ?? ramp.reason ?? "–"
                table.append(
                    String(ramp.id), ramp.feature, ramp.variation,
                    ramp.steps.map { Percent.format($0) }.joined(separator: " → "),
                    ramp.hold.description, ramp.state.rawValue, next)
            }
            Console.out(ramps.isEmpty ? "No ramps." : table.text)
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pause", abstract: "Pause a running ramp: no step is applied until it is resumed.")

        @OptionGroup var target: Target

        func run() async throws {
            try await target.change(.pause)
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resume",
            abstract: "Resume a paused ramp from the test as it is now: its next step comes a full hold from now.")

        @OptionGroup var target: Target

        func run() async throws {
            try await target.change(.resume)
        }
    }

    struct Advance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "advance", abstract: "Apply a ramp's next step now, whatever its hold, and hold it from now.")

        @OptionGroup var target: Target

        func run() async throws {
            try await target.change(.advance)
        }
    }

    struct Abort: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "abort",
            abstract: "Stop a ramp for good, leaving the test as it is (or, with --roll-back, at 0 %).")

        @OptionGroup var target: Target

        @Flag(help: "Also give the growing variation's share back to its neighbour, as one more revision.")
        var rollBack = false

        func run() async throws {
            try await target.change(.abort, rollingBack: rollBack)
        }
    }
}

/// `flagpole tick`: the scheduled work that is due, once, for teams that don't run `serve`.
struct TickCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tick",
        abstract:
            "Do the scheduled work that is due (ramp steps, webhook deliveries), once: run it from cron where no server runs.",
        discussion: """
            `flagpole serve` does the same every --tick-interval. Running both, or several ticks at once, is safe: \
            each step is applied once and each delivery claimed by one sender, enforced by the database. Then \
            deletes what is kept only for a while (old deliveries, the change sequences' old steps).
            """)

    @Flag(help: "Show what is due; write and send nothing.")
    var dryRun = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup(title: "Webhooks") var webhooks: WebhookOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let store = try await database.openStore(dryRun ? .readOnly : .readWrite)
        let clock = Invocation.current.clock
        let reports = try await store.rollouts.runDueRamps(now: clock.now, isDryRun: dryRun)
        // After the steps, so the news of those applied now goes out with this tick.
        let sent = dryRun ? [] : try await webhooks.sender.sendDue(from: store, now: { clock.now })
        if !dryRun { _ = try await store.changes.prune(now: clock.now, keepingDeliveries: webhooks.deliveriesKept) }
        for failed in sent where failed.attempt.error != nil {
            Console.error(
                "Webhook delivery \(failed.delivery.id) (\(failed.delivery.event)) to \(failed.delivery.url.shown) failed: \(failed.attempt.error!)"
            )
        }
        if output.json {
            Console.json(.array(reports.map(\.jsonValue)))
            return
        }
        for report in reports {
            Console.out("\(report.ramp.path) \(report.ramp.feature): \(report.summary)")
            // The plan of each step applied now, from the records of the moment.
            for plan in report.appliedPlans {
                Console.out(EditReport.lines(of: plan.plan).joined(separator: "\n"))
            }
        }
        if !sent.isEmpty {
            Console.out("Sent \(sent.count { $0.attempt.isDelivered }) of \(sent.count) webhook deliveries due.")
        }
        if reports.isEmpty && sent.isEmpty { Console.out("Nothing is due.") }
    }
}
