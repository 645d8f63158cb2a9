import FlagpoleCore
import Foundation

extension Ramp {
    /// The ramp, its steps as applied and what else happened to it.
    public var jsonValue: JSONValue {
        [
            "id": .number(Double(id)),
            "tenant": .string(path.tenant.rawValue),
            "environment": .string(path.environment.rawValue),
            "feature": .string(feature),
            "variation": .string(variation),
            "steps": .array(steps.map(JSONValue.number)),
            "hold": .string(hold.description),
            "guards": .array(guards.map { .string($0.description) }),
            "onFailure": .string(onFailure.rawValue),
            "state": .string(state.rawValue),
            "reason": reason.map(JSONValue.string) ?? .null,
            "nextStep": .number(Double(nextStep)),
            "dueAt": dueAt.map { .string($0.iso8601) } ?? .null,
            "createdBy": .string(createdBy),
            "createdAt": .string(createdAt.iso8601),
            "applied": .array(
                applied.map { step in
                    [
                        "step": .number(Double(step.step)), "share": .number(steps[step.step]),
                        "revision": .number(Double(step.revision)), "appliedBy": .string(step.appliedBy),
                        "appliedAt": .string(step.appliedAt.iso8601),
                        "folded": .array(step.folded.map { .number(Double($0)) }),
                        "movedUsers": .number(Double(step.movedUsers)),
                        "fetches": step.fetches.jsonValue,
                    ]
                }),
            "events": .array(
                events.map { event in
                    [
                        "kind": .string(event.kind.rawValue), "actor": .string(event.actor),
                        "detail": event.detail.map(JSONValue.string) ?? .null, "at": .string(event.at.iso8601),
                    ]
                }),
            "looks": .array(
                looks.map { look in
                    [
                        "step": .number(Double(look.step)), "guard": .string(guards[look.guardIndex].description),
                        "verdict": .string(look.verdict.rawValue), "figures": look.figures.jsonValue,
                        "reason": .string(look.reason), "looks": .number(Double(look.looks)),
                        "at": .string(look.at.iso8601),
                    ]
                }),
        ]
    }
}

extension GuardFigures {
    /// The figures a guard had, each only when it had it.
    var jsonValue: JSONValue {
        var object = JSONObject()
        if let users { object.members.append(.init(key: "users", value: .array(users.map { .number(Double($0)) }))) }
        if let events { object.members.append(.init(key: "events", value: .array(events.map { .number(Double($0)) }))) }
        if let fetches { object.members.append(.init(key: "fetches", value: .number(Double(fetches)))) }
        for (key, value) in [
            ("difference", difference), ("low", low), ("high", high), ("threshold", threshold), ("alpha", alpha),
            ("pValue", pValue),
        ] {
            if let value, value.isFinite { object.members.append(.init(key: key, value: .number(value))) }
        }
        return .object(object)
    }
}

extension RampReport {
    /// The ramp, what this action applied, every step's plan, and the summary.
    public var jsonValue: JSONValue {
        [
            "ramp": ramp.jsonValue,
            "dryRun": .bool(isDryRun),
            "applied": .array(applied.map { .number(Double($0.step)) }),
            "plans": .array(
                plans.map { step in
                    [
                        "step": .number(Double(step.step)), "share": .number(step.share),
                        "dueAt": step.dueAt.map { .string($0.iso8601) } ?? .null, "plan": step.plan.jsonValue,
                    ]
                }),
            "summary": .string(summary),
        ]
    }
}

extension FetchCounts {
    /// Every kind of client with its count, 0 included.
    public var jsonValue: JSONValue {
        .object(
            JSONObject(FetchClient.allCases.map { .init(key: $0.rawValue, value: .number(Double(byClient[$0] ?? 0))) }))
    }
}
