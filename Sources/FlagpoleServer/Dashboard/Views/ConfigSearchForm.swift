import FlagpoleCore

/// The configs page's GET form, showing the filter it was sent with (see `FeatureSearchForm`).
struct ConfigSearchForm: Sendable {
    var name: String
    var tags: [Choice]
    var types: [Choice]
    var follows: [Choice]

    init(_ filter: ConfigFilter, tags: [String]) {
        name = filter.name.text
        self.tags = tags.map { Choice(name: $0, value: $0, isSelected: $0 == filter.tag) }
        types = ConfigType.allCases.map { Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0 == filter.type) }
        follows = ConfigFilter.Follows.allCases.map {
            Choice(
                name: $0 == .yes ? "Follows a feature" : "Follows no feature", value: $0.rawValue,
                isSelected: $0 == filter.follows)
        }
    }
}
