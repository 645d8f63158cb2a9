import FlagpoleCore
import Foundation

/// One feature on the features page, as a card and as a table row, with the facts its filters
/// read. A feature the filter leaves out is still rendered, hidden, so that search as you type
/// can bring it back without asking the server.
struct FeatureRow: Sendable {
    var card: FeatureCard
    var facts: FeatureFacts
    /// The tags as a JSON array, for `data-tags` (a tag may hold any character).
    var tagsJSON: String
    /// The users per variation in words ("Group A 70 %, Group B 30 %"); `nil` for a flag.
    var split: String?
    var isHidden: Bool
    /// The facts as the `data-*` attributes and the form's values spell them.
    var kind: String
    var state: String
    var rules: String
    /// Who made the last change, for `data-actor`, and its UTC day, for `data-changed`.
    var actor: String?
    var changedOn: String?
    /// "revision 5 by alice", and when.
    var lastChange: LastChange?

    struct LastChange: Sendable {
        var text: String
        var time: ShownTime
    }

    init(card: FeatureCard, facts: FeatureFacts, isHidden: Bool) {
        self.card = card
        self.facts = facts
        tagsJSON = JSONWriter(style: .compact).string(of: .array(facts.tags.map(JSONValue.string)))
        split = card.bar.map { bar in bar.segments.map { "\($0.name) \($0.percent)" }.joined(separator: ", ") }
        self.isHidden = isHidden
        kind = facts.kind.rawValue
        state = facts.state.rawValue
        rules = facts.rules.rawValue
        actor = facts.lastChange?.actor
        changedOn = facts.changedOn
        lastChange = facts.lastChange.map {
            LastChange(text: "revision \($0.revision) by \($0.actor)", time: ShownTime($0.createdAt))
        }
    }
}
