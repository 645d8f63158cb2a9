import EndToEndSupport
import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

@Suite("Ramps with the real binary")
struct RampServerTests {
    @Test("A five-step ramp reaches 100 % on schedule through the real server, one revision and audit per step")
    func fiveSteps() async throws {
        let rig = try await RampRig()
        let created = await rig.run([
            "ramp", "create", "checkout", "--steps", "1,5,20,50,100", "--hold", "24h", "--tenant", "acme",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Step 2, Enabled 5 %:") && created.stdout.contains("Ramp 1 started"))
        let server = try rig.server()
        defer { _ = server.stop() }
        // Half a day in, nothing is due.
        try rig.set(day: 0.5)
        #expect(await rig.run(["tick", "--dry-run"]).stdout == "Nothing is due.\n")
        for day in 1...4 {
            try rig.set(day: Double(day))
            #expect(try await rig.waitForSteps(day + 1), "step \(day + 1) was not applied")
        }
        let ramp = try await rig.ramp()
        #expect(ramp["state"] as? String == "finished")
        let applied = try await rig.applied()
        #expect(applied.map(\.step) == [0, 1, 2, 3, 4] && applied.allSatisfy(\.folded.isEmpty))

        // One revision per step, by the ramp, at the time of its step, each with its audit row.
        let revisions = try await rig.revisions()
        #expect(revisions.count == 6)
        let steps = revisions.prefix(5).reversed()
        #expect(steps.allSatisfy { $0["actor"] as? String == "ramp:1 by cli:e2e" && ($0["changes"] as? Int ?? 0) >= 1 })
        #expect(
            steps.map { $0["createdAt"] as? String } == (0...4).map { rig.time(day: Double($0)).formatted(.iso8601) })
        #expect(steps.map { $0["kind"] as? String } == ["bias", "bias", "bias", "bias", "rollout"])

        // Served: the test rolled out, a flag on for everyone.
        let served = try Curl.run(["\(server.baseURL)/t/acme/production/features.json"])
        let document = try JSONSerialization.jsonObject(with: Data(served.body)) as? [String: Any]
        let checkout = (document?["features"] as? [[String: Any]])?.first
        #expect(checkout?["enabled"] as? Bool == true && checkout?["test-variations"] == nil)
    }

    @Test(
        "Killed with SIGKILL at random points of its steps and restarted, a ramp applies no step twice and loses none")
    func killedAndRestarted() async throws {
        let rig = try await RampRig(users: 20_000)
        try #require(
            await rig.run([
                "ramp", "create", "checkout", "--steps", "1,5,20,50,100", "--hold", "24h", "--tenant", "acme",
            ])
            .status == 0)
        // Each day, a server whose step comes due while it runs, killed at a random moment: before
        // its tick, in the step's transaction (moving 20 000 users' records), or after it.
        var generator = SystemRandomNumberGenerator()
        for day in 1...4 {
            for round in 0..<2 {
                let server = try rig.server()
                try rig.set(day: Double(day) + Double(round) * 0.1)
                try await Task.sleep(for: .seconds(Double.random(in: 0...0.2, using: &generator)))
                server.kill()
            }
        }
        let server = try rig.server()
        #expect(try await rig.waitForSteps(5))
        _ = server.stop()

        // Every step once: applied, or folded into a later one after a kill, never both.
        let applied = try await rig.applied()
        let covered = applied.flatMap { [$0.step] + $0.folded }.sorted()
        #expect(covered == [0, 1, 2, 3, 4], "\(applied)")
        #expect(try await rig.ramp()["state"] as? String == "finished")
        let byRamp = try await rig.revisions().filter { ($0["actor"] as? String)?.hasPrefix("ramp:1 ") == true }
        #expect(byRamp.count == applied.count)
        // And the users moved with the steps: all of them in Enabled, once the test rolled out.
        let stats = try JSONSerialization.jsonObject(
            with: Data(
                await rig.run(["assignments", "stats", "--feature", "checkout", "--tenant", "acme", "--json"])
                    .stdoutBytes))
        let users = ((stats as? [String: Any])?["variations"] as? [[String: Any]] ?? []).map {
            "\($0["variation"] ?? "?") \($0["users"] ?? "?")"
        }
        #expect(users == ["Enabled 20000", "Disabled 0"] || users == ["Enabled 20000"], "\(users)")
    }

