import Foundation

/// Who runs the command, recorded on the revisions it makes: $FLAGPOLE_ACTOR, else the
/// login name, else "cli".
enum Actor {
    static var current: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["FLAGPOLE_ACTOR"] ?? environment["USER"].map { "cli:\($0)" } ?? "cli"
    }
}
