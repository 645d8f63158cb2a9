import Synchronization

/// One writer for many small writes: whatever is pending when a commit ends goes into the next
/// transaction, together (group commit), and each caller hears back after the commit that holds
/// its rows.
///
/// Apps record their users' first assignments one user per request. A transaction each would
/// spend most of its time beginning and committing, with every request waiting its turn; with
/// requests gathered, a burst of thousands costs a few commits. Each write runs in a savepoint of
/// the shared transaction, so one that fails leaves the others' rows in, and its caller alone
/// gets its error. Nothing waits for a batch to fill: a write that finds the writer idle is
/// committed at once, alone.
final class GroupCommit: Sendable {
    private let backend: any StoreBackend
    private let queue = Mutex(Queue())

    private struct Queue {
        var pending: [Job] = []
        var isCommitting = false
    }

    /// One caller's write, type-erased: `run` inside the transaction, then `finish` with the
    /// commit's failure, if any. `run(db, true)` runs it in a savepoint, keeping its failure to
    /// itself; `run(db, false)` runs it bare, and its failure fails the whole transaction.
    struct Job: Sendable {
        /// The first assignments `run` will record, which PostgreSQL records for all the jobs
        /// of a transaction in one statement before they run (`AssignmentWriter.prerecord`).
        let firsts: [PendingFirst]
        let run: @Sendable (Transaction, _ inSavepoint: Bool) throws -> Void
        let finish: @Sendable ((any Error)?) -> Void
    }

    /// What a job's work returned or threw, kept from its savepoint until the commit.
    private final class Outcome<T: Sendable>: Sendable {
        let result = Mutex<Result<T, any Error>?>(nil)
    }

    init(_ backend: any StoreBackend) {
        self.backend = backend
    }

    /// Runs `work` in the next group transaction and returns its result once that transaction
    /// has committed. When `work` throws, its own writes are rolled back and the error is
    /// thrown here; the other writes of the group are unaffected. On PostgreSQL `work` may run
    /// twice (see `commit`): it must touch nothing but the database.
    func write<T: Sendable>(
        prerecording firsts: [PendingFirst] = [], _ work: @escaping @Sendable (Transaction) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            write(prerecording: firsts, work) { continuation.resume(with: $0) }
        }
    }

    /// Runs `work` in the next group transaction and hands its outcome to `completion`, on the
    /// writer's queue, once that transaction has committed (or failed to): for callers that
    /// must not wait, such as an event loop.
    ///
    /// - parameter firsts: the first assignments `work` records (with `recordFirst`), when they
    ///   are known before it runs.
    func write<T: Sendable>(
        prerecording firsts: [PendingFirst] = [], _ work: @escaping @Sendable (Transaction) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let outcome = Outcome<T>()
        enqueue(
            Job(
                firsts: firsts,
                run: { db, inSavepoint in
                    let result =
                        inSavepoint ? Result { try db.inSavepoint { try work(db) } } : .success(try work(db))
                    outcome.result.withLock { $0 = result }
                },
                finish: { commitFailure in
                    if let commitFailure {
                        completion(.failure(commitFailure))
                    } else {
                        completion(outcome.result.withLock { $0! })
                    }
                }))
    }

    /// Writes waiting for the next transaction.
    var pendingCount: Int {
        queue.withLock { $0.pending.count }
    }

    private func enqueue(_ job: Job) {
        let isIdle = queue.withLock { queue in
            queue.pending.append(job)
            defer { queue.isCommitting = true }
            return !queue.isCommitting
        }
        if isIdle { commitPending() }
    }

    /// Commits everything pending as one transaction, then, from the writer's queue, whatever
    /// arrived meanwhile, until nothing is left.
    private func commitPending() {
        let jobs = queue.withLock { queue in
            defer { queue.pending = [] }
            if queue.pending.isEmpty { queue.isCommitting = false }
            return queue.pending
        }
        guard !jobs.isEmpty else { return }
        backend.commit(jobs) { failure in
            for job in jobs { job.finish(failure) }
            self.commitPending()
        }
    }
}
