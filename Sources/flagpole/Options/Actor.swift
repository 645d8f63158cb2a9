import Foundation

/// Who runs the command, recorded on the revisions it makes: the operator's own declaration
/// for direct database access, `cli:` and $FLAGPOLE_ACTOR, else the login name, so that it is
/// never mistaken for a member the server authenticated.
enum Actor {
    static var current: String {
        let environment = ProcessInfo.processInfo.environment
        let name = environment["FLAGPOLE_ACTOR"] ?? environment["USER"] ?? ""
        return name.isEmpty ? "cli" : name.hasPrefix("cli:") ? name : "cli:\(name)"
    }
}
