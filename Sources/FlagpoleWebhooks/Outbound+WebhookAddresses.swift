import FlagpoleCore
import FlagpoleStore
import Foundation

extension Outbound {
    /// Makes a webhook for the environment's `events` (every kind there is now, when `nil`) at
    /// `text`, once `addresses` allow its host: the one way the command line, the API and the
    /// dashboard make one.
    ///
    /// - throws: `WebhookError` (nothing saved), `TenancyError`.
    public func createWebhook(
        at text: String, format: WebhookFormat, events: [StoreEventKind]? = nil, in path: EnvironmentPath,
        actor: String, now: Date, addresses: WebhookAddresses
    ) async throws -> CreatedWebhook {
        let url = try WebhookURL(validating: text)
        _ = try await addresses.vet(url)
        return try await createWebhook(url, format: format, events: events, in: path, actor: actor, now: now)
    }
}
