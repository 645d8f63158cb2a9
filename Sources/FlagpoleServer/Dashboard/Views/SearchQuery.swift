import Hummingbird

/// The query of a page's GET search form, as a browser sends it (a space as `+`).
enum SearchQuery {
    /// The form's fields.
    ///
    /// - throws: `DashboardError.badForm` when the query is not URL-encoded.
    static func fields<Fields: Decodable>(_ type: Fields.Type, of query: String) throws -> Fields {
        do {
            return try URLEncodedFormDecoder().decode(type, from: query)
        } catch {
            throw DashboardError.badForm("The search could not be read (\(error)). Search again from the page's form.")
        }
    }
}
