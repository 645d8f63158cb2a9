import Crypto
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// The store's connections to one PostgreSQL database: a pool, and the threads its
/// transactions run on.
///
/// **Writes are serialized.** Every write transaction first takes one transaction-scoped
/// advisory lock (`writeLock`), held until it commits or rolls back, across every instance on
/// the database. So writes see the store as SQLite's single writer sees it: a check made inside
/// a write (an `If-Match`, a first assignment) holds until its commit, and ids are handed out in
/// commit order, which the experiment ledger's cursor over `assignment_events` relies on. Reads
/// never wait for the lock: each runs in a `REPEATABLE READ, READ ONLY` snapshot, as consistent as
/// a SQLite read transaction.
final class PostgresStore: Sendable {
    let address: PostgresAddress
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let logger: Logger

    /// The advisory lock every write transaction holds: `flagwrit` in ASCII (migrations hold
    /// `flagpole`).
    static let writeLock: Int64 = 0x666c_6167_7772_6974

    /// Connections at most, per store.
    static let connections = 16

    /// The threads transactions run on, shared by every store of the process: each waits for its
    /// statements' answers, so a thread is busy only while its transaction is.
    private static let threads: NIOThreadPool = {
        let threads = NIOThreadPool(numberOfThreads: 64)
        threads.start()
        return threads
    }()

    /// The event loop of every store's connections: answers from the database are read on a
    /// thread of their own, not behind the HTTP server's requests on its loops.
    private static let eventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private init(address: PostgresAddress, client: PostgresClient, logger: Logger) {
        self.address = address
        self.client = client
        self.logger = logger
        self.running = Task { await client.run() }
    }

    /// The last copy of a store gone, its connections close.
    deinit {
        running.cancel()
    }

