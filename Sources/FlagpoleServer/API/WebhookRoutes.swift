import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import Foundation
import Hummingbird

/// Webhooks: `flagpole webhook`. A created webhook's signing secret is in the answer only.
extension AdminAPI {
    func registerWebhooks(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("webhooks", use: listWebhooks)
        editor.post("webhooks", use: createWebhook)
        editor.delete("webhooks/:id", use: revokeWebhook)
    }

    // MARK: Handlers

    /// The environment's webhooks, each with its latest deliveries, never a secret.
    @Sendable func listWebhooks(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        .json(.array(try await store.outbound.webhooks(in: context.path).map(\.jsonValue)))
    }

    /// `{"url": …, "format": "json"|"slack", "events": ["revision.created", "ramp.*"]}`: `events`
    /// left out is every event there is now. Answers with the signing secret, once.
    @Sendable func createWebhook(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let body = try await body(request, allowed: ["url", "format", "events"])
        let format: WebhookFormat
        let events: [StoreEventKind]?
        do {
            format = try WebhookFormat(validating: try body.string("format") ?? "json")
        } catch let error as WebhookError {
            throw APIError.invalid(error.description, pointer: "/format")
        }
        do {
            events =
                try body.has("events") ? StoreEventKind.parse(try body.strings("events").joined(separator: ",")) : nil
        } catch let error as WebhookError {
            throw APIError.invalid(error.description, pointer: "/events")
        }
        let created: CreatedWebhook
        do {
            created = try await store.outbound.createWebhook(
                at: try body.requiredString("url"), format: format, events: events, in: context.path,
                actor: context.actor, now: clock.now, addresses: webhookAddresses)
        } catch let error as WebhookError {
            if case .privateAddress = error { throw error }
            throw APIError.invalid(error.description, pointer: "/url")
        }
        return .json(created.jsonValue, status: .created)
    }

    /// Revokes a webhook: nothing more is sent to it.
    @Sendable func revokeWebhook(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let text = try context.decodedParameter("id")
        guard let id = Int64(text) else {
            throw APIError.invalid(
                "\"\(text.prefix(40))\" is not a webhook id: a number, as GET …/webhooks lists them.")
        }
        try await store.outbound.revokeWebhook(id, in: context.path, now: clock.now)
        return .json(["revoked": .number(Double(id))])
    }
}
