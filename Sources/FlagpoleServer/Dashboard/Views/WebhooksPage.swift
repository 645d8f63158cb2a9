import FlagpoleCore
import FlagpoleStore
import Foundation

/// What `webhooks.mustache` shows: an environment's webhooks (Settings › Environments ›
/// Webhooks), their latest deliveries, and the forms that add and revoke them.
struct WebhooksPage: Sendable {
    /// One of the environment's webhooks, and its latest deliveries.
    struct WebhookRow: Sendable {
        var id: Int64
        var url: String
        var format: String
        var events: String
        var isActive: Bool
        var state: String
        var deliveries: [String]
        var hasDeliveries: Bool
    }

    /// A webhook just added: its signing secret, shown this once.
    struct CreatedWebhookView: Sendable {
        var id: Int64
        var url: String
        var secret: String
    }

    /// An event the add form offers, checked when the webhook will hear it.
    struct EventChoice: Sendable {
        var name: String
        var about: String
        var isChecked: Bool
    }

    var chrome: Chrome
    var tenant: String
    var environment: String
    var settingsURL: String
    var webhooksURL: String
    var canEdit: Bool
    var csrf: String
    var webhooks: [WebhookRow]
    var hasWebhooks: Bool
    var formats = WebhookFormat.allCases.map {
        Choice(name: WebhooksPage.describe($0), value: $0.rawValue, isSelected: false)
    }
    var events = StoreEventKind.allCases.map {
        EventChoice(name: $0.rawValue, about: WebhooksPage.describe($0), isChecked: true)
    }
    /// The URL in the add form: empty, or one just refused, with why.
    var draft = ""
    var error: String?
    var created: CreatedWebhookView?
    var revoking: WebhookRow?

    init(chrome: Chrome, path: EnvironmentPath, webhooks: [Webhook], canEdit: Bool, csrf: String) {
        self.chrome = chrome
        tenant = path.tenant.rawValue
        environment = path.environment.rawValue
        settingsURL = TenantURLs(path.tenant).settings
        webhooksURL = TenantURLs(path.tenant).webhooks(of: path.environment)
        self.canEdit = canEdit
        self.csrf = csrf
        self.webhooks = webhooks.map { webhook in
            WebhookRow(
                id: webhook.id, url: webhook.url.shown, format: webhook.format.rawValue,
                events: webhook.events.map(\.rawValue).joined(separator: ", "), isActive: webhook.revokedAt == nil,
                state: webhook.revokedAt.map { "revoked \($0.iso8601)" } ?? "active",
                deliveries: webhook.deliveries.map { "\($0.createdAt.iso8601) \($0.event): \($0.summary)" },
                hasDeliveries: !webhook.deliveries.isEmpty)
        }
        hasWebhooks = !webhooks.isEmpty
    }

    /// Keeps what was typed in the add form, with why it was refused.
    mutating func keepRefused(url: String, format: String, events chosen: [String], because reason: String) {
        error = reason
        draft = url
        formats = formats.map { Choice(name: $0.name, value: $0.value, isSelected: $0.value == format) }
        events = events.map { EventChoice(name: $0.name, about: $0.about, isChecked: chosen.contains($0.name)) }
    }

    static func describe(_ format: WebhookFormat) -> String {
        switch format {
        case .json: "Flagpole's JSON"
        case .slack: "Slack's {\"text\": …} (Mattermost, Discord's /slack too)"
        }
    }

    static func describe(_ kind: StoreEventKind) -> String {
        switch kind {
        case .revisionCreated: "every revision, whoever made it: who, what changed, the users it moved"
        case .rampStepApplied: "a ramp's step applied"
        case .rampPaused: "a ramp paused, by a person or a failing guard"
        case .rampRolledBack: "a ramp rolled back"
        case .rampAborted: "a ramp aborted"
        case .rampFinished: "a ramp's last step applied"
        case .triggerFired: "a trigger that acted"
        }
    }
}
