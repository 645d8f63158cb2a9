import FlagpoleCore

/// The features page's GET form, showing the filter it was sent with. Each control names the
/// `data-*` attribute of the items it filters (`data-match`), so dashboard.js filters as the
/// user types with the server's rules.
struct FeatureSearchForm: Sendable {
    var name: String
    var tags: [Choice]
    var kinds: [Choice]
    var states: [Choice]
    var sections: [Choice]
    var rules: [Choice]
    var sorts: [Choice]
    /// Who made the features' last changes.
    var actors: [Choice]
    var since: String
    /// The chosen layout, kept by a hidden field; `nil` when none was chosen.
    var view: String?
    /// The page with the layout kept and no filter.
    var clearURL: String
    /// "Filters (2)": the filters folded under it, open while any is set.
    var filtersSummary: String
    var hasActiveFilters: Bool

    init(_ filter: FeatureFilter, tags: [String], sections: [String], actors: [String], page: String) {
        name = filter.name.text
        self.tags = tags.map { Choice(name: $0, value: $0, isSelected: $0 == filter.tag) }
        kinds = FeatureKind.allCases.map {
            Choice(name: $0.description, value: $0.rawValue, isSelected: $0 == filter.kind)
        }
        states = FeatureFilter.State.allCases.map {
            Choice(name: $0 == .enabled ? "Enabled" : "Disabled", value: $0.rawValue, isSelected: $0 == filter.state)
        }
        self.sections = sections.map { Choice(name: $0, value: $0, isSelected: $0 == filter.section) }
        rules = FeatureFilter.Rules.allCases.map {
            Choice(
                name: $0 == .with ? "With targeting rules" : "Without rules", value: $0.rawValue,
                isSelected: $0 == filter.rules)
        }
        sorts = FeatureFilter.Sort.allCases.map { sort in
            let name =
                switch sort {
                case .sections: "Sections"
                case .name: "Name"
                case .change: "Last change"
                }
            return Choice(name: name, value: sort.rawValue, isSelected: sort == filter.sort)
        }
        self.actors = actors.map { Choice(name: $0, value: $0, isSelected: $0 == filter.actor) }
        since = filter.since ?? ""
        let active = [
            filter.tag != nil, filter.kind != nil, filter.state != nil, filter.section != nil, filter.rules != nil,
            filter.actor != nil, filter.since != nil, filter.sort != .sections,
        ].count { $0 }
        filtersSummary = active == 0 ? "Filters" : "Filters (\(active))"
        hasActiveFilters = active > 0
        view = filter.view?.rawValue
        var cleared = FeatureFilter()
        cleared.view = filter.view
        clearURL = page + cleared.queryString
    }
}
