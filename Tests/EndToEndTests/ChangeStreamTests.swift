import EndToEndSupport
import Foundation
import Testing

/// The change stream of a real server, read by curl as an EventSource reads it.
@Suite("The change stream, end to end")
struct ChangeStreamTests {
    /// One parsed Server-Sent Event.
    struct Event {
        let id: String
        let data: [String: Any]
        var revision: Int { data["revision"] as! Int }
    }

    static func events(in bytes: [UInt8]) -> [Event] {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n\n").compactMap { block in
            var id: String?
            var data: String?
            for line in block.split(separator: "\n") {
                if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
            }
            guard let id, let data,
                let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
            else { return nil }
            return Event(id: id, data: object)
        }
    }

    /// Reads the stream into a file until `condition` holds of its events or 15 s pass.
    static func watch(
        _ url: String, headers: [String] = [], in cli: CLI, until condition: ([Event]) -> Bool,
        while work: () async throws -> Void
    ) async throws -> [Event] {
        let file = cli.directory.appendingPathComponent("stream-\(UUID().uuidString)")
        let curl = try Curl.start(["--no-buffer", "--max-time", "30"] + headers + [url], bodyFile: file)
        defer { curl.kill() }
        // The stream announces itself before anything else: wait for it, so no write comes first.
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, (try? Data(contentsOf: file))?.isEmpty ?? true {
            try await Task.sleep(for: .milliseconds(2))
        }
        try await work()
        var events: [Event] = []
        while Date() < deadline {
            events = Self.events(in: Array((try? Data(contentsOf: file)) ?? Data()))
            if condition(events) { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        return events
    }

    @Test("100 writes through the API and one by the CLI: an event each, in order, none lost; a reconnect resumes")
    func hundredWrites() async throws {
        let cli = try CLI()
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", "acme", "--role", "editor"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServerProcess(cli)
        defer { _ = server.stop() }
        let stream = "\(server.baseURL)/t/acme/production/changes"

        var cliWrite: Date?
        var seenCLIWrite: Date?
        let events = try await Self.watch(
            stream, in: cli, until: { $0.count >= 101 },
            while: {
                for index in 1...100 {
                    let response = try Curl.run([
                        "-X", "PUT", "-H", "Authorization: Bearer \(key)", "--data",
                        #"{"type": "int", "default": \#(index)}"#,
                        "\(server.baseURL)/api/v1/tenants/acme/environments/production/configs/counter",
                    ])
                    try #require(response.status == 200)
                }
                cliWrite = Date()
                try #require(await cli.run(["config", "delete", "counter", "--tenant", "acme"]).status == 0)
            })
        seenCLIWrite = Date()
        #expect(events.map(\.revision) == Array(2...102), "one event per revision, in order")
        #expect(
            events.allSatisfy {
                $0.data["type"] as? String == "refetchEvaluation" && $0.data["etag"] as? String == $0.id
            })
        #expect(events.allSatisfy { ($0.data["featuresETag"] as? String)?.hasPrefix("\"") == true })
        if let cliWrite, let seenCLIWrite {
            #expect(
                seenCLIWrite.timeIntervalSince(cliWrite) < 2, "the CLI's write reached the stream within a poll or two")
        }

        // A client that saw revision 50 reconnects with its id: revisions 51 to 102 follow, in order.
        let resumed = try await Self.watch(
            stream, headers: ["-H", "Last-Event-ID: \(events[48].id)"], in: cli, until: { $0.count >= 52 }, while: {})
        #expect(resumed.map(\.revision) == Array(51...102))
    }

    @Test("A private environment's stream takes a key or the token a bulk evaluation advertises, nothing else")
    func privateStream() async throws {
        let cli = try CLI()
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", "acme", "--role", "delivery"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let admin = await cli.run(["key", "create", "--tenant", "acme", "--role", "admin"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServerProcess(cli)
        defer { _ = server.stop() }
        let madePrivate = try Curl.run([
            "-X", "PATCH", "-H", "Authorization: Bearer \(admin)", "--data", #"{"private": true}"#,
            "\(server.baseURL)/api/v1/tenants/acme/environments/production",
        ])
        try #require(madePrivate.status == 200)
        let stream = "\(server.baseURL)/t/acme/production/changes"
        #expect(try Curl.run(["--max-time", "2", stream]).status == 401)
        #expect(try Curl.run(["--max-time", "2", stream + "?token=1.abc"]).status == 401)
        let bulk = try Curl.run([
            "-H", "Authorization: Bearer \(key)", "--data", #"{"context": {"targetingKey": "u"}}"#,
            "\(server.baseURL)/t/acme/production/ofrep/v1/evaluate/flags",
        ])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bulk.body)) as? [String: Any])
        let streams = try #require(json["eventStreams"] as? [[String: Any]])
        let uri = try #require((streams.first?["endpoint"] as? [String: Any])?["requestUri"] as? String)
        let withToken = try Curl.run(["--max-time", "2", "--dump-header", "-", server.baseURL + uri])
        #expect(String(decoding: withToken.body, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }
}
