/// PostgreSQL's side of `StoreBackend`: a pool of connections that several servers share.
extension PostgresStore: StoreBackend {
    /// A round trip holds the write lock: the jobs' first assignments are recorded together
    /// first, and the jobs run bare. Only when one fails does the transaction roll back and run
    /// them again, one by one, each in a savepoint (itself a round trip). Running a job twice is
    /// safe: the first run's writes were rolled back, and its outcome is replaced by the second's.
    func commit(_ jobs: [GroupCommit.Job], done: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do {
                try await write { connection in
                    let transaction = Transaction(connection)
                    try AssignmentWriter.prerecord(jobs.flatMap(\.firsts), in: transaction)
                    for job in jobs { try job.run(transaction, false) }
                    try AssignmentWriter.requireEveryPrerecordedTaken(in: transaction)
                    try transaction.finish()
                }
                done(nil)
            } catch {
                do {
                    try await write { connection in
                        let transaction = Transaction(connection)
                        for job in jobs { try job.run(transaction, true) }
                        try transaction.finish()
                    }
                    done(nil)
                } catch {
                    done(error)
                }
            }
        }
    }

    /// Every read waits for the network: none runs on an event loop.
    func readNow<T>(_ work: (any SQLConnection) throws -> T) throws -> T? { nil }

    var prerecordsFirstAssignments: Bool { true }

    func changeNotifications() -> AsyncStream<ChangeNotice>? { changes() }

    func sqlite() throws -> SQLiteBackend {
        throw StorageError.operationsNeedSQLite(address: address.description)
    }
}
