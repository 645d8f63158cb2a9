import Foundation

/// The address people and alerts reach the server at, for the links the command line prints:
/// `--url`, else `$FLAGPOLE_URL`, else `http://localhost:8080`, without a trailing slash.
enum ServerURL {
    static func base(_ url: String?) -> String {
        let base = url ?? Invocation.current.environment["FLAGPOLE_URL"] ?? "http://localhost:8080"
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }
}
