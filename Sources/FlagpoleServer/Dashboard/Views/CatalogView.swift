/// How the features page lays its features out: cards with every detail, or a compact table.
/// Without `?view=` it has the cards, which on a phone's width show one line each (name, state,
/// switch), so 300 features stay a few screens long without a script, a cookie or a second copy.
enum CatalogView: String, Sendable, CaseIterable {
    case cards
    case table
}

/// The two links that switch the layout, keeping the filters.
struct CatalogViewLink: Sendable {
    var name: String
    var value: String
    var url: String
    /// Chosen by `?view=`; `false` for both without it.
    var isCurrent: Bool

    static func links(to page: String, filter: FeatureFilter) -> [CatalogViewLink] {
        CatalogView.allCases.map { view in
            var chosen = filter
            chosen.view = view
            let name = view == .cards ? "Cards" : "Table"
            return CatalogViewLink(
                name: name, value: view.rawValue, url: page + chosen.queryString, isCurrent: filter.view == view)
        }
    }
}
