import FlagpoleCore
import Foundation

extension Webhook {
    /// The webhook and its latest deliveries, never its secret.
    public var jsonValue: JSONValue {
        [
            "id": .number(Double(id)), "url": .string(url.shown), "format": .string(format.rawValue),
            "events": .array(events.map { .string($0.rawValue) }),
            "createdBy": .string(createdBy), "createdAt": .string(createdAt.iso8601),
            "revokedAt": revokedAt.map { .string($0.iso8601) } ?? .null,
            "deliveries": .array(deliveries.map(\.jsonValue)),
        ]
    }
}

extension WebhookDelivery {
    public var jsonValue: JSONValue {
        [
            "id": .string(id), "event": .string(event), "createdAt": .string(createdAt.iso8601),
            "state": .string(state.rawValue), "attempts": .number(Double(attempts)),
            "nextAt": nextAt.map { .string($0.iso8601) } ?? .null,
            "attemptedAt": attemptedAt.map { .string($0.iso8601) } ?? .null,
            "status": status.map { .number(Double($0)) } ?? .null, "answer": answer.map(JSONValue.string) ?? .null,
            "error": error.map(JSONValue.string) ?? .null,
        ]
    }
}

extension CreatedWebhook {
    /// The webhook and its signing secret, shown this once.
    public var jsonValue: JSONValue {
        guard case .object(var object) = webhook.jsonValue else { return webhook.jsonValue }
        object.append("secret", .string(secret))
        return .object(object)
    }
}
