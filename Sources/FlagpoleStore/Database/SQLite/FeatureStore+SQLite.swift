import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB

/// SQLite's side of opening the store: the file (or a database in memory), its connection
/// settings and its migrations, run by GRDB's migrator.
extension FeatureStore {
    /// The SQLite database, for what only SQLite does (backups, restores, copies of its file).
    ///
    /// - throws: `StorageError.operationsNeedSQLite` on PostgreSQL.
    func sqliteWriter() throws -> any DatabaseWriter {
        try backend.sqlite().writer
    }

    /// Opens a store on `writer`, refusing a database migrated by a newer version and
    /// applying the migrations it lacks.
    ///
    /// - throws: `StorageError.databaseTooNew`, `StorageError.storage`.
    init(_ writer: any DatabaseWriter) throws {
        self.init(current: SQLiteBackend(writer: writer))
        try Self.translatingErrors {
            let unknown = try writer.read { try Self.status(of: $0).unknown }
            guard unknown.isEmpty else { throw StorageError.databaseTooNew(unknownMigrations: unknown) }
            try Self.migrator.migrate(writer)
        }
    }

    /// Opens the SQLite file at `path`, in WAL mode so the server keeps reading while the
    /// command line writes. For `.readWrite` the file is created and migrated when needed;
    /// `.readOnly` creates and migrates nothing: a missing file, or one whose schema is behind,
    /// is refused (a mistyped path must not read as an empty database).
    ///
    /// - throws: `StorageError.databaseNotFound`, `StorageError.databaseNeedsMigration`,
    ///   `StorageError.cannotOpen`, `StorageError.databaseTooNew`.
    public static func open(
        atPath path: String, access: AccessMode = .readWrite, durability: Durability = .normal
    ) throws -> FeatureStore {
        if access == .readOnly {
            let queue = try readOnlyQueue(atPath: path)
            let status = try translatingErrors { try queue.read(Self.status(of:)) }
            guard status.unknown.isEmpty else { throw StorageError.databaseTooNew(unknownMigrations: status.unknown) }
            guard status.pending.isEmpty else {
                throw StorageError.databaseNeedsMigration(path: path, pending: status.pending)
            }
            return FeatureStore(current: SQLiteBackend(writer: queue))
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // After the pool's own setup, which sets NORMAL on the writer connection.
            if durability == .full {
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            }
        } catch let error as DatabaseError {
            throw StorageError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        }
        return try FeatureStore(pool)
    }

    /// A store in memory, for tests and dry runs of whole workflows.
    public static func inMemory() throws -> FeatureStore {
        try FeatureStore(DatabaseQueue(configuration: configuration))
    }

    /// Which migrations the file at `path` has, without migrating it.
    ///
    /// - throws: `StorageError.databaseNotFound`, `StorageError.cannotOpen`.
    public static func migrationStatus(atPath path: String) throws -> MigrationStatus {
        let queue = try readOnlyQueue(atPath: path)
        return try translatingErrors { try queue.read(Self.status(of:)) }
    }

    private static func readOnlyQueue(atPath path: String) throws -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: path) else { throw StorageError.databaseNotFound(path: path) }
        var readOnly = configuration
        readOnly.readonly = true
        do {
            return try DatabaseQueue(path: path, configuration: readOnly)
        } catch let error as DatabaseError {
            throw StorageError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        }
    }

    private static func status(of db: Database) throws -> MigrationStatus {
        let migrator = Self.migrator
        let applied = try db.tableExists("grdb_migrations") ? try migrator.appliedIdentifiers(db).sorted() : []
        let known = migrator.migrations
        return MigrationStatus(
            applied: applied.filter(known.contains),
            pending: known.filter { !applied.contains($0) },
            unknown: applied.filter { !known.contains($0) })
    }

    /// Another process (the CLI beside the server) may hold the write lock for a moment.
    private static var configuration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            // Per-user tables reach millions of rows: with SQLite's default 2 MB of page cache, a
            // bulk write spills pages to the WAL mid-transaction and reads them back.
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKilobytes)")
            // Reads of a large file map its pages rather than copying each into the page cache
            // with a system call: a user's history among 10 000 000 events touches a dozen.
            try db.execute(sql: "PRAGMA mmap_size = \(mmapBytes)")
            // Each write of a group commit runs in a savepoint, and SQLite keeps the pages a
            // savepoint may have to restore in a temporary journal: in a file, that is several
            // times the bytes of the write itself, one system call a page.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        return configuration
    }

    /// Page cache per connection, in KiB: an upper bound, only filled by pages actually read.
    static let cacheKilobytes = 65_536

    /// How much of the file reads may map: address space, not memory.
    static let mmapBytes = 1 << 30

    /// Applies every migration `writer` lacks.
    static func migrate(_ writer: any DatabaseWriter) throws {
        try migrator.migrate(writer)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in SchemaMigrations.all {
            migrator.registerMigration(migration.identifier) { db in
                try db.execute(sql: migration.sql)
                try dataSteps[migration.identifier]?(db)
            }
        }
        return migrator
    }

    /// What a migration's SQL can't do itself, run right after it in the same transaction.
    private static let dataSteps: [String: @Sendable (Database) throws -> Void] = [
        // SQLite can't normalise Unicode: the name keys of the features already stored.
        "0005_identity_and_history": { db in
            let update = try db.makeStatement(sql: "UPDATE features SET name_key = ? WHERE id = ?")
            for row in try Row.fetchAll(db, sql: "SELECT id, name FROM features") {
                try update.execute(arguments: [Feature.nameKey(row["name"]), row["id"]])
            }
        }
    ]
}
