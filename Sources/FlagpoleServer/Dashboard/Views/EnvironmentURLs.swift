import FlagpoleStore
import Foundation

/// The dashboard's addresses for one environment. Feature names and user ids are
/// percent-encoded as one path segment each.
struct EnvironmentURLs: Sendable {
    let base: String

    init(_ path: EnvironmentPath) {
        base = "/tenants/\(Self.segment(path.tenant.rawValue))/\(Self.segment(path.environment.rawValue))"
    }

    var overview: String { base }
    var users: String { base + "/users" }
    var revisions: String { base + "/revisions" }
    var importing: String { base + "/import" }
    var export: String { base + "/export" }
    var download: String { base + "/export/features.json" }
    var rollback: String { base + "/revisions/rollback" }

    func feature(_ name: String) -> String { base + "/features/" + Self.segment(name) }
    func user(_ id: String) -> String { users + "?user=" + Self.queryValue(id) }
    func overrides(of user: String) -> String { users + "/" + Self.segment(user) + "/overrides" }
    func compare(_ from: Int, with to: Int) -> String { revisions + "?from=\(from)&to=\(to)" }

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? text
    }

    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? text
    }

    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;"))
    private static let queryAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
}
