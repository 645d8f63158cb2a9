import Foundation

/// What truly differs between the store's two backends, and nothing else: how a transaction is
/// run, how a group commit's writes share one, whether a read can run now on the caller's
/// thread, how other instances hear of a commit, and the SQLite file's own operations. Two
/// conformers: `SQLiteBackend` and `PostgresStore`. The store above it never asks which runs;
/// statements differ below it, in `SQLConnection`.
protocol StoreBackend: Sendable {
    /// Runs `work` in one read transaction, a snapshot of the store. `expectingOneStatement`:
    /// `work` usually runs one statement, which a backend may run without a transaction around it.
    func read<T: Sendable>(
        expectingOneStatement: Bool, _ work: @escaping @Sendable (any SQLConnection) throws -> T
    ) async throws -> T

    /// Runs `work` in one write transaction: all of it is written, or none.
    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T

    /// Runs a group commit's jobs in one write transaction, then `done` with the commit's failure,
    /// if any (see `GroupCommit`).
    func commit(_ jobs: [GroupCommit.Job], done: @escaping @Sendable ((any Error)?) -> Void)

    /// Runs `work` in a read transaction now, on the caller's thread (an event loop's), or
    /// returns `nil` where a read has to wait for the network.
    func readNow<T>(_ work: (any SQLConnection) throws -> T) throws -> T?

    /// Whether a group commit records its jobs' first assignments ahead, in one statement
    /// (`AssignmentWriter.prerecord`): where each statement is a round trip.
    var prerecordsFirstAssignments: Bool { get }

    /// What other instances' commits changed, as they commit (`PostgresStore.changes`); `nil`
    /// where one server polls instead.
    func changeNotifications() -> AsyncStream<ChangeNotice>?

    /// Runs `work` holding the lease `name` across every instance on the database.
    func withLease<T: Sendable>(_ name: String, _ work: () async throws -> T) async throws -> T

    /// The SQLite database, for what only SQLite does (backups, restores, copies of its file).
    ///
    /// - throws: `StorageError.operationsNeedSQLite` on PostgreSQL.
    func sqlite() throws -> SQLiteBackend

    /// Lets go of the database.
    func close() async
}
