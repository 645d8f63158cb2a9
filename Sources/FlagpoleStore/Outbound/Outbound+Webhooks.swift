import FlagpoleCore
import Foundation

extension Outbound {
    /// The waits after a failed attempt that another attempt could mend (no answer, a 5xx, a 429),
    /// one per attempt: after the last, the delivery is given up.
    static let webhookRetryDelays: [TimeInterval] = [30, 120, 600, 3_600, 21_600]
    /// How long a sender's claim on a delivery lasts: past it, another sender may try it.
    static let webhookClaim: TimeInterval = 60

    /// Makes a webhook for the environment's `events` (the kinds there are now, when `nil`), with
    /// a new signing secret. The caller has checked the address may be called (`WebhookAddresses`).
    ///
    /// - throws: `TenancyError`.
    public func createWebhook(
        _ url: WebhookURL, format: WebhookFormat, events: [StoreEventKind]? = nil, in path: EnvironmentPath,
        actor: String, now: Date
    ) async throws -> CreatedWebhook {
        let secret = WebhookSecret.generate().value
        // Resolved now and stored: kinds added later never change what this webhook hears.
        let events = Array(Set(events ?? StoreEventKind.allCases)).sorted()
        return try await write { db in
            let scope = try db.environments.scope(of: path)
            let id = try db.webhooks.insert(
                scope: scope, url: url, secret: secret, format: format, events: events, createdBy: actor, now: now)
            return CreatedWebhook(
                webhook: Webhook(
                    id: id, path: path, url: url, format: format, events: events, createdBy: actor, createdAt: now,
                    revokedAt: nil, deliveries: []),
                secret: secret)
        }
    }

    /// The environment's webhooks, oldest first, each with its latest `deliveries` deliveries.
    public func webhooks(in path: EnvironmentPath, deliveries: Int = 20) async throws -> [Webhook] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.webhooks.webhooks(in: scope).map { row in
                Webhook(
                    id: row.id, path: row.path, url: try WebhookURL(validating: row.url), format: row.format,
                    events: row.events, createdBy: row.createdBy, createdAt: row.createdAt, revokedAt: row.revokedAt,
                    deliveries: try db.webhooks.deliveries(of: row.id, limit: deliveries))
            }
        }
    }

    /// Revokes the environment's webhook `id`: nothing more is sent to it.
    ///
    /// - throws: `WebhookError.webhookNotFound`.
    public func revokeWebhook(_ id: Int64, in path: EnvironmentPath, now: Date) async throws {
        try await write { db in
            guard try db.webhooks.revoke(id: id, in: try db.environments.scope(of: path), now: now) else {
                throw WebhookError.webhookNotFound(path, id: id)
            }
        }
    }

    /// Claims up to `limit` deliveries due at `now` for this sender, each for `webhookClaim`: if
    /// the sender dies mid-send, another tries again then (delivery is at least once).
    public func claimDueDeliveries(now: Date, limit: Int = 50) async throws -> [DueDelivery] {
        try await write { db in
            try db.webhooks.due(at: now, limit: limit).filter { delivery, dueAt in
                try db.webhooks.claim(id: delivery.id, dueAt: dueAt, until: now.addingTimeInterval(Self.webhookClaim))
            }.map(\.delivery)
        }
    }

    /// Records what an attempt at `delivery` gave: delivered; pending again after the next wait
    /// when another attempt could do better; else failed for good.
    public func recordDeliveryAttempt(_ delivery: DueDelivery, _ attempt: DeliveryAttempt, now: Date) async throws {
        let delays = Self.webhookRetryDelays
        let retry = attempt.isWorthRetrying && delivery.attempts < delays.count
        let state: WebhookDelivery.State = attempt.isDelivered ? .delivered : retry ? .pending : .failed
        let nextAt = state == .pending ? now.addingTimeInterval(delays[delivery.attempts]) : nil
        try await write { db in
            try db.webhooks.recordAttempt(id: delivery.id, state: state, nextAt: nextAt, attempt: attempt, at: now)
        }
    }
}
