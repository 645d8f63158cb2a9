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

    /// What the transaction changed, by environment, in the order first noted: each is one step
    /// of the environment's change sequence when the write finishes (`finish()`).
    private(set) var changes: [EnvironmentChange] = []

    /// Steps of change sequences the transaction took before it finished: a group commit's
    /// statement that records its first assignments ahead takes theirs (`AssignmentWriter.prerecord`),
    /// so that the finish, finding nothing else changed, takes none.
    private(set) var stepsTaken: [EnvironmentChange] = []

    /// What the transaction did that the team hears of (a revision, a ramp's step, a trigger),
    /// in order: queued for the webhooks that subscribe when the write finishes.
    private(set) var events: [StoreEvent] = []

    init(_ connection: any SQLConnection) {
        self.connection = connection
    }

    /// Notes that this transaction changes what the environment of `scope` delivers to everyone
    /// (a new revision, other delivery settings): this process's observers are told once it
    /// commits, and every server by the environment's change sequence.
    func announceChange(of scope: EnvironmentScope) {
        change(of: scope) { change in
            change.isDelivery = true
            change.users = nil
        }
    }

    /// Notes that this transaction changes what is on record for `user` in the environment of
    /// `scope` (an override, an unlock, a forget, kept attributes, a first assignment, a pin).
    func noteUserChange(_ user: UserID, in scope: EnvironmentScope) {
        change(of: scope) { $0.add(user) }
    }

    /// Notes that this transaction may change what is on record for any user of the environment
    /// of `scope` (a bulk assignment, a forget that reaches every environment).
    func noteEveryUserChanged(in scope: EnvironmentScope) {
        change(of: scope) { $0.users = nil }
    }

    private func change(of scope: EnvironmentScope, _ update: (inout EnvironmentChange) -> Void) {
        if let index = changes.firstIndex(where: { $0.scope.id == scope.id }) {
            update(&changes[index])
        } else {
            var change = EnvironmentChange(scope: scope)
            update(&change)
            changes.append(change)
        }
    }

    /// Notes that the transaction took `step` of its environment's change sequence already.
    func noteStepTaken(_ step: EnvironmentChange) {
        stepsTaken.append(step)
    }

    /// Records `event`, to be queued for the environment's webhooks that hear it.
    func record(_ event: StoreEvent) {
        events.append(event)
    }

    /// The last event recorded of `kind` in the environment at `path`, to complete (a revision's
    /// plan totals are known only once its users have moved).
    func updateLastEvent(_ kind: StoreEventKind, in path: EnvironmentPath, _ update: (inout StoreEvent) -> Void) {
        guard let index = events.lastIndex(where: { $0.kind == kind && $0.path == path }) else { return }
        update(&events[index])
    }

    /// The environments whose delivery this transaction changed, for this process's observers.
    var changedEnvironments: [EnvironmentPath] {
        changes.filter(\.isDelivery).map(\.scope.path)
    }
}

/// What one transaction changed in one environment.
struct EnvironmentChange {
    /// More users than this in one change are written as "any user" (see `add(_:)`):
    /// a group commit of apps' first fetches names a few dozen; a list much longer costs every
    /// server more to read than reading the environment again.
    static let userLimit = 100

    let scope: EnvironmentScope
    /// Whether what everyone is served changed (a revision, delivery settings).
    var isDelivery = false
    /// The users whose records changed; `nil`: any of them may have.
    var users: Set<UserID>? = []

    /// Adds `user` to those the change names; past `userLimit`, it names any user: a server
    /// drops the whole environment rather than read a long list.
    mutating func add(_ user: UserID) {
        guard users != nil else { return }
        users!.insert(user)
        if users!.count > Self.userLimit { users = nil }
    }

    /// Whether a step naming this change tells everything one naming `other` would: the same
    /// environment, a delivery change if `other` is one, and every user `other` names.
    func covers(_ other: EnvironmentChange) -> Bool {
        guard scope.id == other.scope.id, isDelivery || !other.isDelivery else { return false }
        guard let users else { return true }
        guard let otherUsers = other.users else { return false }
        return otherUsers.isSubset(of: users)
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

    func run(_ insert: ChainedInsert) throws -> Bool { try connection.run(insert) }
}
