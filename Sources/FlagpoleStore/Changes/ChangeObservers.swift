import FlagpoleCore
import Synchronization

/// Who is told of the environments a committed write changed, in this process.
final class ChangeObservers: Sendable {
    typealias Observer = @Sendable (EnvironmentPath, FeatureStore) async -> Void

    private let observers = Mutex<[Observer]>([])

    func add(_ observer: @escaping Observer) {
        observers.withLock { $0.append(observer) }
    }

    /// Tells every observer, one after the other, and returns once they are done.
    func tell(_ changed: [EnvironmentPath], of store: FeatureStore) async {
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
