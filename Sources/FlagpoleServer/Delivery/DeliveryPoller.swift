import FlagpoleStore
import Logging
import ServiceLifecycle

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
/// query, so requests never query for freshness.
///
/// On a SQLite file it reads them each `interval`, so a CLI write is served within one interval.
/// On PostgreSQL it reads them when another process's commit announces a change (`LISTEN`), and
/// every `sharedInterval` besides, in case an announcement was lost with a connection.
struct DeliveryPoller: Service {
    let store: FeatureStore
    let cache: DeliveryCache
    let interval: Duration
    let logger: Logger

    /// The safety net's interval when changes are announced.
    static let sharedInterval: Duration = .seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                let changes = store.changeNotifications()
                if let changes {
                    group.addTask {
                        for await _ in changes { await refresh() }
                    }
                }
                let interval = changes == nil ? interval : max(interval, Self.sharedInterval)
                group.addTask {
                    while !Task.isCancelled {
                        await refresh()
                        do {
                            try await Task.sleep(for: interval)
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
            cache.setCurrent(try await store.deliveryStates())
        } catch {
            // Serving what is cached beats failing; the next poll tries again.
            logger.warning("Could not read the delivery state", metadata: ["error": "\(error)"])
        }
    }
}
