import FlagpoleCore
import Foundation

/// Where an environment's events are sent (docs/WEBHOOKS.md).
public struct Webhook: Hashable, Sendable {
    public var id: Int64
    public var path: EnvironmentPath
    public var url: WebhookURL
    public var format: WebhookFormat
    /// The events it hears, in `StoreEventKind`'s order.
    public var events: [StoreEventKind]
    public var createdBy: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// Its latest deliveries, newest first.
    public var deliveries: [WebhookDelivery]
}

/// The body a webhook receives.
public enum WebhookFormat: String, Hashable, Sendable, CaseIterable {
    /// Flagpole's JSON: the event, its time and environment, its own fields, and a sentence.
    case json
    /// `{"text": …}`: what Slack's incoming webhooks (and Mattermost's, Discord's `/slack`) take.
    case slack

    /// - throws: `WebhookError.invalidFormat`.
    public init(validating text: String) throws(WebhookError) {
        guard let format = Self(rawValue: text) else { throw WebhookError.invalidFormat(text) }
        self = format
    }
}

/// A webhook's address as written: `http` or `https`, a host, at most 2 000 characters, no
/// user or password. Whether the host may be called is the sender's to check, on every delivery.
public struct WebhookURL: Hashable, Sendable, CustomStringConvertible {
    public let description: String
    /// The scheme, host and port alone, as lists show it: a webhook's path often holds its
    /// receiver's token (Slack's does), which only the person who made it needs to see.
    public let shown: String
    public let host: String
    public let port: Int
    public let isSecure: Bool

    /// - throws: `WebhookError.invalidURL`.
    public init(validating text: String) throws(WebhookError) {
        guard text.count <= 2_000 else {
            throw WebhookError.invalidURL(String(text.prefix(60)), reason: "is over 2 000 characters")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { throw WebhookError.invalidURL(text, reason: "is not an http:// or https:// URL") }
        guard let host = components.host, !host.isEmpty else {
            throw WebhookError.invalidURL(text, reason: "names no host")
        }
        guard components.user == nil, components.password == nil else {
            throw WebhookError.invalidURL(text, reason: "carries a user or password: put a token in the path instead")
        }
        guard components.fragment == nil else { throw WebhookError.invalidURL(text, reason: "has a #fragment") }
        description = text
        shown =
            "\(scheme)://\(components.percentEncodedHost ?? host)\(components.port.map { ":\($0)" } ?? "")"
            + (components.percentEncodedPath.isEmpty || components.percentEncodedPath == "/" ? "/" : "/…")
        // URLComponents keeps an IPv6 literal's brackets.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        isSecure = scheme == "https"
        port = components.port ?? (isSecure ? 443 : 80)
    }
}

/// One event sent to one webhook, and what became of it.
public struct WebhookDelivery: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        case pending, delivered, failed
    }

    /// The delivery id (`Flagpole-Delivery`), the same on every attempt: receivers de-duplicate by it.
    public var id: String
    public var event: String
    public var createdAt: Date
    public var state: State
    public var attempts: Int
    /// When the next attempt is due, while pending.
    public var nextAt: Date?
    public var attemptedAt: Date?
    /// The last answer's status and first bytes.
    public var status: Int?
    public var answer: String?
    /// What went wrong on the last attempt, in words.
    public var error: String?

    /// "delivered (200), attempt 1", "attempt 2 failed (answered 500); next at …", "failed after 6 attempts: …".
    public var summary: String {
        let attemptsText = "\(attempts) attempt\(attempts == 1 ? "" : "s")"
        switch state {
        case .delivered: return "delivered (\(status.map(String.init) ?? "2xx")) after \(attemptsText)"
        case .pending:
            guard attempts > 0 else { return "pending" }
            return "\(attemptsText), last: \(error ?? "failed"); next \(nextAt?.iso8601 ?? "soon")"
        case .failed: return "failed after \(attemptsText): \(error ?? "gave up")"
        }
    }
}

/// A webhook just made, with its signing secret: shown once.
public struct CreatedWebhook: Hashable, Sendable {
    public var webhook: Webhook
    public var secret: String
}

/// A delivery to attempt now, claimed for this sender.
public struct DueDelivery: Hashable, Sendable {
    public var id: String
    public var webhookID: Int64
    public var event: String
    /// The body kept in the outbox: Flagpole's JSON, whatever the format (`body(linkingFrom:)`).
    public var storedBody: [UInt8]
    /// Attempts made before this one.
    public var attempts: Int
    public var url: WebhookURL
    public var format: WebhookFormat
    public var secret: String

    /// The body to send, in the webhook's format, its `link` made a `url` under `publicURL` (the
    /// server's `--public-url`), or left out without one. Slack's line ends with the link.
    ///
    /// A body kept before schema 0019 was written in its format already, and is sent as kept.
    public func body(linkingFrom publicURL: String?) -> [UInt8] {
        guard case .object(let stored)? = try? JSONValue(storedText: String(decoding: storedBody, as: UTF8.self)),
            stored["event"] != nil
        else { return storedBody }
        var url: String?
        if var base = publicURL, case .string(let link)? = stored["link"] {
            while base.hasSuffix("/") { base.removeLast() }
            url = base + link
        }
        switch format {
        case .json:
            var body = JSONObject(stored.members.filter { $0.key != "link" })
            if let url { body.append("url", .string(url)) }
            return Array(JSONValue.object(body).storedText.utf8)
        case .slack:
            guard case .string(let tenant)? = stored["tenant"], case .string(let environment)? = stored["environment"],
                case .string(let text)? = stored["text"]
            else { return storedBody }
            // Slack reads `<…>` as a link or a mention (`<!channel>`): a message's own are escaped.
            let escaped = "\(tenant)/\(environment): \(text)".replacing("&", with: "&amp;")
                .replacing("<", with: "&lt;").replacing(">", with: "&gt;")
            let line = "Flagpole · \(escaped)" + (url.map { " <\($0)|what changed>" } ?? "")
            return Array(JSONValue.object(["text": .string(line)]).storedText.utf8)
        }
    }
}

/// What one attempt at a delivery gave.
public struct DeliveryAttempt: Hashable, Sendable {
    public var status: Int?
    public var answer: String?
    public var error: String?
    /// Whether another attempt could give another answer (a timeout, a 5xx); a refused address or
    /// a redirect would give the same.
    public var isWorthRetrying: Bool

    public var isDelivered: Bool { status.map { (200..<300).contains($0) } ?? false }

    public init(status: Int? = nil, answer: String? = nil, error: String? = nil, isWorthRetrying: Bool) {
        self.status = status
        self.answer = answer
        self.error = error
        self.isWorthRetrying = isWorthRetrying
    }
}
