import ArgumentParser
import FlagpoleStore
import Foundation

/// `--db PATH_OR_URL`, shared by every command that opens the store.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The SQLite database file, or a PostgreSQL database as postgres://USER:PASSWORD@HOST:PORT/NAME (default: $FLAGPOLE_DB, else ./flagpole.sqlite).",
            valueName: "path-or-url"))
    var explicitPath: String?

    @Option(
        help: ArgumentHelp(
            "normal: a commit survives the process being killed, not always the machine losing power; full: it survives both, each commit flushed to disk (default: $FLAGPOLE_SYNCHRONOUS, else normal).",
            valueName: "normal|full"))
    var synchronous: FeatureStore.Durability?

    /// The database the command works on.
    var address: DatabaseAddress {
        get throws {
            try Self.address(explicitPath ?? Invocation.current.environment["FLAGPOLE_DB"] ?? "./flagpole.sqlite")
        }
    }

    /// The database `text` names (a path or a URL), read with the invocation's variables and
    /// working directory.
    static func address(_ text: String) throws -> DatabaseAddress {
        let invocation = Invocation.current
        switch try DatabaseAddress(parsing: text, environment: invocation.environment) {
        case .sqlite(let path): return .sqlite(path: invocation.resolve(path))
        case .postgres(let address): return .postgres(address)
        }
    }

    /// The SQLite file the command works on, for what only SQLite does (backups, restores).
    var path: String {
        get throws {
            switch try address {
            case .sqlite(let path): return path
            case .postgres(let postgres): throw StorageError.operationsNeedSQLite(address: postgres.description)
            }
        }
    }

    /// Backup and restore are SQLite's: PostgreSQL has its own tools, which Flagpole doesn't redo.
    func refusePostgres(for command: String) throws {
        guard case .postgres(let postgres) = try address else { return }
        throw ValidationError(
            """
            `flagpole \(command)` works on SQLite files. \(postgres) is a PostgreSQL database: back it up with \
            PostgreSQL's own tools, `pg_dump --format=custom --file=FILE URL`, and restore into a new, empty \
            database with `pg_restore --dbname=URL FILE` (docs/POSTGRES.md). `flagpole copy --from URL --to \
            FILE.sqlite` makes a SQLite file of it.
            """)
    }

    /// How much a commit survives.
    var durability: FeatureStore.Durability {
        get throws {
            if let synchronous { return synchronous }
            guard let text = Invocation.current.environment["FLAGPOLE_SYNCHRONOUS"] else { return .normal }
            guard let durability = FeatureStore.Durability(rawValue: text) else {
                throw ValidationError("FLAGPOLE_SYNCHRONOUS must be normal or full, not \"\(text)\".")
            }
            return durability
        }
    }

    /// Opens the store, creating and migrating the file or database when needed; commands that
    /// only read pass `.readOnly` so they change nothing on disk (a missing or outdated SQLite
    /// file is refused).
    func openStore(_ access: FeatureStore.AccessMode = .readWrite) async throws -> FeatureStore {
        try await FeatureStore.open(try address, access: access, durability: try durability)
    }
}

extension FeatureStore.Durability: ExpressibleByArgument {}
