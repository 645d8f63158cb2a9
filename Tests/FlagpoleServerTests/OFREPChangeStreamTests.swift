import FlagpoleCore
import FlagpoleStore
import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import FlagpoleServer

/// OFREP's change stream read off a real port as an EventSource reads it: each write's event
/// with every field a provider or an app uses, the bulk answer it sends a client back to,
/// resuming with `Last-Event-ID`, and the heartbeat that keeps proxies from closing it.
@Suite("OFREP: the change stream on the wire")
struct OFREPChangeStreamTests {
    static let stream = "/t/demo/production/changes"

    @Test(
        "A write's event carries its revision, etag, lastModified and the documents' ETags; a missed pair resumes in order"
    )
    func eventsOfWrites() async throws {
        let demo = try await DemoServer()
        try await demo.live { client in
            let port = try #require(client.port)
            let before = try await client.send(
                .post, OFREPProtocolTests.production, body: OFREPProtocolTests.context("demo-user-7"))
            let revision = Int(try #require(try before.json["metadata"]?["revision"]?.number))
            #expect(try before.json["eventStreams"]?[0]?["endpoint"]?["requestUri"] == .string(Self.stream))

            let listener = try SSEConnection(port: port, path: Self.stream)
            // The stream announces itself first: from then on, no write can come before it.
            _ = try await listener.read { $0.body.contains("\n\n") }
            #expect(listener.status == 200 && listener.header("content-type")?.hasPrefix("text/event-stream") == true)
            let written = Date()
            try await demo.admin(
                client, .post, DemoServer.feature("New Onboarding") + "/biases", body: #"{"biases": [20, 80]}"#)
            let seen = try await listener.read { $0.events.contains { $0.revision > revision } }.events
            let first = try #require(seen.first { $0.revision > revision })
            #expect(first.type == "message" && first.revision == revision + 1, "\(first)")
            #expect(first.data["type"] == .string("refetchEvaluation"))
            let etag = try #require(first.data["etag"]?.string)
            #expect(!first.id.isEmpty && etag == first.id, "the id resumes the stream; it is the etag")
            let modified = try #require(first.data["lastModified"]?.number)
            #expect(
                modified == modified.rounded()
                    && (written.timeIntervalSince1970 - 2...Date().timeIntervalSince1970 + 2).contains(modified),
                "lastModified: whole Unix seconds of the write, got \(modified)")
            // The ETags of the revision's documents, which an app holding them compares.
            for (field, document) in [("featuresETag", "features.json"), ("configsETag", "configs.json")] {
                let current = try await client.send(.get, "/t/demo/production/\(document)").headers[.eTag]
                #expect(
                    first.data[field]?.string?.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                        == current?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
                    "\(field) against \(document)'s ETag")
            }

            // The client re-fetches with the event's metadata and its old ETag: the new revision.
            let query = "?flagConfigEtag=\(segment(etag))&flagConfigLastModified=\(Int(modified))"
            let refetch = try await client.send(
                .post, OFREPProtocolTests.production + query, headers: [.ifNoneMatch: before.headers[.eTag] ?? ""],
                body: OFREPProtocolTests.context("demo-user-7"))
            #expect(
                try refetch.status == .ok && refetch.json["metadata"]?["revision"] == .number(Double(revision + 1)))

            // After the write, each user's tests are still what their pinned document gives a device.
            for user in ["demo-user-7", "demo-user-8", "ofrep-protocol-user-3"] {
                let bulk = try await client.send(
                    .post, OFREPProtocolTests.production, body: OFREPProtocolTests.context(user)
                ).json
                let pinned = try await OFREPProtocolTests.pinned(client, user)
                for item in bulk["flags"]?.array ?? [] {
                    let name = item["key"]?.string ?? ""
                    guard DemoServer.tests.contains(name) || name == "mainViewTitle" else { continue }
                    OFREPProtocolTests.expectAnswer(
                        item, try OFREPProtocolTests.expected(name, pinned), "\(user) \(name) after the write")
                }
            }

            // Writes through the admin API of another kind, a tag and a config: an event each.
            try await demo.admin(
                client, .put, DemoServer.feature("Example Feature Flag") + "/tags", body: #"{"tags": ["streamed"]}"#)
            try await demo.admin(
                client, .put, "/configs/counter", body: #"{"type": "int", "default": 1}"#)
            let more = try await listener.read { $0.events.count >= 3 }.events
            #expect(more.map(\.revision) == [revision + 1, revision + 2, revision + 3])
            listener.close()

            // Two writes while no one listens: resuming from the first event brings both, in order.
            for biases in ["[30, 70]", "[40, 60]"] {
                try await demo.admin(
                    client, .post, DemoServer.feature("New Onboarding") + "/biases", body: #"{"biases": \#(biases)}"#)
            }
            let resumed = try SSEConnection(port: port, path: Self.stream, headers: ["Last-Event-ID: \(first.id)"])
            let missed = try await resumed.read { $0.events.count >= 4 }.events
            #expect(missed.map(\.revision) == Array((revision + 2)...(revision + 5)))
            #expect(Set(([first] + missed).map(\.id)).count == 5, "an id per revision")
            // Their documents' ETags are history by now; the rest is as for a new event.
            for event in missed {
                #expect(event.type == "message" && event.data["etag"]?.string == event.id, "\(event)")
                #expect(event.data["featuresETag"]?.string?.isEmpty == false, "\(event)")
                #expect(event.data["configsETag"]?.string?.isEmpty == false, "\(event)")
                #expect(
                    event.data["lastModified"]?.number.map { $0 >= written.timeIntervalSince1970.rounded(.down) - 2 }
                        == true, "\(event)")
            }
            resumed.close()
        }
    }

    @Test("Every stream gets a heartbeat comment each interval, so proxies keep it open")
    func heartbeat() async throws {
        #expect(ChangeBroadcaster().heartbeat == .seconds(15), "the binary's interval")
        let demo = try await DemoServer()
        // The interval is 15 s in the binary; the broadcaster takes it as a parameter.
        try await demo.live(heartbeat: .milliseconds(100)) { client in
            let listener = try SSEConnection(port: try #require(client.port), path: Self.stream)
            let text = try await listener.read { $0.body.contains(": heartbeat\n\n") }.body
            #expect(text.hasPrefix("retry: 3000\n"), "\(text)")
            listener.close()
        }
    }
}

/// A `GET` of a change stream over a socket of its own, read as it comes (the test clients
/// wait for a body's end, which a stream never has): the body de-chunked, parsed as the HTML
/// standard's EventSource parses it.
final class SSEConnection {
    struct Failed: Error { let reason: String }

    struct Event: CustomStringConvertible {
        var id = ""
        var type = "message"
        var data: JSONValue = .null
        var revision: Int { data["revision"]?.number.map { Int($0) } ?? -1 }
        var description: String { "id \(id) type \(type) data \(data)" }
    }

    /// What came so far.
    struct Received {
        let head: String
        let body: String

        var events: [Event] {
            body.components(separatedBy: "\n\n").dropLast().compactMap { block in
                var event = Event()
                var data: [String] = []
                for line in block.split(separator: "\n", omittingEmptySubsequences: false) where !line.hasPrefix(":") {
                    let field = line.prefix { $0 != ":" }
                    var value = line.dropFirst(field.count + 1)
                    if value.hasPrefix(" ") { value = value.dropFirst() }
                    switch field {
                    case "id": event.id = String(value)
                    case "event": event.type = String(value)
                    case "data": data.append(String(value))
                    default: break
                    }
                }
                guard !data.isEmpty else { return nil }
                event.data = (try? JSONParser.parse(Array(data.joined(separator: "\n").utf8)).value) ?? .null
                return event
            }
        }
    }

    private let socket: Int32
    private var raw: [UInt8] = []

    init(port: Int, path: String, headers: [String] = []) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failed(reason: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            _ = Glibc.close(socket)
            throw Failed(reason: "connect")
        }
        let request =
            (["GET \(path) HTTP/1.1", "Host: localhost", "Accept: text/event-stream"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else { throw Failed(reason: "send") }
    }

    deinit { close() }

    private var isClosed = false

    func close() {
        if !isClosed { _ = Glibc.close(socket) }
        isClosed = true
    }

    /// The response so far: its head, and its body de-chunked up to the last whole chunk.
    var received: Received {
        let text = String(decoding: raw, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return Received(head: text, body: "") }
        var rest = Substring(text[end.upperBound...])
        var body = ""
        while let line = rest.range(of: "\r\n"), let size = Int(rest[..<line.lowerBound], radix: 16) {
            let start = line.upperBound
            guard rest[start...].utf8.count >= size + 2 else { break }
            let stop = rest.utf8.index(start, offsetBy: size)
            body += rest[start..<stop]
            rest = rest[rest.utf8.index(stop, offsetBy: 2)...]
        }
        return Received(head: String(text[..<end.lowerBound]), body: body)
    }

    var status: Int? { received.head.split(separator: " ").dropFirst().first.flatMap { Int($0) } }

    func header(_ name: String) -> String? {
        for line in received.head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Reads until `condition` holds of what came; polls the socket without blocking, so the
    /// server's tasks keep the threads; fails after `seconds`.
    func read(within seconds: Int = 10, until condition: (Received) -> Bool) async throws -> Received {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !condition(received) {
            guard ContinuousClock.now < deadline else {
                throw Failed(reason: "nothing more within \(seconds) s; so far: \(received.head)\n\(received.body)")
            }
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                raw += buffer[0..<count]
            } else if count == 0 {
                throw Failed(reason: "the server closed the stream: \(received.body)")
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                try await Task.sleep(for: .milliseconds(5))
            } else {
                throw Failed(reason: "recv: errno \(errno)")
            }
        }
        return received
    }
}
