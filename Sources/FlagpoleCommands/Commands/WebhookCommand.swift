import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import Foundation

/// `flagpole webhook add|list|revoke`: where an environment's events are sent.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook",
        abstract: "Tell a chat or another system of an environment's changes (docs/WEBHOOKS.md).",
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Send the environment's events to a URL, and print its signing secret, once.",
            discussion: """
                Events: revision.created (every revision, whoever made it), ramp.step_applied, ramp.paused, \
                ramp.rolled_back, ramp.aborted, ramp.finished, trigger.fired. `flagpole serve` (and `flagpole tick`) \
                sends each as a signed POST (Flagpole-Signature: t=UNIX,v1=HMAC-SHA-256 of "UNIX.BODY"), at least \
                once (Flagpole-Delivery is the id to de-duplicate by), retrying for about 7 hours.
                """)

        @Argument(help: "The https:// URL to POST to.")
        var url: String

        @Option(help: ArgumentHelp("json (Flagpole's body) or slack ({\"text\": …}).", valueName: "format"))
        var format = "json"

        @Option(
            help: ArgumentHelp(
                "The events it hears, comma-separated: names, families (ramp.*) or * (default: every event there is now, kept as that list).",
                valueName: "events"))
        var events: String?

        @Flag(
            help: "Allow a loopback, private or link-local address: the server then needs --allow-private-webhooks too."
        )
        var allowPrivate = false

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let created = try await database.openStore().outbound.createWebhook(
                at: url, format: try WebhookFormat(validating: format),
                events: try events.map { text throws(WebhookError) in try StoreEventKind.parse(text) },
                in: try environment.path(),
                actor: Invocation.current.actor, now: Invocation.current.clock.now,
                addresses: WebhookAddresses(allowsPrivate: allowPrivate))
            if output.json {
                Console.json(created.jsonValue)
                return
            }
            Console.out(created.secret)
            Console.error(
                "Webhook \(created.webhook.id) sends \(created.webhook.path)'s \(created.webhook.events.map(\.rawValue).joined(separator: ", ")) to \(created.webhook.url.shown). Its signing secret, above, is shown once."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List an environment's webhooks and their latest deliveries, never their secrets.")

        @Option(help: ArgumentHelp("Deliveries shown per webhook.", valueName: "count"))
        var deliveries = 5

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let webhooks = try await database.openStore(.readOnly).outbound.webhooks(
                in: try environment.path(), deliveries: max(0, deliveries))
            if output.json {
                Console.json(.array(webhooks.map(\.jsonValue)))
                return
            }
            guard !webhooks.isEmpty else {
                Console.out("No webhooks.")
                return
            }
            var lines: [String] = []
            for webhook in webhooks {
                lines.append(
                    "\(webhook.id)  \(webhook.url.shown)  \(webhook.format.rawValue)  "
                        + (webhook.revokedAt.map { "revoked \($0.iso8601)" } ?? "active") + "  "
                        + webhook.events.map(\.rawValue).joined(separator: ","))
                for delivery in webhook.deliveries {
                    lines.append("    \(delivery.createdAt.iso8601)  \(delivery.event)  \(delivery.summary)")
                }
            }
            Console.out(lines.joined(separator: "\n"))
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a webhook: nothing more is sent to it.")

        @Argument(help: "The webhook's id, as `webhook list` shows it.")
        var id: Int64

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let path = try environment.path()
            try await database.openStore().outbound.revokeWebhook(id, in: path, now: Invocation.current.clock.now)
            Console.out("Revoked webhook \(id) in \(path).")
        }
    }
}
