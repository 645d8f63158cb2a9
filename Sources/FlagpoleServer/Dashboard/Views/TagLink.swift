/// A tag as a filter link: the page it is on, showing only what carries the tag.
struct TagLink: Sendable {
    var name: String
    var url: String
    var isCurrent: Bool

    /// Links for `tags` to `page` filtered by each (`EnvironmentURLs.tagged`), `current` marked.
    static func links(_ tags: [String], to page: String, current: String?) -> [TagLink] {
        tags.map { TagLink(name: $0, url: EnvironmentURLs.tagged(page, $0), isCurrent: $0 == current) }
    }

    /// Every tag of `lists`, once each, in the order first seen.
    static func union(_ lists: [[String]]) -> [String] {
        var all: [String] = []
        for tag in lists.joined() where !all.contains(tag) { all.append(tag) }
        return all
    }
}
