import FlagpoleCore

/// What the configs page is asked to show, read from its GET form: `?q=&tag=&type=&follows=`.
/// A value the page doesn't know filters nothing rather than failing.
struct ConfigFilter: Sendable, Equatable {
    /// Whether the config's value follows a feature's variation.
    enum Follows: String, Sendable, CaseIterable {
        case yes
        case no
    }

    var name = NameQuery("")
    var tag: String?
    var type: ConfigType?
    var follows: Follows?

    init() {}

    /// The filter of a query string as the page's GET form sends it (`SearchQuery`).
    ///
    /// - throws: `DashboardError.badForm` when the query is not URL-encoded.
    init(query: String) throws {
        let fields = try SearchQuery.fields(Fields.self, of: query)
        name = NameQuery(fields.q ?? "")
        tag = fields.tag.nonEmpty
        type = fields.type.flatMap(ConfigType.init(rawValue:))
        follows = fields.follows.flatMap(Follows.init(rawValue:))
    }

    var isFiltering: Bool { !name.isEmpty || tag != nil || type != nil || follows != nil }

    /// Why nothing shows when the filter leaves no config.
    var emptyMessage: String {
        var untagged = self
        untagged.tag = nil
        guard let tag, !untagged.isFiltering else { return "No config matches this search." }
        return "No config is tagged \(tag)."
    }

    func matches(_ config: Config) -> Bool {
        name.matches(config.name) && (tag.map(config.tags.contains) ?? true) && (type.map { $0 == config.type } ?? true)
            && (follows.map { $0 == Self.follows(config) } ?? true)
    }

    static func follows(_ config: Config) -> Follows { config.follows == nil ? .no : .yes }

    private struct Fields: Decodable {
        var q: String?
        var tag: String?
        var type: String?
        var follows: String?
    }
}
