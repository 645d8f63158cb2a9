import FlagpoleCore
import Foundation

extension Trigger {
    /// The trigger and its latest calls, never its token.
    public var jsonValue: JSONValue {
        [
            "prefix": .string(prefix), "name": .string(name), "feature": .string(feature),
            "action": .string(action.rawValue), "createdBy": .string(createdBy),
            "createdAt": .string(createdAt.iso8601), "revokedAt": revokedAt.map { .string($0.iso8601) } ?? .null,
            "calls": .array(calls.map(\.jsonValue)),
        ]
    }
}

extension TriggerCall {
    public var jsonValue: JSONValue {
        [
            "at": .string(at.iso8601), "address": .string(address),
            "userAgent": userAgent.map(JSONValue.string) ?? .null, "acted": .bool(acted), "outcome": .string(outcome),
        ]
    }
}

extension CreatedTrigger {
    /// The trigger, its token, and the URL to give the alert: `serverURL/triggers?token=…`.
    public func jsonValue(serverURL: String) -> JSONValue {
        guard case .object(var object) = trigger.jsonValue else { return trigger.jsonValue }
        object.append("token", .string(token))
        object.append("url", .string(url(serverURL: serverURL)))
        return .object(object)
    }

    /// The URL an alert calls.
    public func url(serverURL: String) -> String { "\(serverURL)/triggers?token=\(token)" }
}

extension TriggerOutcome {
    /// What the call did.
    public var jsonValue: JSONValue {
        [
            "trigger": .string(trigger.name), "feature": .string(trigger.feature),
            "action": .string(trigger.action.rawValue), "acted": .bool(acted), "outcome": .string(outcome),
            "revision": revision.map { .number(Double($0)) } ?? .null,
        ]
    }
}
