import FlagpoleCore

/// One transaction the store opened (a read, a write, or a group commit's), as the table homes
/// and the domain code see it: the backend's connection, what the transaction remembers between
/// its statements, and what it changed, which the store tells once it has committed.
///
/// The store makes one around each transaction it runs, however it opened it (`FeatureStore.read`,
/// `write`, the group commit, the event-loop read, backup and restore). `SQLConnection` stays the
/// seam between the backends: a `Transaction` speaks SQL through it, and adds what is the same on
/// both.
final class Transaction {
    /// The backend's connection, inside the transaction.
    let connection: any SQLConnection

    /// What the transaction remembers between statements, under a type each table declares
    /// (see `TransactionMemo`). Made on first use: most reads never need it.
    private(set) lazy var memo = TransactionMemo()

    /// The environments this transaction changed (a new revision, other delivery settings), in
    /// the order first noted: `FeatureStore.write` tells this process's observers once it has
    /// committed. A group commit's writes change no environment's head, and are not told.
    private(set) var changedEnvironments: [EnvironmentPath] = []

    init(_ connection: any SQLConnection) {
        self.connection = connection
    }

    /// Notes that this transaction changes the environment at `path`: this process's observers
    /// are told once it commits, and the other servers by what the backend sends with the
    /// commit (`SQLConnection.notifyChange(of:)`).
    func announceChange(of path: EnvironmentPath) throws {
        guard !changedEnvironments.contains(path) else { return }
        changedEnvironments.append(path)
        try connection.notifyChange(of: path)
    }
}

/// A transaction speaks SQL through its connection, so the statements of the table homes run
/// on it unchanged.
extension Transaction: SQLConnection {
    func rows(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> [SQLRow] {
        try connection.rows(sql, arguments, cached: cached)
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> Int {
        try connection.execute(sql, arguments, cached: cached)
    }

    func inSavepoint<T>(_ work: () throws -> T) throws -> T {
        try connection.inSavepoint(work)
    }

    func statement(_ sql: String, cached: Bool) throws -> any SQLStatement {
        try connection.statement(sql, cached: cached)
    }

    func text(of sql: DialectSQL) -> String { connection.text(of: sql) }

    func indexedBy(_ index: String) -> String { connection.indexedBy(index) }

    var statementsAreRoundTrips: Bool { connection.statementsAreRoundTrips }

    func notifyChange(of path: EnvironmentPath) throws { try connection.notifyChange(of: path) }

    func run(_ insert: ChainedInsert) throws -> Bool { try connection.run(insert) }
}
