import FlagpoleCore
import FlagpoleStore
import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer

/// The whole application on a real port: delivery answered by `DeliveryFastPath` must be the
/// router's answer, byte for byte and header for header.
@Suite("Delivery on the event loop (DeliveryFastPath)")
struct DeliveryFastPathTests {
    static let url = "/t/acme/production/features.json"

    @Test("Once rendered, the document is answered with the router's headers and bytes, 304 and gzip included")
    func sameAnswerAsTheRouter() async throws {
        let server = try await TestServer()
        let exported = try await server.store.catalog.revision(of: TestServer.acme).document
        let routed = try await server.test { client in
            (
                try await client.send(.get, Self.url),
                try await client.send(.get, Self.url, headers: [.acceptEncoding: "gzip"])
            )
        }
        try await server.live { client in
            _ = try await client.send(.get, Self.url)  // rendered by the router, then cached
            let hitsBefore =
                try await client.send(.get, "/metrics").text.firstMatch(
                    of: /flagpole_delivery_cache_hits_total ([0-9]+)/
                ).map { Int($0.1)! } ?? 0
            let fast = try await client.send(.get, Self.url)
            #expect(fast.status == .ok)
            #expect(fast.bytes == exported)
            for name in [HTTPField.Name.eTag, .cacheControl, .vary, .contentType, .revision] {
                #expect(fast.headers[name] == routed.0.headers[name], "\(name)")
            }
            #expect(fast.headers[.date] != nil)
            #expect(fast.headers[.contentLength] == String(exported.count))
            let gzip = try await client.send(.get, Self.url, headers: [.acceptEncoding: "gzip"])
            #expect(gzip.headers[.contentEncoding] == "gzip")
            #expect(gzip.bytes == routed.1.bytes)
            let notModified = try await client.send(.get, Self.url, headers: [.ifNoneMatch: fast.headers[.eTag]!])
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)
            let hitsAfter =
                try await client.send(.get, "/metrics").text.firstMatch(
                    of: /flagpole_delivery_cache_hits_total ([0-9]+)/
                ).map { Int($0.1)! } ?? 0
            #expect(hitsAfter - hitsBefore >= 3, "the fast path counts its answers")
        }
    }

    @Test("Private environments, query strings and writes still go through the router")
    func routerStillDecides() async throws {
        let server = try await TestServer()
        try await server.live { client in
            _ = try await client.send(.get, Self.url)
            let patched = try await client.send(
                .patch, "/api/v1/tenants/acme/environments/production", key: server.key("acme", .admin),
                body: #"{"private": true}"#)
            #expect(patched.status == .ok)
            #expect(
                try await client.send(.get, Self.url).status == .unauthorized,
                "a private document is never answered from memory")
            #expect(try await client.send(.get, Self.url, key: server.key("acme", .delivery)).status == .ok)
            let pinned = try await client.send(.get, Self.url + "?user=u1", key: server.key("acme", .delivery))
            #expect(pinned.headers[.cacheControl] == "private, no-store")
        }
    }

    @Test("Pipelined requests are answered in order, even when the first one needs the router")
    func pipelinedRequestsKeepTheirOrder() async throws {
        let server = try await TestServer()
        try await server.live { client in
            _ = try await client.send(.get, Self.url)  // cached, so the second request could be answered at once
            let port = try #require(client.port)
            let raw = try await Task.detached {
                try RawHTTP.exchange(
                    port: port,
                    requests: [
                        "GET \(Self.url)?user=pipelined HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        "GET \(Self.url) HTTP/1.1\r\nHost: localhost\r\n\r\n",
                    ], until: { $0.components(separatedBy: "HTTP/1.1 200").count - 1 >= 2 && $0.hasSuffix("}\n") })
            }.value
            let privateAt = try #require(raw.range(of: "private, no-store"))
            let publicAt = try #require(raw.range(of: "public, max-age=30"))
            #expect(privateAt.lowerBound < publicAt.lowerBound, "the pinned answer comes first, as it was asked first")
        }
    }
}

extension DeliveryFastPathTests {
    /// How many users' documents the event loop answered, by `/metrics`.
    func userDocumentsOnEventLoop(_ client: any TestClientProtocol) async throws -> Int {
        try await client.send(.get, "/metrics").text.firstMatch(
            of: /flagpole_delivery_user_documents_on_event_loop_total ([0-9]+)/
        )
        .map { Int($0.1)! } ?? 0
    }

