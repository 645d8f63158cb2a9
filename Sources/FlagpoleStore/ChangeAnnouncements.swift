import FlagpoleCore
import Synchronization

/// The environments a write changed (a new revision, other delivery settings), gathered while its
/// transaction runs, so the store tells this process's observers once it has committed: what a
/// server delivers follows from the write itself, and no handler can forget to refresh it.
///
/// The table home that changes an environment notes it (`EnvironmentTable.announceChange`) on the
/// transaction's connection; the store's `write` collects what was noted on its connection. A
/// note on a connection nobody collects (a group commit's) is dropped: those writes change no
/// environment's head.
final class ChangeAnnouncements: Sendable {
    static let shared = ChangeAnnouncements()

    private let open = Mutex<[ObjectIdentifier: Set<EnvironmentPath>]>([:])

    /// Runs `work` on `db`, and returns what it returned with the environments it changed.
    func collect<T>(on db: any SQLConnection, _ work: () throws -> T) throws -> (T, changed: Set<EnvironmentPath>) {
        let connection = ObjectIdentifier(db)
        open.withLock { $0[connection] = [] }
        defer { _ = open.withLock { $0.removeValue(forKey: connection) } }
        let result = try work()
        return (result, open.withLock { $0[connection] } ?? [])
    }

    /// Notes that the transaction running on `db` changes the environment at `path`.
    func note(_ path: EnvironmentPath, on db: any SQLConnection) {
        _ = open.withLock { $0[ObjectIdentifier(db)]?.insert(path) }
    }
}

/// Who is told of the environments a committed write changed, in this process.
final class ChangeObservers: Sendable {
    typealias Observer = @Sendable (EnvironmentPath, FeatureStore) async -> Void

    private let observers = Mutex<[Observer]>([])

    func add(_ observer: @escaping Observer) {
        observers.withLock { $0.append(observer) }
    }

    /// Tells every observer, one after the other, and returns once they are done.
    func tell(_ changed: Set<EnvironmentPath>, of store: FeatureStore) async {
        guard !changed.isEmpty else { return }
        let observers = observers.withLock { $0 }
        for path in changed {
            for observer in observers { await observer(path, store) }
        }
    }
}

extension FeatureStore {
    /// Calls `observer` with each environment a write of this store changes (a new revision,
    /// other delivery settings), once the write has committed and before the write returns: a
    /// server keeps what it delivers current this way, so a write is answered only once the
    /// server serves it. Writes of other processes are not seen here (see `changeNotifications`).
    public func observeChanges(_ observer: @escaping @Sendable (EnvironmentPath, FeatureStore) async -> Void) {
        changeObservers.add(observer)
    }
}
