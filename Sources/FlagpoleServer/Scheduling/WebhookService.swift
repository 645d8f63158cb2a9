import FlagpoleStore
import FlagpoleWebhooks
import Logging
import ServiceLifecycle

/// Sends the webhook deliveries that are due, every `interval`: each webhook's in the order
/// they were written, several webhooks at once, each delivery claimed in the database first, so
/// several servers on one PostgreSQL database never send one delivery at the same time. It runs
/// apart from the tick: no delivery, however slow, holds a step up.
struct WebhookService: Service {
    let store: FeatureStore
    let sender: WebhookSender
    let interval: Duration
    let clock: WallClock
    let logger: Logger

    /// Deliveries claimed at a time.
    static let batch = 50

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sendDue()
                try? await Task.sleep(for: interval)
            }
        }
    }

    func sendDue() async {
        do {
            let due = try await store.claimDueDeliveries(now: clock.now, limit: Self.batch)
            await withTaskGroup(of: Void.self) { group in
                for deliveries in Dictionary(grouping: due, by: \.webhookID).values {
                    group.addTask {
                        for delivery in deliveries { await send(delivery) }
                    }
                }
            }
        } catch {
            logger.error("Could not read the webhook deliveries due", metadata: ["error": "\(error)"])
        }
    }

    private func send(_ delivery: DueDelivery) async {
        let attempt = await sender.attempt(delivery, now: clock.now)
        do {
            try await store.recordDeliveryAttempt(delivery, attempt, now: clock.now)
        } catch {
            // Its claim runs out and it is sent again: delivery is at least once.
            logger.error(
                "Could not record a webhook delivery", metadata: ["delivery": "\(delivery.id)", "error": "\(error)"])
        }
        if let error = attempt.error {
            logger.warning(
                "Webhook delivery failed",
                metadata: [
                    "delivery": "\(delivery.id)", "event": "\(delivery.event)", "host": "\(delivery.url.host)",
                    "attempt": "\(delivery.attempts + 1)", "error": "\(error)",
                ])
        }
    }
}