    @Test(
        "A user's document from the event loop is the router's, header for header; a new user's waits for the commit that records them"
    )
    func usersDocumentsOnTheEventLoop() async throws {
        let server = try await TestServer()
        let routed = try await server.test { client in try await client.send(.get, Self.url + "?user=known") }
        try await server.live { client in
            // The first fetch builds the revision's plan (through the router); the next are the fast path's.
            _ = try await client.send(.get, Self.url + "?user=planner")
            let before = try await userDocumentsOnEventLoop(client)
            let fast = try await client.send(.get, Self.url + "?user=known")
            #expect(fast.status == .ok)
            #expect(fast.bytes == routed.bytes)
            for name in [HTTPField.Name.eTag, .cacheControl, .vary, .contentType, .revision, .recorded] {
                #expect(fast.headers[name] == routed.headers[name], "\(name)")
            }
            #expect(
                try await client.send(.get, Self.url + "?user=known", headers: [.ifNoneMatch: fast.headers[.eTag]!])
                    .status == .notModified)

            let newcomer = try await client.send(.get, Self.url + "?user=newcomer")
            #expect(newcomer.headers[.recorded] == "true")
            let recorded = try await server.store.assignments.assignmentEvents(
                in: TestServer.acme, matching: .init(user: UserID(rawValue: "newcomer")))
            #expect(recorded.count == 3 && recorded.allSatisfy { $0.reason == .first }, "recorded before the answer")
            #expect(
                newcomer.bytes
                    == (try await server.store.assignments.pinnedDocument(
                        for: UserID(rawValue: "newcomer"), in: TestServer.acme
                    )
                    .bytes))
            #expect(
                try await userDocumentsOnEventLoop(client) - before == 3,
                "known, its 304, and newcomer were the event loop's")
        }
    }

    @Test(
        "Pipelined behind a new user awaiting its commit, later requests wait their turn: answers leave in request order"
    )
    func pipelinedBehindACommit() async throws {
        let server = try await TestServer()
        try await server.live { client in
            _ = try await client.send(.get, Self.url + "?user=planner")  // the revision's plan, built
            _ = try await client.send(.get, Self.url)  // the shared document, cached
            let before = try await userDocumentsOnEventLoop(client)
            let port = try #require(client.port)
            let raw = try await Task.detached {
                try RawHTTP.exchange(
                    port: port,
                    requests: [
                        "GET \(Self.url)?user=first-new HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        "GET \(Self.url) HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        "GET \(Self.url)?user=second-new HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        "GET \(Self.url)?user=planner HTTP/1.1\r\nHost: localhost\r\n\r\n",
                    ], until: { $0.components(separatedBy: "HTTP/1.1 200").count - 1 >= 4 && $0.hasSuffix("}\n") })
            }.value
            // Each pinned document names its user's points; the shared one has none. In order:
            // pinned, shared, pinned, pinned.
            let kinds = raw.components(separatedBy: "HTTP/1.1 200").dropFirst().map {
                $0.contains("private, no-store") ? "pinned" : "shared"
            }
            #expect(kinds == ["pinned", "shared", "pinned", "pinned"])
            #expect(
                try await userDocumentsOnEventLoop(client) - before == 3,
                "the three users' documents were the event loop's")
        }
        for user in ["first-new", "second-new"] {
            #expect(
                try await server.store.assignments.assignmentEvents(
                    in: TestServer.acme, matching: .init(user: UserID(rawValue: user))
                ).count == 3)
        }
    }
}

/// A TCP client that writes requests in one go (HTTP pipelining), which no HTTP client here does.
enum RawHTTP {
    struct Failed: Error { let reason: String }

    static func exchange(port: Int, requests: [String], until isComplete: (String) -> Bool) throws -> String {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failed(reason: "socket") }
        defer { close(socket) }
        // A deadline, not a measure: generous, so a loaded machine fails only a server that never answers.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failed(reason: "connect") }
        let bytes = Array(requests.joined().utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else { throw Failed(reason: "send") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !isComplete(String(decoding: received, as: UTF8.self)) {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failed(reason: "recv returned \(count) after \(received.count) bytes") }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}

extension DeliveryFastPathTests {
    @Test(
        "A recorded user's Bucketeer poll is answered on the event loop as the router answers it, whatever key it carries"
    )
    func bucketeerPollsOnTheEventLoop() async throws {
        let server = try await OFREPTests.server()
        let body = try BucketeerTests.evaluationsBody(user: "known")
        let routed = try await server.test { client in
            try await client.send(
                .post, "/t/acme/production/get_evaluations", headers: BucketeerTests.sdkHeaders("k"), body: body)
        }
        let token = try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, routed.bytes).userEvaluationsId
        try await server.live { client in
            func poll(_ body: String, key: String) async throws -> TestResponse {
                try await client.send(
                    .post, "/t/acme/production/get_evaluations", headers: BucketeerTests.sdkHeaders(key), body: body)
            }
            // The first poll builds the revision's plan (through the router); the next are the event loop's.
            _ = try await poll(body, key: "k")
            let before = try await evaluationsOnEventLoop(client)
            let fast = try await poll(body, key: "fp_not-a-key")
            #expect(fast.status == .ok)
            // The same answer but for `createdAt`, the second it was made in.
            let createdAt = /"createdAt":"[0-9]+"/
            #expect(fast.text.replacing(createdAt, with: "") == routed.text.replacing(createdAt, with: ""))
            for name in [HTTPField.Name.contentType, .cacheControl] {
                #expect(fast.headers[name] == routed.headers[name], "\(name)")
            }
            let unchanged = try await poll(try BucketeerTests.evaluationsBody(user: "known", token: token), key: "k")
            let answer = try BucketeerWire.decode(BucketeerWire.GetEvaluationsResponse.self, unchanged.bytes)
            #expect(answer.userEvaluationsId == token && answer.evaluations.evaluations.isEmpty)
            #expect(try await evaluationsOnEventLoop(client) - before == 2)
            // A new user is recorded first: the router's.
            _ = try await poll(try BucketeerTests.evaluationsBody(user: "newcomer"), key: "k")
            #expect(try await evaluationsOnEventLoop(client) - before == 2)
        }
    }

    /// How many evaluations the event loop answered, by `/metrics`.
    func evaluationsOnEventLoop(_ client: any TestClientProtocol) async throws -> Int {
        try await client.send(.get, "/metrics").text.firstMatch(
            of: /flagpole_delivery_evaluations_on_event_loop_total ([0-9]+)/
        )
        .map { Int($0.1)! } ?? 0
    }
}
