import FlagpoleCore
import Foundation

/// The kinds of event a write can produce that a team hears of: what a webhook subscribes to,
/// named as its `Flagpole-Event` header and its body's `event` (docs/WEBHOOKS.md).
public enum StoreEventKind: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Every revision, whoever wrote it: a person (CLI, API, dashboard), a ramp, a trigger, an
    /// import, a rollback.
    case revisionCreated = "revision.created"
    case rampStepApplied = "ramp.step_applied"
    case rampPaused = "ramp.paused"
    case rampRolledBack = "ramp.rolled_back"
    case rampAborted = "ramp.aborted"
    case rampFinished = "ramp.finished"
    case triggerFired = "trigger.fired"

    /// What a webhook made before schema 0019 hears: it knew no other events.
    static let beforeSubscriptions: [StoreEventKind] = [
        .rampStepApplied, .rampPaused, .rampRolledBack, .rampAborted, .rampFinished, .triggerFired,
    ]

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The events `text` names, comma-separated: each a name (`revision.created`) or a family's
    /// pattern (`ramp.*`), or `*` for every event there is now.
    ///
    /// - throws: `WebhookError.unknownEvent`.
    public static func parse(_ text: String) throws(WebhookError) -> [StoreEventKind] {
        var kinds: Set<StoreEventKind> = []
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else { throw WebhookError.noEvents }
        for name in names {
            let matching: [StoreEventKind]
            if name == "*" {
                matching = allCases
            } else if name.hasSuffix(".*") {
                let family = name.dropLast(1)
                matching = allCases.filter { $0.rawValue.hasPrefix(family) }
            } else {
                matching = StoreEventKind(rawValue: name).map { [$0] } ?? []
            }
            guard !matching.isEmpty else { throw WebhookError.unknownEvent(name) }
            kinds.formUnion(matching)
        }
        return kinds.sorted()
    }
}

/// Something a write did that the team hears of, recorded in its transaction
/// (`Transaction.record`) and queued, as the write finishes, for each webhook of its
/// environment that subscribes to its kind: the step and its news commit together, and are
/// sent after, never holding the write up.
struct StoreEvent: Sendable {
    let kind: StoreEventKind
    let path: EnvironmentPath
    /// When it happened, by the clock of the write: the delivery is due from then.
    let at: Date
    /// What happened, in one sentence: Slack's line, and the JSON body's `text`.
    var text: String
    /// The event's own fields (the revision, the step, who, why), after its name, time and place.
    var fields: JSONObject
    /// Where a person sees the change, under the server's public URL (`serve --public-url`): the
    /// sender makes it the body's `url`.
    var link: String? = nil

    /// The body kept in the outbox (`storedBody`), and the audit feed's object: Flagpole's JSON,
    /// with `link` for the sender to complete.
    var body: JSONObject {
        var body: JSONObject = [
            "event": .string(kind.rawValue), "at": .string(at.iso8601), "tenant": .string(path.tenant.rawValue),
            "environment": .string(path.environment.rawValue),
        ]
        for member in fields.members { body.append(member.key, member.value) }
        body.append("text", .string(text))
        if let link { body.append("link", .string(link)) }
        return body
    }

    var storedBody: String { JSONValue.object(body).storedText }
}

extension StoreEvent {
    /// What a ramp did: `text` follows "ramp ID of FEATURE".
    init(_ kind: StoreEventKind, of ramp: RampRow, at time: Date, _ text: String, details: JSONObject = [:]) {
        var fields: JSONObject = ["feature": .string(ramp.feature), "ramp": .number(Double(ramp.id))]
        for member in details.members { fields.append(member.key, member.value) }
        self.init(
            kind: kind, path: ramp.path, at: time, text: "ramp \(ramp.id) of \(ramp.feature)\(text)", fields: fields)
    }

    /// How many names a revision's event lists of each of features, configs and segments: a
    /// 10 000-feature import tells the count, not 300 KB per webhook.
    static let namesListed = 100

    /// A revision written: who, what kind, its message, and what it touched.
    static func revisionCreated(
        number: Int, kind: RevisionKind, actor: String, message: String, changes: [DocumentDiff.Change],
        movedUsers: Int?, in path: EnvironmentPath, at time: Date
    ) -> StoreEvent {
        var features: [String] = []
        var configs: [String] = []
        var segments: [String] = []
        var seen: Set<String> = []
        var changed: Set<String> = []
        for change in changes {
            if let config = change.config {
                if seen.insert("c" + config).inserted { configs.append(config) }
                changed.insert("config " + change.kind.rawValue)
            } else if let segment = change.segment {
                if seen.insert("s" + segment).inserted { segments.append(segment) }
                changed.insert("segment " + change.kind.rawValue)
            } else if let feature = change.feature {
                if seen.insert("f" + feature).inserted { features.append(feature) }
                changed.insert(change.field ?? "feature " + change.kind.rawValue)
            } else {
                changed.insert(change.field ?? "order")
            }
        }
        func listed(_ names: [String]) -> JSONValue { .array(names.prefix(namesListed).map(JSONValue.string)) }
        let touched = [
            Self.phrase(features, "feature"), Self.phrase(configs, "config"), Self.phrase(segments, "segment"),
        ].compactMap { $0 }
        let moved = movedUsers.map(movedPhrase) ?? ""
        let previous = number > 1 ? "?from=\(number - 1)&to=\(number)" : ""
        return StoreEvent(
            kind: .revisionCreated, path: path, at: time,
            text:
                "revision \(number) (\(kind.rawValue)) by \(actor): \(message)"
                + (touched.isEmpty ? "" : " — " + touched.joined(separator: "; ")) + moved,
            fields: [
                "revision": .number(Double(number)), "kind": .string(kind.rawValue), "actor": .string(actor),
                "message": .string(message), "changes": .array(changed.sorted().map(JSONValue.string)),
                "features": listed(features), "featureCount": .number(Double(features.count)),
                "configs": listed(configs), "configCount": .number(Double(configs.count)),
                "segments": listed(segments), "segmentCount": .number(Double(segments.count)),
                "movedUsers": movedUsers.map { .number(Double($0)) } ?? .null,
            ],
            link: "/tenants/\(Self.segment(path.tenant.rawValue))/\(Self.segment(path.environment.rawValue))/revisions"
                + previous)
    }

    /// "features A, B and 3 more" (the first three names), `nil` for none.
    private static func phrase(_ names: [String], _ noun: String) -> String? {
        guard !names.isEmpty else { return nil }
        let shown = names.prefix(3).joined(separator: ", ")
        let more = names.count > 3 ? " and \(names.count - 3) more" : ""
        return "\(noun)\(names.count == 1 ? "" : "s") \(shown)\(more)"
    }

    private static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? text
    }

    /// The revision's moved users, once its plan has moved them.
    mutating func setMovedUsers(_ count: Int) {
        guard let index = fields.members.firstIndex(where: { $0.key == "movedUsers" }) else { return }
        fields.members[index].value = .number(Double(count))
        text += Self.movedPhrase(count)
    }

    private static func movedPhrase(_ count: Int) -> String {
        "; \(count) recorded user\(count == 1 ? "" : "s") moved"
    }
}
