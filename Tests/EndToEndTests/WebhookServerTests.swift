import EndToEndSupport
import Foundation
import Testing

/// Webhooks and fetch counts with the real binary: `flagpole webhook add` refusing loopback
/// without permission, `flagpole serve --allow-private-webhooks` delivering a ramp's events to a
/// receiver in another language (Python's http.server and hmac), and a step's fetches counted.
@Suite("Webhooks with the real binary")
struct WebhookServerTests {
    /// A receiver that logs each POST as a JSON line: its path, its headers, its body, and whether
    /// its `Flagpole-Signature` checks out with the secret in `secret.txt` (read at each request).
    static let receiver = #"""
        import hashlib, hmac, http.server, json, sys
        log, secret_file = sys.argv[1], sys.argv[2]
        class Receiver(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                secret = open(secret_file).read().strip().encode()
                fields = dict(part.split("=", 1) for part in self.headers["Flagpole-Signature"].split(","))
                expected = hmac.new(secret, fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
                with open(log, "a") as out:
                    out.write(json.dumps({
                        "path": self.path, "event": self.headers["Flagpole-Event"],
                        "delivery": self.headers["Flagpole-Delivery"],
                        "valid": hmac.compare_digest(expected, fields["v1"]), "body": json.loads(body),
                    }) + "\n")
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")
            def log_message(self, *args):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    @Test(
        "A webhook to loopback is refused without permission; with it, the server delivers the ramp's events signed, and counts the step's fetches"
    )
    func deliveredAndCounted() async throws {
        let rig = try await RampRig()
        let receiver = try await Receiver(rig)
        defer { receiver.process.kill() }
        let (url, port, log, secretFile) = (receiver.url, receiver.port, receiver.log, receiver.secretFile)

        // Without the operator's permission, nothing is saved.
        for address in [url, "http://localhost:\(port)/hooks"] {
            let refused = await rig.run(["webhook", "add", address, "--tenant", "acme"])
            #expect(refused.status != 0 && refused.stderr.contains("--allow-private-webhooks"), "\(refused.stderr)")
        }
        #expect(await rig.run(["webhook", "list", "--tenant", "acme"]).stdout == "No webhooks.\n")

        let added = await rig.run(["webhook", "add", url, "--events", "ramp.*", "--allow-private", "--tenant", "acme"])
        #expect(added.status == 0, "\(added.stderr)")
        let secret = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("whsec_"))
        try Data(secret.utf8).write(to: secretFile)
        #expect(await rig.run(["webhook", "list", "--tenant", "acme"]).stdout.contains("http://127.0.0.1:\(port)/…"))

        let server = try ServerProcess(
            rig.cli, arguments: ["--tick-interval", "20", "--allow-private-webhooks"], environment: rig.environment)
        defer { _ = server.stop() }
        try #require(
            await rig.run(["ramp", "create", "checkout", "--steps", "10,100", "--hold", "1d", "--tenant", "acme"])
                .status == 0
        )
        // Apps fetch the step: two users' documents, one's configs.
        for path in ["features.json?user=user-1", "features.json?user=user-2", "configs.json?user=user-1"] {
            #expect(try Curl.run(["\(server.baseURL)/t/acme/production/\(path)"]).status == 200)
        }
        try rig.set(day: 1)
        let received = try await waitForLines(log, count: 3)
        #expect(received.map { $0["event"] as? String } == ["ramp.step_applied", "ramp.step_applied", "ramp.finished"])
        #expect(received.allSatisfy { $0["valid"] as? Bool == true && $0["path"] as? String == "/hooks/flagpole" })
        #expect(Set(received.compactMap { $0["delivery"] as? String }).count == 3)
        let first = received[0]["body"] as? [String: Any]
        #expect(first?["share"] as? Double == 10 && first?["feature"] as? String == "checkout")

        // The first step's revision was fetched three times (pinned 2, configs 1) before the next.
        let steps = try #require(try await rig.ramp()["applied"] as? [[String: Any]])
        let fetches = steps.first?["fetches"] as? [String: Int]
        #expect(fetches == ["shared": 0, "pinned": 2, "configs": 1, "ofrep": 0, "bucketeer": 0])
        let shown = await rig.run(["ramp", "show", "checkout", "--tenant", "acme"]).stdout
        #expect(shown.contains("3 fetches (pinned 2, configs 1)"), "\(shown)")
        let listed = await rig.run(["webhook", "list", "--tenant", "acme"]).stdout
        #expect(listed.contains("ramp.finished  delivered (200) after 1 attempt"), "\(listed)")
    }

