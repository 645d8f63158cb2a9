import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB

/// The repository of tenants, environments, features and their history, on SQLite or PostgreSQL.
///
/// Every public method is one read or one write transaction, so a failed operation writes
/// nothing and readers never see half of a change. SQL stays inside this module: callers
/// speak of imports, exports and revisions, never of rows, nor of which backend holds them.
public struct FeatureStore: Sendable {
    /// What differs between SQLite and PostgreSQL: everything above it is the same on both.
    let backend: any StoreBackend
    /// Gathers small concurrent writes (first assignments) into shared transactions.
    let groupCommit: GroupCommit
    /// Each environment's current revision, ready to pin for a user.
    let pinningPlans = PinningPlans()
    /// Told of the environments each committed write changed (`observeChanges`).
    let changeObservers = ChangeObservers()

    /// How a command means to use the file.
    public enum Access: Sendable {
        /// Writes, and migrates the schema when it is behind.
        case readWrite
        /// Only reads: the file is opened read-only, so a read changes nothing on disk (not even
        /// the schema cookie a server's cached statements depend on) and works on a read-only mount.
        case readOnly
    }

    /// How much a commit survives. Either way a committed write survives the process being
    /// killed; they differ on the machine losing power.
    public enum Durability: String, Sendable, CaseIterable {
        /// SQLite's `synchronous=NORMAL` in WAL mode: a commit is written to the WAL but not
        /// flushed to the disk, which happens at checkpoints. A power loss or an operating system
        /// crash can undo the commits since the last checkpoint (never leaving half of one).
        case normal
        /// `synchronous=FULL`: every commit is flushed to the disk before it is acknowledged.
        /// Group commit shares one flush among the writes gathered in it.
        case full
    }

    /// Wraps a database whose schema is known to be current.
    private init(current backend: any StoreBackend) {
        self.backend = backend
        self.groupCommit = GroupCommit(backend)
    }

    /// The SQLite database, for what only SQLite does (backups, restores, copies of its file).
    ///
    /// - throws: `StorageError.operationsNeedSQLite` on PostgreSQL.
    func sqliteWriter() throws -> any DatabaseWriter {
        try backend.sqliteWriter()
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
        atPath path: String, access: Access = .readWrite, durability: Durability = .normal
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

    /// Opens the store at `address`: a SQLite file (see `open(atPath:access:durability:)`) or a
    /// PostgreSQL database, migrated when it is behind.
    ///
    /// - throws: `StorageError.databaseNotFound`, `StorageError.databaseNeedsMigration`,
    ///   `StorageError.cannotOpen`, `StorageError.databaseTooNew`.
    public static func open(
        _ address: DatabaseAddress, access: Access = .readWrite, durability: Durability = .normal
    ) async throws -> FeatureStore {
        switch address {
        case .sqlite(let path): return try open(atPath: path, access: access, durability: durability)
        case .postgres(let postgres):
            return FeatureStore(current: try await PostgresStore.open(postgres, migrating: access == .readWrite))
        }
    }

    /// Lets go of the database: PostgreSQL's connections close (SQLite's file closes with the
    /// last copy of the store).
    public func close() async {
        await backend.close()
    }

    /// What other processes' commits changed, as they commit (their change sequences say which
    /// environments and users): on PostgreSQL, where servers learn of each other's writes by
    /// `LISTEN`/`NOTIFY`. `nil` on SQLite, whose one server polls.
    public func changeNotifications() -> AsyncStream<ChangeNotice>? {
        backend.changeNotifications()
    }

    /// Runs `work` holding the lease `name`: on PostgreSQL, one instance at a time across every
    /// server on the database (background work such as publishing, which two instances must not
    /// do at once); on SQLite, whose file has one server, it runs at once.
    public func withLease<T: Sendable>(_ name: String, _ work: () async throws -> T) async throws -> T {
        try await backend.withLease(name, work)
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

    // MARK: Transactions

    /// Runs `work` in one read transaction. `expectingOneStatement` says `work` usually runs a
    /// single statement, which PostgreSQL then runs without a transaction around it (see
    /// `PostgresStore.read`).
    func read<T: Sendable>(
        expectingOneStatement: Bool = false, _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        let transacting: @Sendable (any SQLConnection) throws -> T = { try work(Transaction($0)) }
        return try await Self.translatingErrorsAsync {
            try await backend.read(expectingOneStatement: expectingOneStatement, transacting)
        }
    }

    /// Runs `work` in one write transaction: all of it is written, or none. What it changed is
    /// told as it commits (`Transaction.finish`), and, once it has committed, to the observers of
    /// the environments whose delivery it changed (`observeChanges`), before it returns.
    func write<T: Sendable>(_ work: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        let transacting: @Sendable (any SQLConnection) throws -> (T, changed: [EnvironmentPath]) = { connection in
            let transaction = Transaction(connection)
            let result = try work(transaction)
            try transaction.finish()
            return (result, transaction.changedEnvironments)
        }
        let (result, changed) = try await Self.translatingErrorsAsync { try await backend.write(transacting) }
        await changeObservers.tell(changed, of: self)
        return result
    }

    /// Runs `work` in a savepoint of the next group transaction (see `GroupCommit`): all of it
    /// is written, or none, and it returns once the transaction holding it has committed. For
    /// small writes that many callers make at once.
    func writeInGroup<T: Sendable>(
        prerecording firsts: [PendingFirst] = [], _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        try await Self.translatingErrorsAsync { try await groupCommit.write(prerecording: firsts, work) }
    }

    /// Keeps SQL out of user-facing errors.
    static func translatingErrorsAsync<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as DatabaseError {
            throw StorageError(error)
        }
    }

    static func translatingErrors<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as DatabaseError {
            throw StorageError(error)
        }
    }
}

extension FeatureStore {
    /// Reads from the database, for health checks: throws when the file cannot be read.
    public func checkHealth() async throws {
        _ = try await read { db in try db.value(Int.self, "SELECT 1") }
    }
}
