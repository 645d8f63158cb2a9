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

    @Test("Several servers' counts add up by hour; a day's summary reads them, and counts two days old go")
    func keptByTheStore() async throws {
        let server = try await TestServer()
        let store = server.store
        let noon = Date(timeIntervalSince1970: 1_795_003_200)
        let typo = RefusedBatchKey(path: TestServer.acme, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d")
        let none = RefusedBatchKey(path: TestServer.acme, cause: .unknownKey, keyPrefix: "")
        let gone = RefusedBatchKey(
            path: EnvironmentPath(tenant: TestServer.acme.tenant, environment: EnvironmentName(rawValue: "gone")),
            cause: .unknownKey, keyPrefix: "")
        try await store.addRefusedEventBatches([typo: 2, none: 1, gone: 5], now: noon)
        try await store.addRefusedEventBatches([typo: 7], now: noon.addingTimeInterval(60))
        let day = try await store.refusedEventBatches(
            of: TestServer.acme.tenant, since: noon.addingTimeInterval(-86_400))
        #expect(day.keys.map(\.rawValue) == ["production"])
        let production = try #require(day[.production])
        #expect(production.batches == [.unknownKey: ["fp_1a2b3c4d": 9, "": 1]])
        #expect(
            production.summary(span: "the last 24 h")
                == "10 event batches refused in the last 24 h: unknown key 10 (fp_1a2b3c4d… 9, no key 1)")
        #expect(try await store.refusedEventBatches(of: TestServer.globex.tenant, since: noon).isEmpty)

        let later = noon.addingTimeInterval(49 * 3600)
        try await store.addRefusedEventBatches([none: 1], now: later)
        let since = try await store.refusedEventBatches(of: TestServer.acme.tenant, since: .distantPast)
        #expect(since[.production]?.batches == [.unknownKey: ["": 1]], "rows two days old are dropped")
    }

    @Test("The environment's Connect an app opens its Bucketeer entry with the day's refused batches and the fix")
    func shownOnTheConnectPage() async throws {
        let server = try await TestServer()
        try await server.test { client in
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            #expect(try await !browser.get(DashboardTests.base).text.contains("event batches refused"))
            try await server.store.addRefusedEventBatches(
                [RefusedBatchKey(path: TestServer.acme, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d"): 3], now: Date())
            let page = try await browser.get(DashboardTests.base).text
            #expect(page.contains("<details open>\n    <summary>Bucketeer SDK</summary>"), "\(page)")
            #expect(page.contains("3 event batches refused in the last 24 h: unknown key 3 (fp_1a2b3c4d… 3)."))
            #expect(page.contains("flagpole key create --tenant acme --role delivery --env production"))
        }
    }
}
