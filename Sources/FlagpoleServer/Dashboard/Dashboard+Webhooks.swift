import FlagpoleCore
import FlagpoleStore
import FlagpoleWebhooks
import Foundation
import Hummingbird

/// An environment's webhooks (Settings › Environments › Webhooks), on the store operations of
/// `flagpole webhook`: anyone of the tenant reads them, an editor adds and revokes, as in the API.
extension Dashboard {
    func registerWebhooks(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        let webhooks = "tenants/:tenant/settings/environments/:env/webhooks"

        reader.get(RouterPath(webhooks), use: showWebhooks)
        editor.post(RouterPath(webhooks), use: createWebhook)
        editor.post(RouterPath(webhooks + "/revoke"), use: revokeWebhook)
    }

    // MARK: Handlers

    /// GET …/settings/environments/{env}/webhooks: the environment's webhooks and their deliveries.
    @Sendable func showWebhooks(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        .html(templates.render(try await webhooksPage(context, notice: Notice(request)?.text), as: "webhooks"))
    }

    /// POST …/webhooks: adds a webhook for the events ticked, its address checked as the API
    /// checks it, and shows its signing secret, this once.
    @Sendable func createWebhook(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(WebhookForm.self, of: request, session: context.session)
        let chosen = form.events ?? []
        var created: CreatedWebhook?
        var refusal: APIError?
        do {
            created = try await store.outbound.createWebhook(
                at: form.url, format: try WebhookFormat(validating: form.format),
                events: try StoreEventKind.parse(chosen.joined(separator: ",")), in: context.path,
                actor: context.session.identity.actor, now: clock.now, addresses: webhookAddresses)
        } catch let error as WebhookError {
            refusal = APIError(error)
        }
        var page = try await webhooksPage(context, notice: nil)
        page.created = created.map {
            WebhooksPage.CreatedWebhookView(id: $0.webhook.id, url: $0.webhook.url.shown, secret: $0.secret)
        }
        if let refusal {
            page.keepRefused(url: form.url, format: form.format, events: chosen, because: refusal.message)
        }
        return .html(templates.render(page, as: "webhooks"), status: refusal?.status ?? .created)
    }

    /// POST …/webhooks/revoke: `action=preview` asks to confirm, `apply` revokes.
    @Sendable func revokeWebhook(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(RevokeWebhookForm.self, of: request, session: context.session)
        if form.action == "apply" {
            try await store.outbound.revokeWebhook(form.id, in: context.path, now: clock.now)
            return .seeOther(
                Notice(.webhookRevoked).appended(
                    to: TenantURLs(context.path.tenant).webhooks(of: context.path.environment)))
        }
        var page = try await webhooksPage(context, notice: nil)
        guard let webhook = page.webhooks.first(where: { $0.id == form.id && $0.isActive }) else {
            throw WebhookError.webhookNotFound(context.path, id: form.id)
        }
        page.revoking = webhook
        return .html(templates.render(page, as: "webhooks"))
    }

    private func webhooksPage(
        _ context: DashboardEnvironmentContext<some RequiredRole>, notice: String?
    ) async throws -> WebhooksPage {
        WebhooksPage(
            chrome: Chrome(session: context.session, notice: notice), path: context.path,
            webhooks: try await store.outbound.webhooks(in: context.path, deliveries: 10), canEdit: context.canEdit,
            csrf: context.session.csrfToken)
    }
}

/// The form that adds a webhook: its URL, body format and the events ticked.
struct WebhookForm: DashboardForm {
    var csrf: String
    var url: String
    var format: String
    var events: [String]?
}

/// The form that revokes a webhook, by its id.
struct RevokeWebhookForm: DashboardForm {
    var csrf: String
    var id: Int64
    var action: String?
}
