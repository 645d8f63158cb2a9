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

/// Notices what other processes (the command line) write to the server's database file: it
/// reads every environment's current revision and delivery settings each `interval`, one small
/// query, so requests never query for freshness and a CLI write is served within one interval.
struct DeliveryPoller: Service {
    let store: FeatureStore
    let cache: DeliveryCache
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
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

    func refresh() async {
        do {
            cache.setCurrent(try await store.deliveryStates())
        } catch {
            // Serving what is cached beats failing; the next poll tries again.
            logger.warning("Could not read the delivery state", metadata: ["error": "\(error)"])
        }
    }
}
