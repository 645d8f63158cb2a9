import FlagpoleCore
import FlagpoleStore
import Foundation

/// A feature's history on its page: per revision that changed it, who, when, why and what in
/// words, and for a change of biases or rules a way back through the editor's plan.
struct FeatureHistoryView: Sendable {
    struct Entry: Sendable {
        var number: Int
        var compareURL: String
        /// ISO 8601, for `<time datetime>`; the script writes it in the viewer's zone.
        var time: ShownTime
        var ago: String
        var actor: String
        var message: String
        var lines: [String]
        var revertBiases: RevertBiases?
        var revertRules: RevertRules?
    }

    /// The biases before a change, sent to the bias editor's preview: its plan comes first.
    struct RevertBiases: Sendable {
        var values: [String]
        var label: String
        var reason: String
    }

    /// The rules before a change, sent to the rules editor's plan.
    struct RevertRules: Sendable {
        var text: String
        var reason: String
    }

    /// Revisions listed; the revisions page has them all.
    static let limit = 20

    var entries: [Entry]
    var hasEntries: Bool
    var hasMore: Bool
    var revisionsURL: String

    init(
        _ history: [FeatureHistoryEntry], of feature: Feature, urls: EnvironmentURLs, now: Date = Date()
    ) {
        entries = history.prefix(Self.limit).enumerated().map { index, entry in
            let change = entry.change
            var view = Entry(
                number: change.revision, compareURL: urls.compare(change.revision - 1, with: change.revision),
                time: ShownTime(change.createdAt), ago: RelativeTime.describe(change.createdAt, now: now),
                actor: change.actor, message: change.message, lines: entry.fields.map(Self.sentence))
            // Only the latest change can go back by itself: an older one's "before" may undo later ones too.
            if index == 0 {
                view.revertBiases = Self.revertBiases(entry, of: feature)
                view.revertRules = Self.revertRules(entry)
            }
            return view
        }
        hasEntries = !entries.isEmpty
        hasMore = history.count > Self.limit
        revisionsURL = urls.revisions
    }

    /// One changed field in words: `Biases: 10 %, 90 % → 20 %, 80 %`.
    static func sentence(_ field: FieldChange) -> String {
        guard let name = field.field else {
            return field.kind == .added ? "Added" : field.kind == .removed ? "Removed" : "Changed"
        }
        let label = labels[name] ?? name
        switch field.kind {
        case .added: return "\(label) set to \(shown(field.after, of: name))"
        case .removed: return "\(label) removed (was \(shown(field.before, of: name)))"
        case .changed: return "\(label): \(shown(field.before, of: name)) → \(shown(field.after, of: name))"
        }
    }

    private static let labels = [
        "test-biases": "Biases", "enabled": "Enabled", "test-variations": "Variations", "rules": "Targeting rules",
        "tags": "Tags", "description": "Description", "section": "Section", "labels": "Labels",
    ]

    /// A stored JSON value as a person reads it: biases as percentages, rules by count, anything
    /// long cut short.
    private static func shown(_ json: String?, of field: String) -> String {
        guard let json, let value = try? JSONParser.parse(Array(json.utf8)).value else { return "nothing" }
        switch (field, value) {
        case ("test-biases", .array(let biases)):
            return biases.map { "\(number($0)) %" }.joined(separator: ", ")
        case ("rules", .array(let rules)):
            return "\(rules.count) rule\(rules.count == 1 ? "" : "s")"
        case (_, .bool(let flag)):
            return flag ? "yes" : "no"
        case (_, .string(let text)):
            return "“\(text)”"
        default:
            let text = JSONWriter(style: .compact).string(of: value)
            return text.count > 120 ? String(text.prefix(119)) + "…" : text
        }
    }

    private static func number(_ value: JSONValue) -> String {
        if case .number(let number) = value { return JSONWriter.format(number) }
        return JSONWriter(style: .compact).string(of: value)
    }

    private static func revertBiases(_ entry: FeatureHistoryEntry, of feature: Feature) -> RevertBiases? {
        guard feature.isBucketed, entry.fields.count == 1, let field = entry.fields.first,
            field.field == "test-biases", let json = field.before,
            case .array(let biases)? = try? JSONParser.parse(Array(json.utf8)).value,
            biases.count == feature.effectiveVariations.count
        else { return nil }
        let values = biases.map(number)
        return RevertBiases(
            values: values, label: values.map { "\($0) %" }.joined(separator: ", "),
            reason: "Revert revision \(entry.change.revision)")
    }

    private static func revertRules(_ entry: FeatureHistoryEntry) -> RevertRules? {
        guard entry.fields.count == 1, let field = entry.fields.first, field.field == "rules" else { return nil }
        let rules: JSONValue
        if let json = field.before {
            guard let before = try? JSONParser.parse(Array(json.utf8)).value else { return nil }
            rules = before
        } else {
            rules = .array([])
        }
        return RevertRules(
            text: JSONWriter(style: .pretty(indent: 2)).string(of: ["rules": rules]) + "\n",
            reason: "Revert revision \(entry.change.revision)")
    }
}

/// "3 minutes ago", for pages read without the script that writes it in the viewer's words.
enum RelativeTime {
    static func describe(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        if seconds < 60 { return "just now" }
        for (unit, size) in [("day", 86_400), ("hour", 3_600), ("minute", 60)] where seconds >= size {
            let count = seconds / size
            return "\(count) \(unit)\(count == 1 ? "" : "s") ago"
        }
        return "just now"
    }
}
