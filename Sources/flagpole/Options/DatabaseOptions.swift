import ArgumentParser
import FlagpoleStore
import Foundation

/// `--db PATH`, shared by every command that opens the store.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp(
        "The SQLite database file (default: $FLAGPOLE_DB, else ./flagpole.sqlite).", valueName: "path"))
    var explicitPath: String?

    /// The file the command works on.
    var path: String {
        explicitPath ?? ProcessInfo.processInfo.environment["FLAGPOLE_DB"] ?? "./flagpole.sqlite"
    }

    /// Opens the store, creating and migrating the file when needed; commands that only
    /// read pass `.readOnly` so they change nothing on disk (a missing or outdated file is refused).
    func openStore(_ access: FeatureStore.Access = .readWrite) throws -> FeatureStore {
        try FeatureStore.open(atPath: path, access: access)
    }
}
