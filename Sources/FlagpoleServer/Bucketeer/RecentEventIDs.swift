import Synchronization

/// The ids of the events counted only in memory (the SDK's metrics events, evaluation events of
/// its own defaults) that a server has seen lately: the SDK sends a whole batch again after any
/// failed request, and a batch it sends again must not count twice. The latest `capacity` ids
/// are kept, in the order they came; a restart forgets them (the series restart too).
final class RecentEventIDs: Sendable {
    private struct Window {
        var ids: Set<String> = []
        var order: [String] = []
        var oldest = 0
    }

    private let capacity: Int
    private let window = Mutex(Window())

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Whether `id` is new, remembering it when it is.
    func isFirstSighting(of id: String) -> Bool {
        window.withLock { window in
            guard window.ids.insert(id).inserted else { return false }
            if window.order.count < capacity {
                window.order.append(id)
            } else {
                window.ids.remove(window.order[window.oldest])
                window.order[window.oldest] = id
                window.oldest = (window.oldest + 1) % capacity
            }
            return true
        }
    }
}
