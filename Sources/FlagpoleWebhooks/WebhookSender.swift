import AsyncHTTPClient
import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import NIOCore
import NIOHTTP1

/// Sends one delivery: a `POST` of its body, signed, to the address `WebhookAddresses` vets on
/// this very attempt, with redirects never followed (a redirect could point inside).
///
/// Headers: `Flagpole-Delivery` (the id to de-duplicate by, the same on every attempt),
/// `Flagpole-Event`, and `Flagpole-Signature: t=UNIX,v1=HEX`, HEX being HMAC-SHA-256 with the
/// webhook's secret over `t`, a dot and the body: a receiver checks it, and that `t` is recent.
public struct WebhookSender: Sendable {
    public var addresses: WebhookAddresses
    /// The server's address as people reach it (`--public-url`): events link under it.
    public var publicURL: String?
    /// How long an attempt may take, connection included.
    public var timeout: TimeAmount = .seconds(10)

    public init(addresses: WebhookAddresses, publicURL: String? = nil) {
        self.addresses = addresses
        self.publicURL = publicURL
    }

    /// One attempt at a delivery, and whether it could be recorded.
    public struct Sent: Sendable {
        public var delivery: DueDelivery
        public var attempt: DeliveryAttempt
        /// Why the attempt could not be recorded: the delivery's claim runs out and it is sent
        /// again (delivery is at least once).
        public var recordingError: (any Error)?
    }

    /// Claims up to `limit` deliveries due now and attempts each, each webhook's in the order
    /// they were written, several webhooks at once, recording every attempt: what `serve` does
    /// every tick interval, and `flagpole tick` once. Claims are taken in the database, so
    /// several senders never send one delivery at once.
    public func sendDue(
        from store: FeatureStore, limit: Int = 50, now: @escaping @Sendable () -> Date
    ) async throws -> [Sent] {
        let due = try await store.outbound.claimDueDeliveries(now: now(), limit: limit)
        return await withTaskGroup(of: [Sent].self) { group in
            for deliveries in Dictionary(grouping: due, by: \.webhookID).values {
                group.addTask {
                    var sent: [Sent] = []
                    for delivery in deliveries {
                        let attempt = await attempt(delivery, now: now())
                        var recordingError: (any Error)?
                        do {
                            try await store.outbound.recordDeliveryAttempt(delivery, attempt, now: now())
                        } catch {
                            recordingError = error
                        }
                        sent.append(Sent(delivery: delivery, attempt: attempt, recordingError: recordingError))
                    }
                    return sent
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// The most bytes of an answer kept in the delivery log.
    static let answerBytes = 1_000

    /// One attempt at `delivery` at `now`: what it gave, never a thrown error.
    public func attempt(_ delivery: DueDelivery, now: Date) async -> DeliveryAttempt {
        let url = delivery.url
        let address: String
        do {
            address = try await addresses.vet(url)
        } catch let error as WebhookError {
            // The address is refused or unknown: nothing was sent. DNS may mend, a policy won't.
            if case .unresolvable = error { return DeliveryAttempt(error: error.description, isWorthRetrying: true) }
            return DeliveryAttempt(error: error.description, isWorthRetrying: false)
        } catch {
            return DeliveryAttempt(error: "\(error)", isWorthRetrying: true)
        }
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout.connect = timeout
        // Connect to the address vetted, whatever the name resolves to by now; TLS still checks
        // the certificate against the name.
        if address != url.host { configuration.dnsOverride = [url.host: address] }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let attempt = await post(delivery, now: now, with: client)
        try? await client.shutdown()
        return attempt
    }

    private func post(_ delivery: DueDelivery, now: Date, with client: HTTPClient) async -> DeliveryAttempt {
        let url = delivery.url
        let body = delivery.body(linkingFrom: publicURL)
        var request = HTTPClientRequest(url: url.description)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Flagpole-Webhooks")
        request.headers.add(name: "Flagpole-Delivery", value: delivery.id)
        request.headers.add(name: "Flagpole-Event", value: delivery.event)
        request.headers.add(
            name: "Flagpole-Signature", value: Self.signature(of: body, secret: delivery.secret, at: now))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: timeout)
            // The answer's first bytes, for the log; the rest is not read, however long.
            var kept: [UInt8] = []
            for try await chunk in response.body {
                kept += chunk.readableBytesView.prefix(Self.answerBytes - kept.count)
                if kept.count == Self.answerBytes { break }
            }
            let answer = String(decoding: kept, as: UTF8.self)
            let status = Int(response.status.code)
            if (300..<400).contains(status) {
                return DeliveryAttempt(
                    status: status, answer: answer,
                    error:
                        "answered \(status) to \(response.headers.first(name: "Location") ?? "nowhere"): redirects are not followed, give the webhook its final URL",
                    isWorthRetrying: false)
            }
            let mendable = status >= 500 || status == 408 || status == 429
            return DeliveryAttempt(
                status: status, answer: answer,
                error: (200..<300).contains(status) ? nil : "answered \(status)", isWorthRetrying: mendable)
        } catch {
            return DeliveryAttempt(error: "no answer: \(error)", isWorthRetrying: true)
        }
    }

    /// `t=UNIX,v1=HEX`: HMAC-SHA-256 with `secret` over `UNIX.body`.
    public static func signature(of body: [UInt8], secret: String, at time: Date) -> String {
        let seconds = String(Int(time.timeIntervalSince1970))
        var mac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        mac.update(data: Array((seconds + ".").utf8))
        mac.update(data: body)
        return "t=\(seconds),v1=\(Hex.encode(mac.finalize()))"
    }
}
