import FlagpoleCore
import Foundation

// The JSON shapes of goals, event batches and readouts, for `--json` and the API alike.

extension JSONValue {
    /// A figure; `null` when it is not finite (a χ² against a share of 0).
    fileprivate static func figure(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value)
    }

    fileprivate static func count(_ value: Int) -> JSONValue { .number(Double(value)) }

    fileprivate static func interval(_ interval: Interval?) -> JSONValue {
        guard let interval else { return .null }
        return ["low": .figure(interval.low), "high": .figure(interval.high)]
    }
}

extension Goal {
    public var jsonValue: JSONValue {
        ["name": .string(name), "kind": .string(kind.rawValue), "better": .string(better.rawValue)]
    }
}

extension EventBatchReport {
    public var jsonValue: JSONValue {
        [
            "accepted": .count(accepted),
            "duplicates": .count(duplicates),
            "refused": .array(
                refused.map { refusal in
                    [
                        "index": .count(refusal.index), "id": refusal.id.map(JSONValue.string) ?? .null,
                        "reason": .string(refusal.reason.rawValue), "message": .string(refusal.message),
                    ]
                }),
        ]
    }
}

extension ExperimentResults {
    public var jsonValue: JSONValue {
        [
            "tenant": .string(path.tenant.rawValue),
            "environment": .string(path.environment.rawValue),
            "feature": .string(feature),
            "final": .bool(isFinal),
            "namedControl": namedControl.map(JSONValue.string) ?? .null,
            "minimumUsers": .count(Experiments.minimumUsers),
            "epochs": .array(epochs.map(\.jsonValue)),
            "pooled": .array(
                pooled.map { pooled in
                    [
                        "goal": .string(pooled.goal),
                        "epochs": .array(pooled.epochs.map(JSONValue.count)),
                        "variations": .array(
                            pooled.variations.map { variation, estimate in
                                [
                                    "variation": .string(variation),
                                    "difference": .figure(estimate.difference),
                                    "standardError": .figure(estimate.standardError),
                                    "interval": .interval(estimate.interval),
                                    "pValue": .figure(estimate.pValue),
                                ]
                            }),
                    ]
                }),
        ]
    }
}

extension EpochResults {
    public var jsonValue: JSONValue {
        [
            "epoch": .count(number),
            "revision": .count(revision),
            "startedAt": .string(startedAt.iso8601),
            "control": .string(control),
            "analysis": .string(analysis.rawValue),
            "variations": .array(
                zip(arms, shares).map { arm, share in
                    [
                        "variation": .string(arm.variation), "share": .figure(share), "users": .count(arm.users),
                        "splitUsers": .count(arm.splitUsers), "exposedUsers": .count(arm.exposedUsers),
                        "excludedUsers": .count(arm.excludedUsers),
                    ]
                }),
            "sampleRatio": sampleRatio.map { check in
                [
                    "statistic": .figure(check.statistic), "degreesOfFreedom": .count(check.degreesOfFreedom),
                    "pValue": .figure(check.pValue), "mismatch": .bool(sampleRatioMismatch),
                ]
            } ?? .null,
            "goals": .array(goals.map(\.jsonValue)),
        ]
    }
}

extension GoalResults {
    public var jsonValue: JSONValue {
        [
            "goal": goal.jsonValue,
            "tooFewUsers": .bool(tooFewUsers),
            "variations": .array(
                variations.map { result in
                    [
                        "variation": .string(result.variation), "users": .count(result.users),
                        "events": .count(result.events), "mean": .figure(result.mean),
                        "variance": .figure(result.variance),
                        "comparison": result.comparison.map { comparison in
                            [
                                "difference": .figure(comparison.difference),
                                "standardError": .figure(comparison.standardError),
                                "interval": .interval(comparison.interval),
                                "relativeDifference": .figure(comparison.relativeDifference),
                                "relativeInterval": .interval(comparison.relativeInterval),
                                "pValue": .figure(comparison.pValue),
                                "adjustedPValue": .figure(result.adjustedPValue),
                                "degreesOfFreedom": .figure(comparison.degreesOfFreedom),
                                "chanceToBeatControl": .figure(comparison.chanceToBeatControl),
                                "sequentialInterval": .interval(comparison.sequentialInterval),
                            ]
                        } ?? .null,
                    ]
                }),
            "history": .array(
                history.map { point in
                    [
                        "day": .string(point.day.iso8601), "variation": .string(point.variation),
                        "difference": .figure(point.difference), "interval": .interval(point.interval),
                    ]
                }),
        ]
    }
}
