import FlagpoleCore
import Foundation

/// Why a webhook could not be made or called, worded for the person who can fix it.
public enum WebhookError: FlagpoleError, Equatable {
    case invalidURL(String, reason: String)
    case invalidFormat(String)
    /// An event name, or a pattern, that names no event.
    case unknownEvent(String)
    /// No event at all: a webhook must hear one.
    case noEvents
    /// The host resolves to no address.
    case unresolvable(host: String)
    /// The host is, or resolves to, a loopback, private, link-local or otherwise internal address.
    case privateAddress(host: String, address: String)
    case webhookNotFound(EnvironmentPath, id: Int64)

    public var description: String {
        switch self {
        case .invalidURL(let text, let reason):
            "The webhook URL \"\(text.prefix(200))\" \(reason). Give the https:// URL your chat or receiver gave you."
        case .invalidFormat(let text):
            "\"\(text.prefix(40))\" is not a webhook format: use json (Flagpole's body) or slack ({\"text\": …})."
        case .unknownEvent(let text):
            "\"\(text.prefix(60))\" names no event. Name events, or families with a star, comma-separated: \(StoreEventKind.allCases.map(\.rawValue).joined(separator: ", ")), ramp.*, or * for all."
        case .noEvents:
            "Choose at least one event for the webhook to hear: \(StoreEventKind.allCases.map(\.rawValue).joined(separator: ", "))."
        case .unresolvable(let host):
            "The webhook's host \(host) resolves to no address (within 5 seconds). Check its spelling, or the server's DNS."
        case .privateAddress(let host, let address):
            host == address
                ? "The webhook's address \(address) is loopback, private or link-local: the server does not call inside its own network unless its operator allows it (`flagpole serve --allow-private-webhooks`). Nothing was saved or sent."
                : "The webhook's host \(host) resolves to \(address), a loopback, private or link-local address: the server does not call inside its own network unless its operator allows it (`flagpole serve --allow-private-webhooks`). Nothing was saved or sent."
        case .webhookNotFound(let path, let id):
            "\(path) has no webhook \(id). List them with `flagpole webhook list --tenant \(path.tenant) --env \(path.environment)`."
        }
    }

    public var code: String {
        switch self {
        case .webhookNotFound: "not_found"
        case .privateAddress: "forbidden"
        default: "invalid"
        }
    }
}
