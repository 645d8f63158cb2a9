import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import FlagpoleServer

/// Every kind of fetch is counted against the revision it answered, through the router and
/// through the event loop's fast path alike.
@Suite("Fetch counts")
struct FetchCountTests {
    static let base = "/t/acme/production"

    /// One fetch of each kind by user `u-1`: the shared document and configs, the pinned
    /// document, the user's configs, an OFREP bulk and single evaluation, a Bucketeer poll.
    static func fetchEverything(_ client: any TestClientProtocol) async throws {
        let json: [HTTPField.Name: String] = [.contentType: "application/json"]
        let context = #"{"context": {"targetingKey": "u-1"}}"#
        for (method, path, body) in [
            (HTTPRequest.Method.get, "features.json", nil), (.get, "configs.json", nil),
            (.get, "features.json?user=u-1", nil), (.get, "configs.json?user=u-1", nil),
            (.post, "ofrep/v1/evaluate/flags", context),
            (.post, "ofrep/v1/evaluate/flags/\(segment(TestServer.abTest))", context),
            (.post, "get_evaluations", try BucketeerTests.evaluationsBody()),
        ] as [(HTTPRequest.Method, String, String?)] {
            let response = try await client.send(method, "\(base)/\(path)", headers: json, body: body)
            #expect(response.status == .ok, "\(path): \(response.text)")
        }
    }

    static let expected: [FetchClient: Int] = [.shared: 2, .pinned: 1, .configs: 1, .ofrep: 2, .bucketeer: 1]

    @Test("Through the router, each fetch counts once, by kind, against the current revision")
    func throughTheRouter() async throws {
        let server = try await TestServer()
        let revision = try await server.store.catalog.revision(of: TestServer.acme).number
        let delivery = ServerApplication.delivery(
            store: server.store, configuration: server.configuration, registry: testRegistry)
        let application = Application(
            router: ServerApplication.router(
                delivery: delivery, configuration: server.configuration, registry: testRegistry))
        try await application.test(.router) { client in try await Self.fetchEverything(client) }
        let counts = delivery.fetches.take()
        #expect(Set(counts.keys.map(\.revision)) == [revision] && Set(counts.keys.map(\.path)) == [TestServer.acme])
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.key.client, $0.value) }) == Self.expected)
        #expect(delivery.fetches.take().isEmpty)
    }

    @Test("On the event loop's fast path, each fetch counts the same, and the server writes them to the store")
    func onTheFastPath() async throws {
        let server = try await TestServer()
        let revision = try await server.store.catalog.revision(of: TestServer.acme).number
        var configuration = ServerConfiguration(port: 0, accessLogLevel: .debug)
        configuration.countsInterval = .milliseconds(20)
        let application = ServerApplication.make(
            store: server.store, configuration: configuration, registry: testRegistry, logger: Logger(label: "test"))
        try await application.test(.live) { client in
            // The first user's groups are recorded through the router; the fetches after are the fast path's.
            try await Self.fetchEverything(client)
            try await Self.fetchEverything(client)
            var counts = FetchCounts()
            for _ in 0..<500 where counts.total < 2 * Self.expected.values.reduce(0, +) {
                try await Task.sleep(for: .milliseconds(10))
                counts = try await server.store.outbound.fetchCounts(
                    in: TestServer.acme, revisions: revision..<(revision + 1))
            }
            #expect(counts.byClient == Self.expected.mapValues { 2 * $0 })
        }
    }
}
