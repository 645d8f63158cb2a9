import FlagpoleCore
import Foundation

/// Something a ramp did, or a trigger, to tell an environment's webhooks: written as one pending
/// delivery per webhook in the transaction of what it tells, so a step and its news commit
/// together, and sent after (`FeatureStore.claimDueDeliveries`), never holding the step up.
struct RampAnnouncement {
    /// What a webhook hears of, as `Flagpole-Event` and the body's `event` name it.
    enum Event: String {
        case stepApplied = "ramp.step_applied"
        case paused = "ramp.paused"
        case rolledBack = "ramp.rolled_back"
        case aborted = "ramp.aborted"
        case finished = "ramp.finished"
        case triggerFired = "trigger.fired"
    }

    let event: Event
    let path: EnvironmentPath
    let feature: String
    let rampID: Int64?
    /// What happened, in one sentence.
    let text: String
    /// The event's own fields (the step, the revision, who, why).
    var details: JSONObject = [:]

    /// The body a webhook of `format` receives.
    func body(_ format: WebhookFormat, at time: Date) -> String {
        switch format {
        case .slack:
            return JSONValue.object(["text": .string("Flagpole · \(path): \(text)")]).storedText
        case .json:
            var body: JSONObject = [
                "event": .string(event.rawValue), "at": .string(time.iso8601), "tenant": .string(path.tenant.rawValue),
                "environment": .string(path.environment.rawValue), "feature": .string(feature),
                "ramp": rampID.map { .number(Double($0)) } ?? .null, "text": .string(text),
            ]
            for member in details.members { body.append(member.key, member.value) }
            return JSONValue.object(body).storedText
        }
    }
}

extension RampAnnouncement {
    /// Of what `ramp` did: `text` follows "ramp ID of FEATURE".
    init(_ event: Event, of ramp: RampRow, _ text: String, details: JSONObject = [:]) {
        self.init(
            event: event, path: ramp.path, feature: ramp.feature, rampID: ramp.id,
            text: "ramp \(ramp.id) of \(ramp.feature)\(text)", details: details)
    }
}

extension FeatureStore {
    /// The waits after a failed attempt that another attempt could mend (no answer, a 5xx, a 429),
    /// one per attempt: after the last, the delivery is given up.
    static let webhookRetryDelays: [TimeInterval] = [30, 120, 600, 3_600, 21_600]
    /// How long a sender's claim on a delivery lasts: past it, another sender may try it.
    static let webhookClaim: TimeInterval = 60

    /// Makes a webhook for the environment's ramp events, with a new signing secret. The caller
    /// has checked the address may be called (`WebhookAddresses`).
    ///
    /// - throws: `TenancyError`.
    public func createWebhook(
        _ url: WebhookURL, format: WebhookFormat, in path: EnvironmentPath, actor: String, now: Date
    ) async throws -> CreatedWebhook {
        let secret = WebhookSecret.generate().value
        return try await write { db in
            let scope = try db.environments.scope(of: path)
            let id = try db.webhooks.insert(
                scope: scope, url: url, secret: secret, format: format, createdBy: actor, now: now)
            return CreatedWebhook(
                webhook: Webhook(
                    id: id, path: path, url: url, format: format, createdBy: actor, createdAt: now, revokedAt: nil,
                    deliveries: []),
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
                    createdBy: row.createdBy, createdAt: row.createdAt, revokedAt: row.revokedAt,
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

    /// Queues `announcement` for every webhook of its environment not revoked, in the caller's
    /// transaction.
    static func announce(_ db: Transaction, _ announcement: RampAnnouncement, now: Date) throws {
        let scope = try db.environments.scope(of: announcement.path)
        for webhook in try db.webhooks.webhooks(in: scope, activeOnly: true) {
            try db.webhooks.insertDelivery(
                id: UUID().uuidString.lowercased(), webhookID: webhook.id, event: announcement.event.rawValue,
                body: announcement.body(webhook.format, at: now), now: now)
        }
    }
}
