import FlagpoleStore
import FlagpoleWebhooks
import Logging
import ServiceLifecycle

/// Sends the webhook deliveries that are due, every `interval` (`WebhookSender.sendDue`). It runs
/// apart from the tick: no delivery, however slow, holds a step up.
struct WebhookService: Service {
    let store: FeatureStore
    let sender: WebhookSender
    let interval: Duration
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await sendDue()
                try? await Task.sleep(for: interval)
            }
        }
    }

    func sendDue() async {
        let clock = clock
        do {
            for sent in try await sender.sendDue(from: store, now: { clock.now }) {
                log(sent)
            }
        } catch {
            logger.error("Could not read the webhook deliveries due", metadata: ["error": "\(error)"])
        }
    }

    /// A failed attempt, or one that could not be recorded, as a log line.
    private func log(_ sent: WebhookSender.Sent) {
        let delivery = sent.delivery
        if let error = sent.recordingError {
            // Its claim runs out and it is sent again: delivery is at least once.
            logger.error(
                "Could not record a webhook delivery", metadata: ["delivery": "\(delivery.id)", "error": "\(error)"])
        }
        if let error = sent.attempt.error {
            logger.warning(
                "Webhook delivery failed",
                metadata: [
                    "delivery": "\(delivery.id)", "event": "\(delivery.event)", "host": "\(delivery.url.host)",
                    "attempt": "\(delivery.attempts + 1)", "error": "\(error)",
                ])
        }
    }
}
