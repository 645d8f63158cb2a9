import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// A Bucketeer app with a wrong key keeps its flags and loses its events: each refused batch is
/// counted by environment, cause and the key's shown prefix, kept by the store, and said where a
/// team looks (`flagpole env list` is the command line's test).
@Suite("Refused event batches")
struct RefusedEventBatchTests {
    @Test("Each refused register_events batch counts by environment, cause and key prefix, never more of the key")
    func countedByKey() async throws {
        let server = try await TestServer()
        let delivery = ServerApplication.delivery(
            store: server.store, configuration: server.configuration, registry: testRegistry)
        let application = Application(
            router: ServerApplication.router(
                delivery: delivery, configuration: server.configuration, registry: testRegistry))
        let typo = "fp_1a2b3c4d" + String(repeating: "0", count: 40)
        let globex = server.key("globex", .delivery)
        let batch = try BucketeerTests.eventsBody()
        try await application.test(.router) { client in
            for (key, status) in [
                (typo, HTTPResponse.Status.unauthorized), (typo, .unauthorized), ("not a key", .unauthorized),
                (globex, .forbidden), (server.key("acme", .delivery), .ok),
            ] {
                let answer = try await client.send(
                    .post, "\(BucketeerTests.base)/register_events", headers: BucketeerTests.sdkHeaders(key),
                    body: batch)
                #expect(answer.status == status, "\(key): \(answer.text)")
            }
            let malformed = try await client.send(
                .post, "\(BucketeerTests.base)/register_events",
                headers: BucketeerTests.sdkHeaders(server.key("acme", .delivery)), body: "{")
            #expect(malformed.status == .badRequest)
            // At the host's root an unknown key names no environment.
            _ = try await client.send(
                .post, "/register_events", headers: BucketeerTests.sdkHeaders(typo), body: batch)
        }
        let acme = TestServer.acme
        #expect(
            delivery.refusedBatches.take() == [
                RefusedBatchKey(path: acme, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d"): 2,
                RefusedBatchKey(path: acme, cause: .unknownKey, keyPrefix: RefusedBatchKey.otherKey): 1,
                RefusedBatchKey(path: acme, cause: .otherEnvironment, keyPrefix: String(globex.prefix(11))): 1,
                RefusedBatchKey(
                    path: acme, cause: .malformed, keyPrefix: String(server.key("acme", .delivery).prefix(11))): 1,
            ])
    }

    @Test("Past the keys a server keeps apart, the rest count as other keys: a flood costs bounded memory")
    func boundedKeys() {
        let counts = CountsInMemory<Int>(maximumKeys: 2)
        for key in [1, 2, 3, 4, 1] { counts.count(key, else: 0) }
        #expect(counts.take() == [1: 2, 2: 1, 0: 2])
    }

    @Test("The environment's Connect an app opens its Bucketeer entry with the day's refused batches and the fix")
    func shownOnTheConnectPage() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            #expect(try await !browser.get(DashboardTests.base).text.contains("event batches refused"))
            try await server.store.outbound.addRefusedEventBatches(
                [RefusedBatchKey(path: TestServer.acme, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d"): 3], now: Date())
            let page = try await browser.get(DashboardTests.base).text
            #expect(page.contains("<details open>\n    <summary>Bucketeer SDK</summary>"), "\(page)")
            #expect(page.contains("3 event batches refused in the last 24 h: unknown key 3 (fp_1a2b3c4d… 3)."))
            #expect(page.contains("flagpole key create --tenant acme --role delivery --env production"))
        }
    }
}
