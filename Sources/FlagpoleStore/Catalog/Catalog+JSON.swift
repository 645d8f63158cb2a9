import FlagpoleCore
import Foundation

// The JSON shapes of the catalogue's results: one definition for the command line's `--json`
// and the HTTP API, so both always say the same thing the same way.

extension RevisionSummary {
    public var jsonValue: JSONValue {
        [
            "number": .number(Double(number)),
            "kind": .string(kind.rawValue),
            "actor": .string(actor),
            "message": .string(message),
            "createdAt": .string(createdAt.iso8601),
            "size": .number(Double(size)),
            "changes": .number(Double(changeCount)),
        ]
    }
}

extension DocumentDiff {
    /// One object per change (see `DocumentDiff.Change.jsonValue`).
    public var jsonValue: JSONValue {
        .array(changes.map(\.jsonValue))
    }
}

extension DocumentDiff.Change {
    /// `{"feature", "field", "change", "before", "after"}`, and `"config"` for a change of configs,
    /// `"segment"` for a change of segments.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "feature": feature.map(JSONValue.string) ?? .null,
            "field": field.map(JSONValue.string) ?? .null,
            "change": .string(kind.rawValue),
            "before": before ?? .null,
            "after": after ?? .null,
        ]
        if let config { object.append("config", .string(config)) }
        if let segment { object.append("segment", .string(segment)) }
        return .object(object)
    }
}

extension ConfigsOutcome {
    /// `{"revision", "applied", "unchanged", "dryRun", "changes"}`.
    public func jsonValue(isDryRun: Bool) -> JSONValue {
        [
            "revision": .number(Double(revision)), "applied": .bool(isApplied), "unchanged": .bool(isUnchanged),
            "dryRun": .bool(isDryRun), "changes": .array(changes.map(\.jsonValue)),
            "plans": .array(plans.map(\.jsonValue)),
        ]
    }
}

extension TargetingPlan {
    /// `{"feature", "recordedUsers", "usersWithAttributes", "movingUsers", "moves": [{"from", "to",
    /// "users", "examples"}], "keptByApps": [...]}`.
    public var jsonValue: JSONValue {
        func moves(_ moves: [Move]) -> JSONValue {
            .array(
                moves.map { move in
                    [
                        "from": .string(move.from), "to": .string(move.to), "users": .number(Double(move.users)),
                        "examples": .array(move.examples.map { .string($0.rawValue) }),
                    ]
                })
        }
        return [
            "feature": .string(feature), "recordedUsers": .number(Double(recordedUsers)),
            "usersWithAttributes": .number(Double(usersWithAttributes)), "movingUsers": .number(Double(movingUsers)),
            "moves": moves(self.moves), "keptByApps": moves(keptByApps),
        ]
    }
}

extension Feature {
    /// The feature as listings show it: kind, state, variations with the shares the app uses.
    public var listingJSON: JSONObject {
        let labels = labels ?? []
        let variations = zip(effectiveVariations, effectiveShares).enumerated().map { index, pair -> JSONValue in
            [
                "name": .string(pair.0),
                "share": .number(pair.1),
                "label": labels.indices.contains(index) ? labels[index].map(JSONValue.string) ?? .null : .null,
            ]
        }
        return [
            "name": .string(name),
            "kind": .string(kind.rawValue),
            "enabled": .bool(isEnabled),
            "development": .bool(development ?? false),
            "unlocked": unlocked.map(JSONValue.bool) ?? .null,
            "section": section.map(JSONValue.string) ?? .null,
            "description": description.map(JSONValue.string) ?? .null,
            "variations": .array(variations),
            "testBiases": testBiases.map { .array($0.map(JSONValue.number)) } ?? .null,
        ]
    }
}

extension FeaturesDocument {
    /// Every feature, as `feature list --json` prints them.
    public var listingJSON: JSONValue {
        .array(features.map { .object($0.listingJSON) })
    }
}

extension FeatureDetail {
    public var jsonValue: JSONValue {
        var object = feature.listingJSON
        object.append("effectiveBiases", .array(feature.effectiveBiases.map(JSONValue.number)))
        object.append("salt", .string(salt))
        object.append("revision", .number(Double(revision)))
        object.append("recordedUsers", .number(Double(recordedUsers)))
        return .object(object)
    }
}

extension ImportOutcome {
    public var jsonValue: JSONValue {
        let (status, revision): (String, Int) =
            switch status {
            case .applied(let revision): ("applied", revision)
            case .unchanged(let revision): ("unchanged", revision)
            case .planned(let revision): ("planned", revision)
            }
        let strings = { (names: [String]) in JSONValue.array(names.map(JSONValue.string)) }
        return [
            "tenant": .string(path.tenant.rawValue),
            "environment": .string(path.environment.rawValue),
            "status": .string(status),
            "revision": .number(Double(revision)),
            "added": strings(added),
            "returned": strings(returned),
            "changed": strings(changed),
            "archived": strings(archived),
            "unchanged": .number(Double(unchangedCount)),
            "reassigned": .number(Double(reassigned)),
            "warnings": .array(warnings.map(\.jsonValue)),
        ]
    }
}

extension EditOutcome {
    /// The revision, whether it was applied, and each test's plan: shares of all users and
    /// recorded users who move, pair by pair.
    public func jsonValue(isDryRun: Bool) -> JSONValue {
        [
            "revision": .number(Double(revision)),
            "applied": .bool(isApplied),
            "unchanged": .bool(isUnchanged),
            "dryRun": .bool(isDryRun),
            "plans": .array(plans.map(\.jsonValue)),
            "warnings": .array(warnings.map(\.jsonValue)),
        ]
    }
}

extension RolloutPlan {
    /// The shares before and after, and who moves, pair by pair.
    public var jsonValue: JSONValue {
        func shares(_ ranges: VariationRanges) -> JSONValue {
            .array(ranges.ranges.map { ["variation": .string($0.name), "share": .number($0.width)] })
        }
        return [
            "feature": .string(feature),
            "before": shares(before),
            "after": shares(after),
            "moves": .array(
                moves.map { move in
                    [
                        "from": .string(move.from), "to": .string(move.to), "share": .number(move.share),
                        "recordedUsers": .number(Double(move.recordedUsers)),
                    ]
                }),
            "recordedUsers": .number(Double(recordedUsers)),
            "movingUsers": .number(Double(movingUsers)),
            "movingPlacedByRules": .number(Double(movingPlacedByRules)),
        ]
    }
}
