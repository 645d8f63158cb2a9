import FlagpoleCore
import FlagpoleMigrations
import Foundation

/// The repository of tenants, environments, features and their history, on SQLite or PostgreSQL.
///
/// Its operations are its domains' services (`store.catalog`, `store.assignments`…, in the
/// folders of the same names), each public method of which is one read or one write
/// transaction, so a failed operation writes nothing and readers never see half of a change.
/// SQL stays inside this module: callers speak of imports, exports and revisions, never of
/// rows, nor of which backend holds them.
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
    public enum AccessMode: Sendable {
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
    init(current backend: any StoreBackend) {
        self.backend = backend
        self.groupCommit = GroupCommit(backend)
    }

    /// Opens the store at `address`: a SQLite file (see `open(atPath:access:durability:)`) or a
    /// PostgreSQL database, migrated when it is behind.
    ///
    /// - throws: `StorageError.databaseNotFound`, `StorageError.databaseNeedsMigration`,
    ///   `StorageError.cannotOpen`, `StorageError.databaseTooNew`.
    public static func open(
        _ address: DatabaseAddress, access: AccessMode = .readWrite, durability: Durability = .normal
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

    /// Runs `work` in a read transaction when `isReadOnly` (a dry run: what it would write is
    /// planned, and nothing is), else in a write transaction.
    func transaction<T: Sendable>(
        isReadOnly: Bool, _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        isReadOnly ? try await read(work) : try await write(work)
    }

    /// Runs `work` in a savepoint of the next group transaction (see `GroupCommit`): all of it
    /// is written, or none, and it returns once the transaction holding it has committed. For
    /// small writes that many callers make at once.
    func writeInGroup<T: Sendable>(
        prerecording firsts: [PendingFirst] = [], _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        try await Self.translatingErrorsAsync { try await groupCommit.write(prerecording: firsts, work) }
    }

    /// Keeps SQL out of user-facing errors (`StorageError.init(translating:)`).
    static func translatingErrorsAsync<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch {
            throw StorageError(translating: error) ?? error
        }
    }

    static func translatingErrors<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch {
            throw StorageError(translating: error) ?? error
        }
    }
}

// MARK: Services

extension FeatureStore {
    /// Features, configs, targeting, revisions, import, export, edits, rollback, history.
    public var catalog: Catalog { Catalog(store: self) }

    /// Users' records: documents, evaluations, first assignments, overrides, unlocks, forgetting.
    public var assignments: Assignments { Assignments(store: self) }

    /// Goals, events, exposures and results.
    public var experiments: Experiments { Experiments(store: self) }

    /// Ramps, their guards, and triggers.
    public var rollouts: Rollouts { Rollouts(store: self) }

    /// Tenants, environments' settings, keys, members and sessions.
    public var access: Access { Access(store: self) }

    /// Webhooks, the publish log, fetch counts.
    public var outbound: Outbound { Outbound(store: self) }

    /// What writes changed: the change sequences and the audit feed.
    public var changes: Changes { Changes(store: self) }
}

/// A domain's operations (`store.rollouts`…): each public method is one read or one write
/// transaction of the store it was taken from, which holds the backend and what the domains
/// share (the group commit, the pinning plans, the observers of changes).
protocol StoreService: Sendable {
    var store: FeatureStore { get }
}

extension StoreService {
    func read<T: Sendable>(
        expectingOneStatement: Bool = false, _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        try await store.read(expectingOneStatement: expectingOneStatement, work)
    }

    func write<T: Sendable>(_ work: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try await store.write(work)
    }

    func transaction<T: Sendable>(
        isReadOnly: Bool, _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        try await store.transaction(isReadOnly: isReadOnly, work)
    }
}

extension FeatureStore {
    /// Reads from the database, for health checks: throws when the file cannot be read.
    public func checkHealth() async throws {
        _ = try await read { db in try db.value(Int.self, "SELECT 1") }
    }
}
