import FlagpoleCore
import FlagpoleStore
import Foundation

/// What the features page is asked to show, read from its GET form:
/// `?q=&tag=&kind=&state=&section=&rules=&by=&since=&sort=&view=`. A value the page doesn't know (an old
/// link, a hand-typed URL) filters nothing rather than failing.
struct FeatureFilter: Sendable, Equatable {
    enum State: String, Sendable, CaseIterable {
        case enabled
        case disabled
    }

    /// Whether targeting rules exist for the feature.
    enum Rules: String, Sendable, CaseIterable {
        case with
        case without
    }

    enum Sort: String, Sendable, CaseIterable {
        /// The features.json's order, grouped by section.
        case sections
        case name
        /// The most recently changed first; features the audit has no change of, last.
        case change
    }

    var name = NameQuery("")
    var tag: String?
    var kind: FeatureKind?
    var state: State?
    var section: String?
    var rules: Rules?
    /// Who made the feature's last change (`FeatureChange.actor`).
    var actor: String?
    /// A UTC day, `YYYY-MM-DD` as a date input sends it: features last changed that day or later.
    var since: String?
    var sort = Sort.sections
    /// `nil`: the cards, compact on phones (`CatalogView`).
    var view: CatalogView?

    init() {}

    /// The filter of a query string as the page's GET form sends it (`SearchQuery`).
    ///
    /// - throws: `DashboardError.badForm` when the query is not URL-encoded.
    init(query: String) throws {
        let fields = try SearchQuery.fields(Fields.self, of: query)
        name = NameQuery(fields.q ?? "")
        tag = fields.tag.nonEmpty
        kind = fields.kind.flatMap(FeatureKind.init(rawValue:))
        state = fields.state.flatMap(State.init(rawValue:))
        section = fields.section.nonEmpty
        rules = fields.rules.flatMap(Rules.init(rawValue:))
        actor = fields.by.nonEmpty
        since = fields.since.flatMap { $0.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) == nil ? nil : $0 }
        sort = fields.sort.flatMap(Sort.init(rawValue:)) ?? .sections
        view = fields.view.flatMap(CatalogView.init(rawValue:))
    }

    /// Whether any filter (not the sort or the layout) is set.
    var isFiltering: Bool {
        !name.isEmpty || tag != nil || kind != nil || state != nil || section != nil || rules != nil || actor != nil
            || since != nil
    }

    /// Why nothing shows when the filter leaves no feature.
    var emptyMessage: String {
        var untagged = self
        untagged.tag = nil
        guard let tag, !untagged.isFiltering else { return "No feature matches this search." }
        return "No feature is tagged \(tag)."
    }

    func matches(_ facts: FeatureFacts) -> Bool {
        name.matches(facts.name) && (tag.map(facts.tags.contains) ?? true) && (kind.map { $0 == facts.kind } ?? true)
            && (state.map { $0 == facts.state } ?? true) && (section.map { $0 == facts.section } ?? true)
            && (rules.map { $0 == facts.rules } ?? true) && (actor.map { $0 == facts.lastChange?.actor } ?? true)
            && (since.map { day in facts.changedOn.map { $0 >= day } ?? false } ?? true)
    }

    /// The filter as a query string for links (`""` or `?q=…`), only what differs from the default.
    var queryString: String {
        let pairs: [(String, String?)] = [
            ("q", name.isEmpty ? nil : name.text), ("tag", tag), ("kind", kind?.rawValue), ("state", state?.rawValue),
            ("section", section), ("rules", rules?.rawValue), ("by", actor), ("since", since),
            ("sort", sort == .sections ? nil : sort.rawValue),
            ("view", view?.rawValue),
        ]
        let query = pairs.compactMap { key, value in value.map { key + "=" + EnvironmentURLs.queryValue($0) } }
        return query.isEmpty ? "" : "?" + query.joined(separator: "&")
    }

    private struct Fields: Decodable {
        var q: String?
        var tag: String?
        var kind: String?
        var state: String?
        var section: String?
        var rules: String?
        var by: String?
        var since: String?
        var sort: String?
        var view: String?
    }
}

/// What the features page filters a feature by, as its item's `data-*` attributes carry it to
/// the search as you type.
struct FeatureFacts: Sendable {
    var name: String
    var tags: [String]
    var kind: FeatureKind
    var state: FeatureFilter.State
    /// The section's heading: "No section" for a feature without one, as the page groups it.
    var section: String
    var ruleCount: Int
    var rules: FeatureFilter.Rules { ruleCount > 0 ? .with : .without }
    /// The last revision that changed it, when the audit has one.
    var lastChange: FeatureChange?
    /// The UTC day of `lastChange`, `YYYY-MM-DD`: ordered as text, as dashboard.js compares it.
    var changedOn: String?

    init(_ feature: Feature, tags: [String], ruleCount: Int, lastChange: FeatureChange? = nil) {
        name = feature.name
        self.tags = tags
        kind = feature.kind
        state = feature.isEnabled ? .enabled : .disabled
        section = FeatureFacts.section(of: feature)
        self.ruleCount = ruleCount
        self.lastChange = lastChange
        changedOn = lastChange.map { $0.createdAt.formatted(Self.day) }
    }

    private static let day = Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day()

    static func section(of feature: Feature) -> String { feature.section ?? "No section" }
}
