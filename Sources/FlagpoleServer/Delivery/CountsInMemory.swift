import FlagpoleStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// What this server counts in memory, by key: one lock and one dictionary entry per answer,
/// written to the store every few seconds (`CountsService`) rather than once a request.
final class CountsInMemory<Key: Hashable & Sendable>: Sendable {
    private let counts = Mutex<[Key: Int]>([:])
    /// How many keys are kept between two writes; past it, `count(_:else:)` counts its other key.
    private let maximumKeys: Int

    init(maximumKeys: Int = .max) {
        self.maximumKeys = maximumKeys
    }

    func count(_ key: Key) {
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// Counts `key`, or `overflow` when `key` would be one too many: a flood of distinct keys
    /// (as a client inventing keys sends) costs a bounded memory and a bounded write.
    func count(_ key: Key, else overflow: Key) {
        counts.withLock { counts in
            let kept = counts[key] != nil || counts.count < maximumKeys
            counts[kept ? key : overflow, default: 0] += 1
        }
    }

    /// The counts so far, leaving none.
    func take() -> [Key: Int] {
        counts.withLock { counts in
            defer { counts = [:] }
            return counts
        }
    }

    /// Puts back counts that could not be written.
    func putBack(_ taken: [Key: Int]) {
        counts.withLock { counts in counts.merge(taken, uniquingKeysWith: +) }
    }
}

extension CountsInMemory where Key == FetchKey {
    func count(_ path: EnvironmentPath, revision: Int, _ client: FetchClient) {
        count(FetchKey(path: path, revision: revision, client: client))
    }
}

/// Writes the server's counts to the store every `interval`, and once more at shutdown: the
/// fetches it answered and the event batches it refused whole.
struct CountsService: Service {
    let fetches: CountsInMemory<FetchKey>
    let refusedBatches: CountsInMemory<RefusedBatchKey>
    let store: FeatureStore
    let interval: Duration
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: interval)) != nil {
                await flush()
            }
        }
        // The last counts, written even when the server's tasks are being cancelled: a
        // cancelled transaction would lose them.
        await Task.detached { await flush() }.value
    }

    func flush() async {
        await flush(fetches, "fetch counts") { try await store.outbound.addFetchCounts($0, now: $1) }
        await flush(refusedBatches, "refused event batches") {
            try await store.outbound.addRefusedEventBatches($0, now: $1)
        }
    }

    private func flush<Key>(
        _ counter: CountsInMemory<Key>, _ what: String, into write: ([Key: Int], Date) async throws -> Void
    ) async {
        let taken = counter.take()
        guard !taken.isEmpty else { return }
        do {
            try await write(taken, clock.now)
        } catch {
            // Kept for the next flush: a busy or unreachable database loses no count.
            counter.putBack(taken)
            logger.warning("Could not write \(what); trying again", metadata: ["error": "\(error)"])
        }
    }
}
