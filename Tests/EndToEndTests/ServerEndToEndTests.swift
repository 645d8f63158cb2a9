import EndToEndSupport
import Foundation
import Testing

/// The real binary serving on a real port, driven with curl and the real command line.
@Suite("flagpole serve, end to end")
struct ServerEndToEndTests {
    @Test("Import over HTTP, fetch with curl (ETag, 304, gzip), see a CLI write within a second, stop on SIGTERM")
    func serveImportFetchStop() async throws {
        let cli = try CLI()
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", "acme", "--role", "editor"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("fp_"))
        let server = try ServerProcess(cli)
        let documentURL = "\(server.baseURL)/t/acme/production/features.json"

        // Import over HTTP, with the file as the body.
        let fixture = CLI.fixture("rwbutler-HEAD-Features.json")
        let imported = try Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "--data-binary", "@\(fixture)",
            "\(server.baseURL)/api/v1/tenants/acme/environments/production/import",
        ])
        #expect(imported.status == 200)
        #expect(String(decoding: imported.body, as: UTF8.self).contains(#""status":"applied""#))

        // The document is export's bytes, with an ETag that yields 304; gzip decodes to the same.
        let exported = await cli.run(["export", "--tenant", "acme"]).stdoutBytes
        let fetched = try Curl.run([documentURL])
        #expect(fetched.status == 200)
        #expect(fetched.body == exported)
        let etag = try #require(fetched.headers["etag"])
        #expect(try Curl.run(["-H", "If-None-Match: \(etag)", documentURL]).status == 304)
        let gzipped = try Curl.run(["--compressed", documentURL])
        #expect(gzipped.headers["content-encoding"] == "gzip")
        #expect(gzipped.body == exported)

        // A per-user write by the command line reaches the server's change sequence within a
        // second, naming its one user (once the import's step, which names everyone, is read:
        // steps read together are one change, of everyone if any names everyone).
        func metric(_ name: String) throws -> Int {
            let metrics = String(decoding: try Curl.run(["\(server.baseURL)/metrics"]).body, as: UTF8.self)
            return metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        let importSeen = Date()
        while try metric("flagpole_change_sequence_steps_total") < 1 && Date().timeIntervalSince(importSeen) < 5 {}
        let usersBefore = try metric("flagpole_change_sequence_users_total")
        try #require(
            await cli.run([
                "override", "set", "Example A/B Test", "--user", "qa-7", "--variation", "Group B", "--tenant", "acme",
            ]).status == 0)
        let overridden = Date()
        var usersSeen: TimeInterval?
        while Date().timeIntervalSince(overridden) < 5 {
            if try metric("flagpole_change_sequence_users_total") == usersBefore + 1 {
                usersSeen = Date().timeIntervalSince(overridden)
                break
            }
        }
        let userLatency = try #require(usersSeen, "the server never read the override's step")
        #expect(userLatency < 1, "a per-user CLI write reached the server's change sequence after \(userLatency) s")

        // A write by the command line, another process on the same file, is served within a second.
        try #require(await cli.run(["feature", "disable", "Example A/B Test", "--tenant", "acme"]).status == 0)
        let written = Date()
        var seen: TimeInterval?
        while Date().timeIntervalSince(written) < 5 {
            if try Curl.run([documentURL]).headers["flagpole-revision"] == "2" {
                seen = Date().timeIntervalSince(written)
                break
            }
        }
        let latency = try #require(seen, "the server never served revision 2")
        #expect(latency < 1, "a CLI write reached the server after \(latency) s")
        #expect(try Curl.run([documentURL]).body == (await cli.run(["export", "--tenant", "acme"]).stdoutBytes))

        // SIGTERM stops it cleanly; the port is then closed.
        #expect(server.stop() == 0)
        #expect(try Curl.run([documentURL]).status == 0, "nothing listens after the stop")
    }

    @Test("A running server follows a restore without a restart, and an immutable URL never serves other bytes")
    func restoreUnderARunningServer() async throws {
        let cli = try CLI()
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-f8a982f-Features.json"), "--tenant", "acme"]).status == 0)
        try #require(await cli.run(["backup", "backup.sqlite"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        let server = try ServerProcess(cli)
        defer { _ = server.stop() }
        let documentURL = "\(server.baseURL)/t/acme/production/features.json"

        // Revision 2, named by its bytes: served immutable.
        let second = try Curl.run([documentURL + "?revision=2"])
        let location = try #require(second.headers["content-location"])
        #expect(location.hasPrefix("/t/acme/production/features.json?revision=2&sha256="))
        let pinned = try Curl.run([server.baseURL + location])
        #expect(pinned.status == 200 && pinned.body == second.body)
        #expect(pinned.headers["cache-control"] == "public, max-age=31536000, immutable")

        // Restored to revision 1, then another file becomes revision 2.
        try #require(await cli.run(["restore", "backup.sqlite", "--force"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("vantientu1703-master-Features.json"), "--tenant", "acme"]).status == 0
        )
        let expected = await cli.run(["export", "--tenant", "acme"]).stdoutBytes
        let restored = Date()
        var current = try Curl.run([documentURL])
        while current.body != expected && Date().timeIntervalSince(restored) < 5 {
            current = try Curl.run([documentURL])
        }
        #expect(current.body == expected, "the server never served the restored database's revision 2")
        #expect(current.headers["flagpole-revision"] == "2")

        // The immutable URL of the old revision 2 serves nothing now; the number serves the new bytes.
        #expect(try Curl.run([server.baseURL + location]).status == 404)
        #expect(try Curl.run([documentURL + "?revision=2"]).body == expected)
    }

    @Test("serve --demo loads the example, prints URLs with a working admin key")
    func demo() async throws {
        let cli = try CLI()
        let server = try ServerProcess(cli, arguments: ["--demo"])
        defer { _ = server.stop() }
        let fetched = try Curl.run(["\(server.baseURL)/t/demo/production/features.json"])
        #expect(fetched.status == 200)
        let keys = try await cli.json(["key", "list", "--tenant", "demo", "--json"]) as? [[String: Any]]
        #expect(keys?.first?["role"] as? String == "admin")
    }
}
