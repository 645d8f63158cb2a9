import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import FlagpoleServer
@testable import FlagpoleWebhooks

/// Webhooks over HTTP: made through the API with their addresses checked, and delivered by the
/// server's sender to a real receiver on a real port: signed, retried, never redirected, and
/// never sent inside the network without the operator's permission.
@Suite("Webhooks")
struct WebhookTests {
    static let webhooks = "/api/v1/tenants/acme/environments/production/webhooks"

    @Test("Internal addresses are told from public ones, IPv4 and IPv6, mapped and NAT64 ones by the IPv4 inside")
    func internalAddresses() {
        for address in [
            "127.0.0.1", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12::1",
            "ff02::1", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "64:ff9b::a00:1", "not an address",
        ] {
            #expect(WebhookAddresses.isInternal(address), "\(address)")
        }
        for address in [
            "93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            #expect(!WebhookAddresses.isInternal(address), "\(address)")
        }
    }

    @Test("A name resolving to 10.0.0.1, or to any internal address among public ones, is refused unless allowed")
    func namesResolvingInside() async throws {
        let url = try WebhookURL(validating: "https://hooks.example.com/flagpole")
        let inside = WebhookAddresses(allowsPrivate: false) { _ in ["10.0.0.1"] }
        await #expect(throws: WebhookError.privateAddress(host: "hooks.example.com", address: "10.0.0.1")) {
            try await inside.vet(url)
        }
        let mixed = WebhookAddresses(allowsPrivate: false) { _ in ["93.184.216.34", "127.0.0.1"] }
        await #expect(throws: WebhookError.privateAddress(host: "hooks.example.com", address: "127.0.0.1")) {
            try await mixed.vet(url)
        }
        #expect(try await WebhookAddresses(allowsPrivate: false) { _ in ["93.184.216.34"] }.vet(url) == "93.184.216.34")
        #expect(try await WebhookAddresses(allowsPrivate: true) { _ in ["10.0.0.1"] }.vet(url) == "10.0.0.1")
        await #expect(throws: WebhookError.unresolvable(host: "hooks.example.com")) {
            try await WebhookAddresses(allowsPrivate: false) { _ in [] }.vet(url)
        }
        // A DNS server that never answers holds nothing up past the timeout.
        let hanging = WebhookAddresses(allowsPrivate: false, resolveTimeout: .milliseconds(50)) { _ in
            try await Task.sleep(for: .seconds(600))
            return ["93.184.216.34"]
        }
        await #expect(throws: WebhookError.unresolvable(host: "hooks.example.com")) { try await hanging.vet(url) }
        // Through the store's one way in: nothing saved.
        let store = try await TestServer().store
        await #expect(throws: WebhookError.privateAddress(host: "hooks.example.com", address: "10.0.0.1")) {
            _ = try await store.outbound.createWebhook(
                at: url.description, format: .json, in: TestServer.acme, actor: "t", now: Date(), addresses: inside)
        }
        #expect(try await store.outbound.webhooks(in: TestServer.acme).isEmpty)
        // The system's resolver: localhost is loopback.
        #expect(try await WebhookAddresses.systemResolve("localhost").allSatisfy(WebhookAddresses.isInternal))
    }

    @Test(
        "A bias change through the API is queued as revision.created for a webhook that hears it, and the audit feed (?since=) tells it with the same fields"
    )
    func revisionsToldAndFed() async throws {
        var configuration = ServerConfiguration(accessLogLevel: .debug)
        configuration.allowsPrivateWebhooks = true
        let server = try await TestServer(configuration: configuration)
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let made = try await client.send(
                .post, Self.webhooks, key: editor,
                body: #"{"url": "http://127.0.0.1:9/hook", "events": ["revision.created"]}"#)
            #expect(made.status == .created, "\(made.text)")
            guard case .object(let webhook) = try made.json else { throw WebhookError.invalidFormat("no webhook") }
            #expect(webhook["events"] == .array([.string("revision.created")]))
            let biases = "/api/v1/tenants/acme/environments/production/features/Example%20A%2FB%20Test/biases"
            let changed = try await client.send(
                .post, biases, key: editor, body: #"{"biases": [60, 40], "message": "phase 2"}"#)
            #expect(changed.status == .ok, "\(changed.text)")
            let deliveries = try await server.store.outbound.webhooks(in: TestServer.acme).first?.deliveries ?? []
            #expect(deliveries.map(\.event) == ["revision.created"])

            let revisions = "/api/v1/tenants/acme/environments/production/revisions"
            let feed = try await client.send(.get, revisions + "?since=2000-01-01T00:00:00Z", key: editor)
            guard case .array(let events) = try feed.json, case .object(let last)? = events.last else {
                throw WebhookError.invalidFormat("no feed: \(feed.text)")
            }
            #expect(events.count == 2 && last["event"] == .string("revision.created"))
            #expect(last["message"] == .string("phase 2") && last["features"] == .array([.string(TestServer.abTest)]))
            #expect(last["actor"].map { "\($0)".contains("key:") } == true && last["movedUsers"] != nil)
            // Nothing since now; a time that is none is refused.
            let later = try await client.send(.get, revisions + "?since=2100-01-01T00:00:00Z", key: editor)
            #expect(try later.json == .array([]))
            let bad = try await client.send(.get, revisions + "?since=yesterday", key: editor)
            #expect(bad.status == .unprocessableContent && bad.errorCode == "invalid")
        }
    }

    @Test(
        "The API refuses loopback and bad webhooks with a clear error, saving nothing; an editor makes one and sees its secret once"
    )
    func overTheAPI() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            for (body, status, code) in [
                (#"{"url": "http://127.0.0.1:9/hook"}"#, HTTPResponse.Status.forbidden, "forbidden"),
                (#"{"url": "http://localhost:9/hook"}"#, .forbidden, "forbidden"),
                (#"{"url": "http://[::1]/hook"}"#, .forbidden, "forbidden"),
                (#"{"url": "ftp://example.com/"}"#, .unprocessableContent, "invalid"),
                (#"{"url": "https://example.com/", "format": "xml"}"#, .unprocessableContent, "invalid"),
                (#"{"url": "https://example.com/", "events": []}"#, .unprocessableContent, "invalid"),
            ] {
                let refused = try await client.send(.post, Self.webhooks, key: editor, body: body)
                #expect(refused.status == status && refused.errorCode == code, "\(body): \(refused.text)")
            }
            let loopback = try await client.send(
                .post, Self.webhooks, key: editor, body: #"{"url": "http://127.0.0.1:9/hook"}"#)
            #expect(loopback.text.contains("--allow-private-webhooks") && loopback.text.contains("Nothing was saved"))
            let reader = try await client.send(
                .post, Self.webhooks, key: server.key("acme", .reader), body: #"{"url": "https://example.com/"}"#)
            #expect(reader.status == .forbidden)
            #expect(try await client.send(.get, Self.webhooks, key: editor).json == .array([]))
        }
        #expect(try await server.store.outbound.webhooks(in: TestServer.acme).isEmpty)

        var configuration = server.configuration
        configuration.allowsPrivateWebhooks = true
        let allowing = try await TestServer(configuration: configuration)
        let allowingEditor = allowing.key("acme", .editor)
        try await allowing.test { client in
            let created = try await client.send(
                .post, Self.webhooks, key: allowingEditor,
                body: #"{"url": "http://127.0.0.1:9/hook/T0K3N", "format": "slack"}"#)
            #expect(created.status == .created)
            let secret = try #require(try created.json["secret"]?.string)
            #expect(secret.hasPrefix("whsec_"))
            let listed = try await client.send(.get, Self.webhooks, key: allowing.key("acme", .reader))
            #expect(try listed.json[0]?["url"] == .string("http://127.0.0.1:9/…"))
            #expect(!listed.text.contains(secret) && !listed.text.contains("T0K3N"))
            #expect(try await client.send(.delete, "\(Self.webhooks)/1", key: allowingEditor).status == .ok)
            #expect(try await client.send(.delete, "\(Self.webhooks)/1", key: allowingEditor).status == .notFound)
        }
    }

    /// What the receiver heard: each request's path, headers and body.
    final class Receiver: Sendable {
        struct Heard: Sendable {
            var path: String
            var headers: HTTPFields
            var body: [UInt8]
        }
        let heard = Mutex<[Heard]>([])
        /// How many times `/flaky` answers 503 before it answers 200.
        let flakyFailures = Mutex(1)

        func router(port: @escaping @Sendable () -> Int) -> Router<BasicRequestContext> {
            let router = Router()
            router.post("/:name") { request, context -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let path = request.uri.path
                self.heard.withLock {
                    $0.append(Heard(path: path, headers: request.headers, body: Array(body.readableBytesView)))
                }
                switch path {
                case "/redirect":
                    return Response(status: .found, headers: [.location: "http://127.0.0.1:\(port())/inside"])
                case "/flaky"
                where self.flakyFailures.withLock { failures in
                    defer { failures -= 1 }
                    return failures > 0
                }:
                    return Response(
                        status: .serviceUnavailable, body: ResponseBody(byteBuffer: ByteBuffer(string: "busy")))
                case "/ok":
                    // A long answer: the log keeps its first 1 000 bytes, and the delivery is delivered.
                    return Response(
                        status: .ok,
                        body: ResponseBody(
                            byteBuffer: ByteBuffer(string: "thanks" + String(repeating: ".", count: 2 << 20))))
                default:
                    return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "thanks")))
                }
            }
            return router
        }
    }

    @Test(
        "Deliveries reach a real receiver signed, are retried after a 503 with the same id, never follow a redirect, and never reach an internal address the sender does not allow"
    )
    func delivered() async throws {
        let receiver = Receiver()
        let port = Mutex(0)
        let application = Application(router: receiver.router { port.withLock { $0 } })
        try await application.test(.live) { client in
            port.withLock { $0 = client.port! }
            let base = "http://127.0.0.1:\(client.port!)"
            let store = try await TestServer().store
            _ = try await store.catalog.importDocument(
                Array(
                    #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]}]}"#
                        .utf8), into: TestServer.acme, options: ImportOptions(actor: "test"))
            let allowing = WebhookAddresses(allowsPrivate: true)
            var now = Date(timeIntervalSince1970: 1_800_000_000)
            var secrets: [String: String] = [:]
            for name in ["ok", "flaky", "redirect", "refused"] {
                let created = try await store.outbound.createWebhook(
                    at: "\(base)/\(name)", format: .json, events: try StoreEventKind.parse("ramp.*"),
                    in: TestServer.acme,
                    actor: "t", now: now, addresses: allowing)
                secrets[name] = created.secret
            }
            _ = try await store.rollouts.createRamp(
                RampRequest(feature: "checkout", variation: nil, steps: [10, 100], hold: .duration(seconds: 3600)),
                in: TestServer.acme, actor: "cli:ada", now: now)
            let clock = Mutex(now)
            // The "refused" webhook is made while private addresses are allowed, like the others;
            // the second pass's sender does not allow them, and checks again on delivery.
            func service(allowing: Bool) -> WebhookService {
                WebhookService(
                    store: store,
                    sender: WebhookSender(addresses: WebhookAddresses(allowsPrivate: allowing)),
                    interval: .seconds(1), clock: WallClock { clock.withLock { $0 } },
                    logger: Logger(label: "test"))
            }
            // One pass that allows private addresses for the three, one that does not for the last.
            await service(allowing: true).sendDue()
            let first = receiver.heard.withLock { $0 }
            #expect(Set(first.map(\.path)) == ["/ok", "/flaky", "/redirect", "/refused"])
            #expect(!first.contains { $0.path == "/inside" })
            for heard in first {
                let name = String(heard.path.dropFirst())
                // The signature, checked as a receiver would: HMAC-SHA-256 over "t.body".
                let signature = try #require(heard.headers[HTTPField.Name("Flagpole-Signature")!])
                let parts = Dictionary(
                    uniqueKeysWithValues: signature.split(separator: ",").map {
                        let pair = $0.split(separator: "=", maxSplits: 1)
                        return (String(pair[0]), String(pair[1]))
                    })
                #expect(parts["t"] == String(Int(now.timeIntervalSince1970)))
                let mac = HMAC<SHA256>.authenticationCode(
                    for: Array("\(parts["t"]!).".utf8) + heard.body,
                    using: SymmetricKey(data: Array(secrets[name]!.utf8)))
                #expect(parts["v1"] == mac.map { String(format: "%02x", $0) }.joined())
                #expect(heard.headers[HTTPField.Name("Flagpole-Event")!] == "ramp.step_applied")
                #expect(heard.headers[.contentType] == "application/json")
                let body = try JSONParser.parse(heard.body).value
                #expect(body["event"] == .string("ramp.step_applied") && body["share"] == .number(10))
            }
            var webhooks = try await store.outbound.webhooks(in: TestServer.acme)
            #expect(webhooks.map { $0.deliveries.first?.state } == [.delivered, .pending, .failed, .delivered])
            let answer = try #require(webhooks[0].deliveries.first?.answer)
            #expect(answer.hasPrefix("thanks..") && answer.utf8.count == 1_000)
            #expect(webhooks[0].deliveries.first?.status == 200)
            #expect(webhooks[2].deliveries.first?.error?.contains("redirects are not followed") == true)
            #expect(webhooks[2].deliveries.first?.error?.contains("/inside") == true)

            // The pause is told to all four; the sender now refuses internal addresses: nothing
            // reaches the receiver, and the log says why. The flaky one's retry is not due yet.
            now = now.addingTimeInterval(10)
            clock.withLock { $0 = now }
            _ = try await store.rollouts.pauseRamp(of: "checkout", in: TestServer.acme, actor: "cli:bob", now: now)
            await service(allowing: false).sendDue()
            #expect(receiver.heard.withLock { $0.count } == first.count)
            webhooks = try await store.outbound.webhooks(in: TestServer.acme)
            #expect(webhooks.allSatisfy { $0.deliveries.first?.state == .failed })
            #expect(webhooks[3].deliveries.first?.error?.contains("--allow-private-webhooks") == true)

            // 30 s after its 503, the flaky one's step is sent again, with the same delivery id.
            now = now.addingTimeInterval(30)
            clock.withLock { $0 = now }
            await service(allowing: true).sendDue()
            let flaky = receiver.heard.withLock { $0 }.filter { $0.path == "/flaky" }
            #expect(flaky.count == 2)
            let ids = flaky.map { $0.headers[HTTPField.Name("Flagpole-Delivery")!] }
            #expect(ids[0] != nil && ids[0] == ids[1])
            let retried = try #require(
                try await store.outbound.webhooks(in: TestServer.acme)[1].deliveries.last)
            #expect(retried.state == .delivered && retried.attempts == 2)
            #expect(!receiver.heard.withLock { $0 }.contains { $0.path == "/inside" })
        }
    }
}