    @Test("Two instances on one PostgreSQL database apply each step once")
    func twoInstances() async throws {
        let url = try TestPostgres.newDatabase("ramps")
        let rig = try await RampRig(database: url)
        try #require(
            await rig.run([
                "ramp", "create", "checkout", "--steps", "1,5,20,50,100", "--hold", "24h", "--tenant", "acme",
            ])
            .status == 0)
        let servers = [try rig.server(), try rig.server()]
        defer { for server in servers { _ = server.stop() } }
        for day in 1...4 {
            try rig.set(day: Double(day))
            #expect(try await rig.waitForSteps(day + 1))
        }
        #expect(try await rig.applied().map(\.step) == [0, 1, 2, 3, 4])
        let rows = try TestPostgres.psql(
            url,
            "SELECT count(*), count(DISTINCT step) FROM ramp_steps; SELECT count(*) FROM revisions WHERE actor LIKE 'ramp:%'"
        )
        #expect(rows.split(separator: "\n").map(String.init) == ["5|5", "5"])
    }

    @Test("Down across three due steps, a ramp without guards folds them into one on return, once")
    func foldsAfterDowntime() async throws {
        let rig = try await RampRig()
        try #require(
            await rig.run([
                "ramp", "create", "checkout", "--steps", "1,5,20,50,100", "--hold", "24h", "--tenant", "acme",
            ])
            .status == 0)
        try rig.set(day: 3.5)
        let tick = await rig.run(["tick"])
        #expect(tick.status == 0 && tick.stdout.contains("step 5 of 5"), "\(tick.stdout)\(tick.stderr)")
        #expect(try await rig.applied().map { "\($0.step):\($0.folded)" } == ["0:[]", "3:[1, 2]"])
        #expect(
            try await rig.revisions().first?["message"] as? String
                == "ramp 1: step 4 of 5, Enabled 50 %, folding steps 2, 3")
        #expect(await rig.run(["tick"]).stdout == "Nothing is due.\n")
        #expect(try await rig.revisions().count == 3)
    }

    @Test("Down across three due steps, a guarded ramp applies only the next one on return, once its guards pass")
    func guardedAppliesNextOnly() async throws {
        let rig = try await RampRig()
        try #require(
            await rig.run([
                "ramp", "create", "checkout", "--steps", "10,20,50,100", "--hold", "24h", "--guard", "sample-ratio",
                "--guard", "min-users:10", "--tenant", "acme",
            ]).status == 0)
        // New users after the first step: the evidence its guards wait for. They are chosen by
        // their points, a hundred in Enabled and nine hundred in Disabled, so the sample-ratio
        // guard sees the split the biases say whatever salt the import drew.
        let shown = await rig.run(["feature", "show", "checkout", "--json", "--tenant", "acme"]).stdout
        let detail = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any])
        let points = UserPoints(salt: try #require(detail["salt"] as? String))
        var placed: [[String]] = [[], []]
        var candidate = 0
        while placed[0].count < 100 || placed[1].count < 900 {
            let user = "new-\(candidate)"
            let variation = points.point(for: user) < 10 ? 0 : 1
            if placed[variation].count < [100, 900][variation] { placed[variation].append(user) }
            candidate += 1
        }
        let list = try rig.cli.write(placed.joined().joined(separator: "\n"), to: "new.txt")
        try #require(
            await rig.run(["assign", "--feature", "checkout", "--users-file", list, "--tenant", "acme"]).status == 0)
        try rig.set(day: 3.5)
        let tick = await rig.run(["tick"])
        #expect(tick.status == 0 && tick.stdout.contains("step 3 of 4"), "\(tick.stdout)\(tick.stderr)")
        #expect(try await rig.applied().map { "\($0.step):\($0.folded)" } == ["0:[]", "1:[]"])
        #expect(try await rig.revisions().first?["message"] as? String == "ramp 1: step 2 of 4, Enabled 20 %")
        #expect(try await rig.ramp()["dueAt"] as? String == rig.time(day: 4.5).formatted(.iso8601))
        let ramp = await rig.run(["ramp", "show", "checkout", "--tenant", "acme"]).stdout
        #expect(ramp.contains("Guards: sample-ratio, min-users:10, traffic"), "\(ramp)")
        #expect(ramp.contains("step 1, pass after 1 look"), "\(ramp)")
    }

    @Test("An alert's POST to a trigger URL pauses the ramp on the real server; the command line lists the call")
    func triggerPauses() async throws {
        let rig = try await RampRig(users: 10)
        try #require(
            await rig.run(["ramp", "create", "checkout", "--steps", "10,100", "--hold", "1h", "--tenant", "acme"])
                .status == 0
        )
        let log = rig.cli.directory.appendingPathComponent("server.log")
        let server = try rig.server(log: log)
        let created = await rig.run([
            "trigger", "create", "checkout", "--action", "pause", "--name", "Crashlytics velocity alert", "--tenant",
            "acme", "--url", server.baseURL,
        ])
        let url = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(created.status == 0 && url.hasPrefix("\(server.baseURL)/triggers?token=fpt_"), "\(created.stderr)")
        let call = try Curl.run(["-X", "POST", "-A", "Crashlytics/1.0", "--data", #"{"issue": 1}"#, url])
        #expect(call.status == 200, "\(String(decoding: call.body, as: UTF8.self))")
        #expect(try await rig.ramp()["state"] as? String == "paused")
        let listed = await rig.run(["trigger", "list", "--tenant", "acme"]).stdout
        #expect(
            listed.contains("Crashlytics velocity alert") && listed.contains("from 127.0.0.1: paused ramp 1"),
            "\(listed)")
        let token = try #require(url.components(separatedBy: "token=").last)
        #expect(!listed.contains(token))
        // The server's whole log, at debug level, never holds the token.
        _ = server.stop()
        let logged = try String(contentsOf: log, encoding: .utf8)
        #expect(logged.contains("POST /triggers 200") && !logged.contains(token))
    }

    @Test("Bad ramps on the command line are refused with what to do, and nothing is saved")
    func badInput() async throws {
        let rig = try await RampRig(users: 10)
        let cases: [([String], String)] = [
            (["--steps", "5,1", "--hold", "24h"], "is not above step 1"),
            (["--steps", "1,5", "--hold", "0s"], "hold each step at least 1 second"),
            (["--steps", "1,5", "--hold", "soon"], "is not a hold"),
            (["--steps", "1,five", "--hold", "1h"], "“five” is not a share"),
            (["--steps", "1,5", "--hold", "1h", "--variation", "Maybe"], "Maybe"),
        ]
        for (arguments, message) in cases {
            let result = await rig.run(["ramp", "create", "checkout", "--tenant", "acme"] + arguments)
            #expect(result.status != 0 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(await rig.run(["ramp", "list", "--tenant", "acme"]).stdout == "No ramps.\n")
        #expect(try await rig.revisions().count == 1)
    }
}