    @Test("A server stopped with SIGTERM writes the fetches it counted since its last flush")
    func lastCountsAtShutdown() async throws {
        let rig = try await RampRig()
        try #require(
            await rig.run(["ramp", "create", "checkout", "--steps", "10,100", "--hold", "1d", "--tenant", "acme"])
                .status == 0
        )
        // A tick of a minute: its flush (every 5 s at most) would not come before the stop.
        let server = try ServerProcess(rig.cli, arguments: ["--tick-interval", "60000"], environment: rig.environment)
        #expect(try Curl.run(["\(server.baseURL)/t/acme/production/features.json?user=user-1"]).status == 200)
        #expect(server.stop() == 0)
        let steps = try #require(try await rig.ramp()["applied"] as? [[String: Any]])
        #expect((steps.first?["fetches"] as? [String: Int])?["pinned"] == 1)
    }

    @Test(
        "A bias change by hand reaches a Slack webhook, naming who and what with a link to the diff: from `flagpole tick` where no server runs, and from `serve` within a tick"
    )
    func revisionsReachSlack() async throws {
        let rig = try await RampRig(users: 100)
        let receiver = try await Receiver(rig)
        defer { receiver.process.kill() }
        let added = await rig.run([
            "webhook", "add", receiver.url, "--format", "slack", "--events", "revision.created", "--allow-private",
            "--tenant", "acme",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        try Data(added.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8).write(to: receiver.secretFile)
        // An event that names no event is refused with the list, and nothing is saved.
        let refused = await rig.run(["webhook", "add", receiver.url, "--events", "ramp.typo", "--tenant", "acme"])
        #expect(refused.status != 0 && refused.stderr.contains("revision.created, ramp.step_applied"))
        #expect(await rig.run(["webhook", "list", "--tenant", "acme"]).stdout.split(separator: "\n").count == 1)

        // Where no server runs, cron's `flagpole tick` sends what is due.
        let publicURL = "https://flags.example.com/"
        #expect(await rig.run(["bias", "set", "checkout", "20", "80", "--tenant", "acme"]).status == 0)
        let ticked = await rig.run(["tick", "--allow-private-webhooks", "--public-url", publicURL])
        #expect(ticked.status == 0 && ticked.stdout.contains("Sent 1 of 1 webhook deliveries due."), "\(ticked)")
        let first = try await waitForLines(receiver.log, count: 1)
        #expect(
            first.count == 1 && first[0]["event"] as? String == "revision.created" && first[0]["valid"] as? Bool == true
        )
        let text = try #require((first[0]["body"] as? [String: Any])?["text"] as? String)
        #expect(text.hasPrefix("Flagpole · acme/production: revision 2 (bias) by cli:"), "\(text)")
        #expect(text.contains("— feature checkout; ") && text.contains("recorded users moved"), "\(text)")
        #expect(
            text.hasSuffix(" <https://flags.example.com/tenants/acme/production/revisions?from=1&to=2|what changed>"))

        // A running server sends another process's change within one tick interval.
        let server = try ServerProcess(
            rig.cli, arguments: ["--tick-interval", "20", "--allow-private-webhooks", "--public-url", publicURL],
            environment: rig.environment)
        defer { _ = server.stop() }
        #expect(await rig.run(["bias", "set", "checkout", "30", "70", "--tenant", "acme"]).status == 0)
        let both = try await waitForLines(receiver.log, count: 2)
        let second = try #require((both.last?["body"] as? [String: Any])?["text"] as? String)
        #expect(both.count == 2 && second.contains("revision 3 (bias)") && second.contains("from=2&to=3"))
        // A dry run, and a refused change, send nothing.
        #expect(await rig.run(["bias", "set", "checkout", "40", "60", "--dry-run", "--tenant", "acme"]).status == 0)
        #expect(await rig.run(["bias", "set", "checkout", "40", "70", "--tenant", "acme"]).status != 0)
        #expect(await rig.run(["tick", "--allow-private-webhooks"]).stdout.contains("Nothing is due."))
        #expect(((try? String(contentsOf: receiver.log, encoding: .utf8)) ?? "").split(separator: "\n").count == 2)
        // The audit feed tells the same revisions, one object per line.
        let feed = await rig.run(["revisions", "--since", "2000-01-01T00:00:00Z", "--json", "--tenant", "acme"])
        let lines = feed.stdout.split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains(#""event":"revision.created""#) }, "\(feed)")
    }

    /// A receiver in another process, started and listening, its log and secret file in the rig's directory.
    private struct Receiver {
        let process: ChildProcess
        let port: String
        let url: String
        let log: URL
        let secretFile: URL

        init(_ rig: RampRig) async throws {
            let directory = rig.cli.directory
            log = directory.appendingPathComponent("received.jsonl")
            secretFile = directory.appendingPathComponent("secret.txt")
            try Data().write(to: secretFile)
            let script = try rig.cli.write(WebhookServerTests.receiver, to: "receiver.py")
            process = try ChildProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, log.path, secretFile.path], in: directory)
            var port = ""
            let deadline = Date().addingTimeInterval(20)
            while port.isEmpty && Date() < deadline {
                port =
                    (try? String(contentsOf: Self.output(directory), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                if port.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            if port.isEmpty { process.kill() }
            try #require(!port.isEmpty, "the receiver did not start")
            self.port = port
            url = "http://127.0.0.1:\(port)/hooks/flagpole"
        }

        /// The receiver's standard output file (ChildProcess writes it in `directory`).
        private static func output(_ directory: URL) throws -> URL {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            let name = try #require(names.first { $0.hasPrefix(".stdout-") })
            return directory.appendingPathComponent(name)
        }
    }

    /// Waits (up to 30 s) for `count` lines in `log`, and reads them.
    private func waitForLines(_ log: URL, count: Int) async throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(30)
        var lines: [Substring] = []
        while Date() < deadline {
            lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
            if lines.count >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
    }
}
