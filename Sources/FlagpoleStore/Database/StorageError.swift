import FlagpoleCore

/// Why an operation on the database file itself failed, worded for the person who can fix it.
public enum StorageError: FlagpoleError {
    /// The database was migrated by a newer Flagpole.
    case databaseTooNew(unknownMigrations: [String])
    /// A command that only reads named a file that does not exist.
    case databaseNotFound(path: String)
    /// A command that only reads met a schema that is behind: it does not migrate.
    case databaseNeedsMigration(path: String, pending: [String])
    case cannotOpen(path: String, reason: String)
    /// Another process held the database's write lock past the busy timeout.
    case busy
    /// The database refused an operation for a reason the store did not foresee.
    case storage(reason: String)
    /// `--db` or `FLAGPOLE_DB` held a PostgreSQL URL that can't be used.
    case invalidAddress(address: String, reason: String)
    /// Backup or restore named a PostgreSQL database: they work on SQLite files.
    case operationsNeedSQLite(address: String)
    /// The PostgreSQL server can't be reached, or dropped the connection: nothing was written,
    /// and the same request can succeed once it is back.
    case unavailable(reason: String)

    public var description: String {
        switch self {
        case .databaseTooNew(let unknown):
            "This database was migrated by a newer version of Flagpole (it has migrations \(unknown.joined(separator: ", ")) that this version does not know). Upgrade Flagpole to open it."
        case .databaseNotFound(let path):
            "There is no database at \(path). Nothing was created; check the path (--db, else $FLAGPOLE_DB, else ./flagpole.sqlite). To start a new database there, run a command that writes, such as `flagpole tenant create SLUG` or `flagpole migrate`: it creates the file."
        case .databaseNeedsMigration(let path, let pending):
            "The database at \(path) was made by an older Flagpole: migration\(pending.count == 1 ? "" : "s") \(pending.joined(separator: ", ")) \(pending.count == 1 ? "is" : "are") pending, and a command that only reads does not apply them. Nothing was changed; migrate it with `flagpole migrate --db \(path)`, then try again."
        case .cannotOpen(let path, let reason):
            "Cannot open the database at \(path): \(reason). Check the path and its permissions, or choose another with --db."
        case .busy:
            "The database stayed locked by another writer for more than 10 seconds. Nothing was written; try again."
        case .storage(let reason):
            "The database failed: \(reason). Nothing was written."
        case .invalidAddress(let address, let reason):
            "Cannot use the database URL \(address): \(reason)."
        case .operationsNeedSQLite(let address):
            "\(address) is a PostgreSQL database, and this works on SQLite files only: back PostgreSQL up with pg_dump, restore it with pg_restore (docs/POSTGRES.md). Nothing was changed."
        case .unavailable(let reason):
            "The database can't be reached: \(reason). Nothing was written; try again shortly."
        }
    }

    public var code: String {
        switch self {
        case .databaseTooNew: "database_too_new"
        case .databaseNotFound: "database_not_found"
        case .databaseNeedsMigration: "database_needs_migration"
        case .cannotOpen: "cannot_open"
        case .busy: "busy"
        case .storage: "storage"
        case .invalidAddress: "invalid_address"
        case .operationsNeedSQLite: "operations_need_sqlite"
        case .unavailable: "database_unavailable"
        }
    }

    /// Whether the database couldn't be reached: the same request may succeed once it is back.
    public var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}
