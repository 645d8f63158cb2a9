import Foundation
import Testing

/// The real binary serving on a real port, driven with curl and the real command line.
@Suite("flagpole serve, end to end")
struct ServerEndToEndTests {
    @Test("Import over HTTP, fetch with curl (ETag, 304, gzip), see a CLI write within a second, stop on SIGTERM")
    func serveImportFetchStop() throws {
        let cli = try CLI()
        try #require(cli.run(["tenant", "create", "acme"]).status == 0)
        let key = try cli.run(["key", "create", "--tenant", "acme", "--role", "editor"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
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
        let exported = try cli.run(["export", "--tenant", "acme"]).stdoutBytes
        let fetched = try Curl.run([documentURL])
        #expect(fetched.status == 200)
        #expect(fetched.body == exported)
        let etag = try #require(fetched.headers["etag"])
        #expect(try Curl.run(["-H", "If-None-Match: \(etag)", documentURL]).status == 304)
        let gzipped = try Curl.run(["--compressed", documentURL])
        #expect(gzipped.headers["content-encoding"] == "gzip")
        #expect(gzipped.body == exported)

        // A write by the command line, another process on the same file, is served within a second.
        try #require(cli.run(["feature", "disable", "Example A/B Test", "--tenant", "acme"]).status == 0)
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
        #expect(try Curl.run([documentURL]).body == (try cli.run(["export", "--tenant", "acme"]).stdoutBytes))

        // SIGTERM stops it cleanly; the port is then closed.
        #expect(server.stop() == 0)
        #expect(try Curl.run([documentURL]).status == 0, "nothing listens after the stop")
    }

    @Test("serve --demo loads the example, prints URLs with a working admin key")
    func demo() throws {
        let cli = try CLI()
        let server = try ServerProcess(cli, arguments: ["--demo"])
        defer { _ = server.stop() }
        let fetched = try Curl.run(["\(server.baseURL)/t/demo/production/features.json"])
        #expect(fetched.status == 200)
        let keys = try cli.json(["key", "list", "--tenant", "demo", "--json"]) as? [[String: Any]]
        #expect(keys?.first?["role"] as? String == "admin")
    }
}
