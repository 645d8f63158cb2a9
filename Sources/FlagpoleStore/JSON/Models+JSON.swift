import FlagpoleCore
import Foundation

// The JSON shapes of the store's results: one definition for the command line's `--json` and
// the HTTP API, so both always say the same thing the same way.

extension Tenant {
    public var jsonValue: JSONValue {
        [
            "slug": .string(slug.rawValue),
            "name": .string(name),
            "environments": .array(environments.map { .string($0.rawValue) }),
            "createdAt": .string(createdAt.iso8601),
        ]
    }
}

extension Environment {
    public var jsonValue: JSONValue {
        [
            "name": .string(path.environment.rawValue),
            "revision": revision.map { .number(Double($0)) } ?? .null,
            "features": .number(Double(featureCount)),
            "createdAt": .string(createdAt.iso8601),
            "private": .bool(delivery.isPrivate),
            "cacheControl": delivery.cacheControl.map(JSONValue.string) ?? .null,
            "colour": marking.colour.map { .string($0.rawValue) } ?? .null,
            "requiresReason": .bool(marking.requiresReason),
        ]
    }
}

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

extension APIKeyInfo {
    public var jsonValue: JSONValue { .object(jsonObject) }

    /// Never the secret: only the prefix that recognises the key; `environment` is the one a
    /// delivery key is scoped to, or null.
    public var jsonObject: JSONObject {
        let tenant: JSONValue =
            switch owner {
            case .server, .member: .null
            case .tenant(let slug): .string(slug.rawValue)
            }
        return [
            "prefix": .string(prefix),
            "tenant": tenant,
            "role": .string(role.rawValue),
            "name": .string(name),
            "createdAt": .string(createdAt.iso8601),
            "revokedAt": revokedAt.map { .string($0.iso8601) } ?? .null,
            "environment": environment.map { .string($0.rawValue) } ?? .null,
            "member": member.map(JSONValue.string) ?? .null,
            "lastUsedAt": lastUsedAt.map { .string($0.iso8601) } ?? .null,
        ]
    }
}

extension Member {
    /// Never a password or a token.
    public var jsonValue: JSONValue {
        [
            "email": .string(email),
            "name": .string(name),
            "role": .string(role.rawValue),
            "joinedAt": .string(joinedAt.iso8601),
            "hasPassword": .bool(hasPassword),
            "invitedUntil": invitedUntil.map { .string($0.iso8601) } ?? .null,
        ]
    }
}

extension MemberLink {
    /// The link's token, shown this once, and where it leads on `server` (`http://host:port`).
    public func jsonValue(server: String) -> JSONValue {
        [
            "email": .string(email),
            "purpose": .string(purpose.rawValue),
            "url": .string(url(server: server)),
            "expiresAt": .string(expiresAt.iso8601),
        ]
    }

    /// The page that sets the password: `SERVER/welcome?token=TOKEN`. In the query, not the
    /// path, as access logs write paths only.
    public func url(server: String) -> String { "\(server)/welcome?token=\(token)" }
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
