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

        reader.get("webhooks") { _, context -> Response in
            .json(.array(try await store.webhooks(in: context.path).map(\.jsonValue)))
        }
        editor.post("webhooks") { request, context -> Response in
            let body = try await body(request, allowed: ["url", "format"])
            let format: WebhookFormat
            do {
                format = try WebhookFormat(validating: try body.string("format") ?? "json")
            } catch let error as WebhookError {
                throw APIError.invalid(error.description, pointer: "/format")
            }
            let created: CreatedWebhook
            do {
                created = try await store.createWebhook(
                    at: try body.requiredString("url"), format: format, in: context.path, actor: context.actor,
                    now: clock.now, addresses: webhookAddresses)
            } catch let error as WebhookError {
                if case .privateAddress = error { throw error }
                throw APIError.invalid(error.description, pointer: "/url")
            }
            return .json(created.jsonValue, status: .created)
        }
        editor.delete("webhooks/:id") { _, context -> Response in
            let text = try context.decodedParameter("id")
            guard let id = Int64(text) else {
                throw APIError.invalid(
                    "\"\(text.prefix(40))\" is not a webhook id: a number, as GET …/webhooks lists them.")
            }
            try await store.revokeWebhook(id, in: context.path, now: clock.now)
            return .json(["revoked": .number(Double(id))])
        }
    }
}
