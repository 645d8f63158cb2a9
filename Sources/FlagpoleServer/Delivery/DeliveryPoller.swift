import FlagpoleStore
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// Runs the change streams' broadcaster for the server's life.
struct ChangeBroadcasterService: Service {
    let broadcaster: ChangeBroadcaster
    let store: FeatureStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await broadcaster.run(store: store, logger: logger)
        }
    }
}

/// Notices what other processes (the command line, other servers) write to the server's
/// database: it reads every environment's current revision and delivery settings, one small
/// query, so requests never query for freshness; and every environment's change sequence, which
/// says which users any write changed (counted in `/metrics`, for what keeps users in memory).
///
/// On a SQLite file it reads them each `interval`, so a CLI write is served within one interval.
/// On PostgreSQL it reads them when another process's commit announces a change of what everyone
/// is served (`LISTEN`), within `interval` of one that announces per-user writes alone, and every
/// `sharedInterval` besides, in case an announcement was lost with a connection.
struct DeliveryPoller: Service {
    let store: FeatureStore
    let cache: DeliveryCache
    let interval: Duration
    let metrics: ServerMetrics
    let logger: Logger
    /// Each environment's change sequence number as last read.
    private let knownChanges = KnownChanges()

    private final class KnownChanges: Sendable {
        let sequences = Mutex<[EnvironmentPath: Int64]>([:])
    }

    /// Whether a per-user write was heard of since the last reading.
    private final class UsersChanged: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// The safety net's interval when changes are announced.
    static let sharedInterval: Duration = .seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                let changes = store.changeNotifications()
                if let changes {
                    // What everyone is served is read at once; per-user writes, which come by the
                    // thousand at a launch, at most once each interval.
                    let usersChanged = UsersChanged()
                    group.addTask {
                        for await notice in changes {
                            switch notice {
                            case .delivery: await refresh()
                            case .users: usersChanged.flag.store(true, ordering: .relaxed)
                            }
                        }
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            if usersChanged.flag.exchange(false, ordering: .relaxed) { await refresh() }
                            do {
                                try await Task.sleep(for: interval)
                            } catch {
                                return
                            }
                        }
                    }
                }
                let everyInterval = changes == nil ? interval : max(interval, Self.sharedInterval)
                group.addTask {
                    while !Task.isCancelled {
                        await refresh()
                        do {
                            try await Task.sleep(for: everyInterval)
                        } catch {
                            return
                        }
                    }
                }
            }
        }
    }

    func refresh() async {
        do {
            cache.setCurrent(try await store.access.deliveryStates())
            let known = knownChanges.sequences.withLock { $0 }
            let changes = try await store.changes.since(known)
            knownChanges.sequences.withLock { known in
                for change in changes { known[change.path] = change.sequence }
            }
            for change in changes {
                Gauge(
                    label: "flagpole_change_sequence", dimensions: [("environment", change.path.description)],
                    factory: metrics.factory
                ).record(change.sequence)
            }
            for change in changes where known[change.path] != nil {
                metrics.changeSteps.increment(by: max(0, Int(change.sequence - known[change.path]!)))
                if let users = change.users {
                    metrics.changedUsers.increment(by: users.count)
                } else {
                    metrics.wholeEnvironmentChanges.increment()
                }
            }
        } catch {
            // Serving what is cached beats failing; the next poll tries again.
            logger.warning("Could not read the delivery state", metadata: ["error": "\(error)"])
        }
    }
}