    /// Connects to `address`, refusing a database in another encoding than UTF-8 or migrated by a
    /// newer Flagpole, and applies the migrations it lacks; with `migrating` false (a command that
    /// only reads), a database whose migrations are pending is refused instead.
    ///
    /// - throws: `StorageError.cannotOpen`, `StorageError.databaseTooNew`,
    ///   `StorageError.databaseNeedsMigration`.
    static func open(
        _ address: PostgresAddress, migrating: Bool = true, logger: Logger = Logger(label: "flagpole.postgres")
    ) async throws
        -> PostgresStore
    {
        try await PostgresSession.with(address) { session in
            if migrating {
                try await PostgresSchema.migrate(session)
                return
            }
            let status = try await PostgresSchema.status(session)
            guard status.unknown.isEmpty else { throw StorageError.databaseTooNew(unknownMigrations: status.unknown) }
            guard status.pending.isEmpty else {
                throw StorageError.databaseNeedsMigration(path: address.description, pending: status.pending)
            }
        }
        var configuration = PostgresClient.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password,
            database: address.database, tls: tls(address.tls))
        configuration.options.maximumConnections = connections
        configuration.options.additionalStartupParameters = PostgresSession.startupParameters
        return PostgresStore(
            address: address,
            client: PostgresClient(configuration: configuration, eventLoopGroup: eventLoop, backgroundLogger: logger),
            logger: logger)
    }

    /// The same choices as `PostgresSession`'s, in the pool's terms.
    private static func tls(_ mode: PostgresAddress.TLSMode) -> PostgresClient.Configuration.TLS {
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(unverified)
        case .require: return .require(unverified)
        case .verifyFull: return .require(.makeClientConfiguration())
        }
    }

    /// The channel of the `NOTIFY` that each step of an environment's change sequence sends
    /// (migration 0019's trigger), its payload `delivery` or `users`.
    static let changeChannel = "flagpole_changes"

    /// What each instance's commits changed, as they commit: `.delivery` after a step that changed
    /// what everyone is served, and on each (re)connection of the listening connection (its own,
    /// outside the pool, which comes back by itself), when anything may have changed unheard;
    /// `.users` after a step of per-user writes alone.
    func changes() -> AsyncStream<ChangeNotice> {
        let (stream, continuation) = AsyncStream<ChangeNotice>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let address = address
        let listening = Task {
            while !Task.isCancelled {
                try? await PostgresSession.with(address) { session in
                    let notifications = try await session.connection.listen(Self.changeChannel)
                    continuation.yield(.delivery)
                    for try await notification in notifications {
                        continuation.yield(notification.payload == "users" ? .users : .delivery)
                    }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        continuation.onTermination = { _ in listening.cancel() }
        return stream
    }

    /// Runs `work` holding the lease `name` across every instance on the database: a
    /// session-level advisory lock on a connection of its own, waited for, held until `work`
    /// returns or throws, and released by the server if the connection is lost.
    func withLease<T: Sendable>(_ name: String, _ work: () async throws -> T) async throws -> T {
        let key = Int64(
            bitPattern: SHA256.hash(data: Data("flagpole lease \(name)".utf8)).prefix(8).reduce(0) {
                $0 << 8 | UInt64($1)
            })
        return try await PostgresSession.with(address) { session in
            try await session.execute("SELECT pg_advisory_lock(\(key))")
            return try await work()
        }
    }

    /// Closes every connection.
    func close() async {
        running.cancel()
        _ = await running.value
    }

    /// Runs `work` in one read transaction, a snapshot of the store.
    ///
    /// `expectingOneStatement`: `work` usually runs one statement (a user's snapshot under a kept
    /// plan), which is a snapshot by itself: it runs without `BEGIN` and `COMMIT`, one round trip
    /// instead of three. Should it run a second, it is stopped, and run again in a transaction.
    func read<T: Sendable>(
        expectingOneStatement: Bool = false, _ work: @escaping @Sendable (any SQLConnection) throws -> T
    ) async throws -> T {
        if expectingOneStatement {
            let outcome = try await onThread { connection -> Result<T, any Error>? in
                let statement = PostgresTransaction(connection, logger: self.logger, isOneStatement: true)
                let outcome = Result { try work(statement) }
                return statement.ranMoreThanOneStatement ? nil : outcome
            }
            if let outcome { return try outcome.get() }
        }
        return try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", work)
    }

    /// Runs `work` in one write transaction, holding the store's write lock: all of it is
    /// written, or none.
    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> T) async throws -> T {
        try await transaction(begin: "BEGIN ISOLATION LEVEL READ COMMITTED", lock: true, work)
    }

    private func transaction<T: Sendable>(
        begin: String, lock: Bool = false, _ work: @escaping @Sendable (any SQLConnection) throws -> T
    ) async throws -> T {
        try await onThread { connection in
            let transaction = PostgresTransaction(connection, logger: self.logger)
            try transaction.execute(begin)
            do {
                if lock { try transaction.execute("SELECT pg_advisory_xact_lock(?)", [Self.writeLock]) }
                let value = try work(transaction)
                try transaction.execute("COMMIT")
                return value
            } catch {
                // A connection that can't roll back is closed by the pool: nothing is kept.
                _ = try? transaction.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` on a pooled connection, on one of the threads that may wait for answers.
    private func onThread<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await PostgresSession.translating {
            try await withConnection { connection in try await Self.threads.runIfActive { try body(connection) } }
        }
    }

    /// How long a transaction waits for a connection: while the server is down, requests are
    /// refused (`unavailable`) rather than held until their clients give up.
    static let connectionWait: Duration = .seconds(3)

    /// Runs `body` on a pooled connection, or throws `unavailable` when none comes within
    /// `connectionWait`. A body that has started always finishes: a write is never abandoned
    /// halfway to report a timeout.
    private func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let claim = ConnectionClaim()
        let client = client
        let unavailable = StorageError.unavailable(
            reason: "no connection to \(address) within \(Self.connectionWait.components.seconds) seconds")
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await client.withConnection { connection in
                    guard claim.take(.started) else { throw unavailable }
                    return try await body(connection)
                }
            }
            group.addTask {
                try? await Task.sleep(for: Self.connectionWait)
                if claim.take(.abandoned) { throw unavailable }
                return nil
            }
            while let result = try await group.next() {
                if let value = result {
                    group.cancelAll()
                    return value
                }
            }
            throw unavailable
        }
    }
}

/// Who got to a pooled connection first: the transaction (`started`) or its deadline (`abandoned`).
private final class ConnectionClaim: Sendable {
    enum State { case waiting, started, abandoned }
    private let state = Mutex(State.waiting)

    /// Moves from `waiting` to `outcome`; false when the other side was first.
    func take(_ outcome: State) -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = outcome
            return true
        }
    }
}
