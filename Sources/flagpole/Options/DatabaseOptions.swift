import ArgumentParser
import FlagpoleStore
import Foundation

/// `--db PATH`, shared by every command that opens the store.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The SQLite database file (default: $FLAGPOLE_DB, else ./flagpole.sqlite).", valueName: "path"))
    var explicitPath: String?

    @Option(
        help: ArgumentHelp(
            "normal: a commit survives the process being killed, not always the machine losing power; full: it survives both, each commit flushed to disk (default: $FLAGPOLE_SYNCHRONOUS, else normal).",
            valueName: "normal|full"))
    var synchronous: FeatureStore.Durability?

    /// The file the command works on.
    var path: String {
        explicitPath ?? ProcessInfo.processInfo.environment["FLAGPOLE_DB"] ?? "./flagpole.sqlite"
    }

    /// How much a commit survives.
    var durability: FeatureStore.Durability {
        get throws {
            if let synchronous { return synchronous }
            guard let text = ProcessInfo.processInfo.environment["FLAGPOLE_SYNCHRONOUS"] else { return .normal }
            guard let durability = FeatureStore.Durability(rawValue: text) else {
                throw ValidationError("FLAGPOLE_SYNCHRONOUS must be normal or full, not \"\(text)\".")
            }
            return durability
        }
    }

    /// Opens the store, creating and migrating the file when needed; commands that only
    /// read pass `.readOnly` so they change nothing on disk (a missing or outdated file is refused).
    func openStore(_ access: FeatureStore.Access = .readWrite) throws -> FeatureStore {
        try FeatureStore.open(atPath: path, access: access, durability: try durability)
    }
}

extension FeatureStore.Durability: ExpressibleByArgument {}
