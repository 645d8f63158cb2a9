import FlagpoleStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Counts the fetches this server answers, per environment, revision and kind of client, in
/// memory: one lock and one dictionary entry per answer, written to the store every few seconds
/// (`FetchCountService`) rather than once a request.
final class FetchCounter: Sendable {
    private let counts = Mutex<[FetchKey: Int]>([:])

    func count(_ path: EnvironmentPath, revision: Int, _ client: FetchClient) {
        let key = FetchKey(path: path, revision: revision, client: client)
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// The counts so far, leaving none.
    func take() -> [FetchKey: Int] {
        counts.withLock { counts in
            defer { counts = [:] }
            return counts
        }
    }

    /// Puts back counts that could not be written.
    func putBack(_ taken: [FetchKey: Int]) {
        counts.withLock { counts in counts.merge(taken, uniquingKeysWith: +) }
    }
}

/// Writes the server's fetch counts to the store every `interval`, and once more at shutdown.
struct FetchCountService: Service {
    let counter: FetchCounter
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
        let taken = counter.take()
        do {
            try await store.addFetchCounts(taken, now: clock.now)
        } catch {
            // Kept for the next flush: a busy or unreachable database loses no count.
            counter.putBack(taken)
            logger.warning("Could not write fetch counts; trying again", metadata: ["error": "\(error)"])
        }
    }
}
