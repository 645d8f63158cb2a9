import ArgumentParser
import FlagpoleStore
import FlagpoleWebhooks
import Foundation

/// How webhook deliveries are sent and kept: shared by `serve` and `tick`, which both send what
/// is due.
struct WebhookOptions: ParsableArguments {
    @Flag(
        help:
            "Let webhooks reach loopback, private and link-local addresses: only where everyone who may edit is trusted with the server's network."
    )
    var allowPrivateWebhooks = false

    @Option(
        help: ArgumentHelp(
            "The address people reach this server's dashboard at (https://flags.example.com): events link to what changed under it; without it they carry no link.",
            valueName: "url"))
    var publicURL: String?

    @Option(
        help: ArgumentHelp("Days delivered and given-up webhook deliveries are kept.", valueName: "days"))
    var keepDeliveriesDays = Int(Changes.deliveriesKept / 86_400)

    func validate() throws {
        if let publicURL {
            guard let components = URLComponents(string: publicURL), ["http", "https"].contains(components.scheme),
                components.host?.isEmpty == false, components.query == nil, components.fragment == nil
            else {
                throw ValidationError(
                    "--public-url must be an http:// or https:// address without a query, such as https://flags.example.com."
                )
            }
        }
        guard keepDeliveriesDays >= 1 else { throw ValidationError("--keep-deliveries-days must be 1 or more.") }
    }

    var sender: WebhookSender {
        WebhookSender(addresses: WebhookAddresses(allowsPrivate: allowPrivateWebhooks), publicURL: publicURL)
    }

    var deliveriesKept: TimeInterval { TimeInterval(keepDeliveriesDays) * 86_400 }
}
