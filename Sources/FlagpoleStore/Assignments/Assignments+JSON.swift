import FlagpoleCore
import Foundation

// The JSON shapes of users' records: one definition for the command line's `--json`
// and the HTTP API, so both always say the same thing the same way.

extension ForgetReport {
    /// `{"tenant", "deleted": {"assignments", "assignmentEvents", "unlocks", "attributes", "events"}, "segmentsListingUser"}`.
    public var jsonValue: JSONValue {
        [
            "tenant": .string(tenant.rawValue),
            "deleted": [
                "assignments": .number(Double(assignments)), "assignmentEvents": .number(Double(assignmentEvents)),
                "unlocks": .number(Double(unlocks)), "attributes": .number(Double(attributes)),
                "events": .number(Double(events)),
            ],
            "segmentsListingUser": .array(segmentsListingUser.map(JSONValue.string)),
        ]
    }
}

extension Assignment {
    /// `{"user", "feature", "variation", "point", "revision"}`, plus `"override": true` under a QA override.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "user": .string(user.rawValue),
            "feature": .string(feature),
            "variation": .string(variation),
            "point": .number(point),
            "revision": .number(Double(revision)),
        ]
        if isOverride { object.append("override", .bool(true)) }
        return .object(object)
    }
}

extension AssignmentEvent {
    public var jsonValue: JSONValue {
        [
            "id": .number(Double(id)),
            "time": .string(time.iso8601Milliseconds),
            "user": .string(user.rawValue),
            "feature": .string(feature),
            "previousVariation": previousVariation.map(JSONValue.string) ?? .null,
            "variation": .string(variation),
            "point": .number(point),
            "revision": .number(Double(revision)),
            "reason": .string(reason.rawValue),
            "rule": rule.map(JSONValue.string) ?? .null,
        ]
    }
}

extension [VariationCount] {
    /// `assignments stats`: recorded users per variation of `feature` at `time`.
    public func jsonValue(feature: String, at time: Date) -> JSONValue {
        [
            "feature": .string(feature),
            "at": .string(time.iso8601Milliseconds),
            "users": .number(Double(reduce(0) { $0 + $1.users })),
            "variations": .array(map { ["variation": .string($0.variation), "users": .number(Double($0.users))] }),
        ]
    }
}

extension UnlockRecord {
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "feature": .string(feature),
            "user": .string(user.rawValue),
            "unlocked": .bool(isUnlocked),
            "source": source.map(JSONValue.string) ?? .null,
            "time": .string(time.iso8601Milliseconds),
        ]
        if let actor { object.append("actor", .string(actor)) }
        return .object(object)
    }
}

extension Evaluation {
    public var jsonValue: JSONValue {
        [
            "feature": .string(feature),
            "kind": .string(kind.rawValue),
            "variation": .string(variation),
            "reason": .string(reason.rawValue),
            "point": point.map(JSONValue.number) ?? .null,
            "recorded": .bool(isRecorded),
            "rule": rule.map(JSONValue.string) ?? .null,
            "firstRule": firstRule.map(JSONValue.string) ?? .null,
            "pinnedRevision": pinnedRevision.map { .number(Double($0)) } ?? .null,
            "newUserPlacement": newUserPlacement.map {
                ["variation": .string($0.variation), "rule": .string($0.rule)]
            } ?? .null,
        ]
    }
}
