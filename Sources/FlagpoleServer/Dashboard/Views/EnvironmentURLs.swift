import FlagpoleCore
import FlagpoleStore
import Foundation

/// The dashboard's addresses for one environment. Feature names, config names and user ids are
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
    var configs: String { base + "/configs" }
    /// The create form's target (outside `/configs/`, where any name is a config's).
    var newConfigForm: String { base + "/new-config" }
    var segments: String { base + "/segments" }
    /// The editor of a new segment (outside `/segments/`, where any name is a segment's).
    var newSegment: String { base + "/new-segment" }

    func feature(_ name: String) -> String { base + "/features/" + Self.segment(name) }
    func config(_ name: String) -> String { configs + "/" + Self.segment(name) }
    /// The page of the segment named `name` (a segment of users, not a path segment).
    func userSegment(_ name: String) -> String { segments + "/" + Self.segment(name) }
    /// The page that makes a new config `name` of `type` (`GET` renders its editor; nothing is
    /// written until it is saved).
    func newConfig(_ name: String, type: ConfigType) -> String { config(name) + "?type=" + type.rawValue }
    /// `page` (the overview or the configs) showing only what is tagged `tag`.
    static func tagged(_ page: String, _ tag: String) -> String { page + "?tag=" + queryValue(tag) }
    func user(_ id: String) -> String { users + "?user=" + Self.queryValue(id) }
    func overrides(of user: String) -> String { users + "/" + Self.segment(user) + "/overrides" }
    func compare(_ from: Int, with to: Int) -> String { revisions + "?from=\(from)&to=\(to)" }

    static func segment(_ text: String) -> String {
        // A browser resolves `.` and `..` segments before sending the request: encoded, they
        // reach the server as a name.
        if text == "." || text == ".." { return String(repeating: "%2E", count: text.count) }
        return text.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? text
    }

    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? text
    }

    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;"))
    private static let queryAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
}
