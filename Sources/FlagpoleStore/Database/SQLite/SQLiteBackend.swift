import GRDB

/// A SQLite file (or a database in memory), through GRDB: one writer at a time, reads beside it
/// in WAL mode, and one server per file, which polls for the command line's writes.
struct SQLiteBackend: StoreBackend {
    let writer: any DatabaseWriter

    func read<T: Sendable>(
        expectingOneStatement: Bool, _ work: @escaping @Sendable (any SQLConnection) throws -> T
    ) async throws -> T {
        try await writer.read(work)
    }

    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await writer.write(work)
    }

    /// Each job in a savepoint of one immediate transaction, on the writer's queue.
    func commit(_ jobs: [GroupCommit.Job], done: @escaping @Sendable ((any Error)?) -> Void) {
        writer.asyncWriteWithoutTransaction { db in
            do {
                try db.inTransaction(.immediate) {
                    let transaction = Transaction(db)
                    for job in jobs { try job.run(transaction, true) }
                    try transaction.finish()
                    return .commit
                }
                done(nil)
            } catch {
                done(error)
            }
        }
    }

    func readNow<T>(_ work: (any SQLConnection) throws -> T) throws -> T? {
        try writer.unsafeRead { db in try work(db) }
    }

    var prerecordsFirstAssignments: Bool { false }

    func changeNotifications() -> AsyncStream<ChangeNotice>? { nil }

    /// One server per file: the work runs at once.
    func withLease<T: Sendable>(_ name: String, _ work: () async throws -> T) async throws -> T {
        try await work()
    }

    func sqlite() throws -> SQLiteBackend { self }

    /// The file closes with the last copy of the store.
    func close() async {}
}
