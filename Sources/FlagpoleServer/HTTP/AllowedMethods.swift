import HTTPTypes
import Hummingbird
import Synchronization

/// Which methods each route path takes, so a known path asked with another method gets
/// `405 Method Not Allowed` and an `Allow` header (RFC 9110 §15.5.6) rather than `404`.
/// Hummingbird's router answers both alike; this table is filled once the routes are added.
final class AllowedMethods: Sendable {
    private let table = Mutex<[(path: [Substring], methods: [HTTPRequest.Method])]>([])

    /// Records the routes of `router`, HEAD included wherever GET is (the router answers it).
    func record(_ router: Router<some RequestContext>) {
        var table: [String: [HTTPRequest.Method]] = [:]
        for route in router.routes {
            table[route.path.description, default: []].append(route.method)
            if route.method == .get { table[route.path.description, default: []].append(.head) }
        }
        self.table.withLock { $0 = table.map { (path: $0.key.split(separator: "/"), methods: $0.value) } }
    }

    /// The methods of the route path matching `path` (captures match any one segment), if any.
    func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/")
        return table.withLock { table in
            table.first { route in
                route.path.count == segments.count
                    && zip(route.path, segments).allSatisfy { pattern, segment in
                        pattern.hasPrefix("{") || pattern == segment
                    }
            }?.methods
        }
    }
}
