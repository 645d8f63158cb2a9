import EndToEndSupport
import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

/// Guarded ramps on the real server: users assigned through the API, their crashes sent to
/// `POST /t/…/events`, the server's guards looking as the clock file moves, and beside it the
/// same guards run in process on the per-user totals the test sent.
@Suite("Ramp guards with the real binary")
struct RampGuardServerTests {
    /// The simulation's traffic and truth (`RampSimulation`): 20 000 new users a day, a 1 % base
    /// rate, a one-point rise, at four looks a day (the server looks every 5 minutes of its clock).
    static let usersPerDay = 20_000
    static let looksPerHold = 4
    static let rates = [0.02, 0.01].map { 2 * $0 / Double(looksPerHold) }
    static let steps: [Double] = [1, 5, 20, 50, 100]

    /// A ramp of `checkout` guarded by `crashes:+0.2pt`, rolling back, with an editor's and an app's keys.
    struct GuardRig {
        let rig: RampRig
        let server: ServerProcess
        let editor: String
        let delivery: String

        init() async throws {
            rig = try await RampRig(users: 0)
            try #require(
                await rig.run(["goal", "create", "crashes", "--kind", "count", "--better", "lower", "--tenant", "acme"])
                    .status == 0)
            let rig = rig
            let key = { (role: String) async -> String in
                await rig.run(["key", "create", "--tenant", "acme", "--role", role]).stdout.trimmingCharacters(
                    in: .whitespacesAndNewlines)
            }
            editor = await key("editor")
            delivery = await key("delivery")
            let created = await rig.run([
                "ramp", "create", "checkout", "--steps", "1,5,20,50,100", "--hold", "24h", "--guard",
                "crashes:+0.2pt", "--on-failure", "rollback", "--tenant", "acme",
            ])
            try #require(created.status == 0, "\(created.stderr)")
            server = try rig.server()
        }

        func post(_ path: String, _ body: Any, key: String) throws -> [String: Any] {
            let answer = try Curl.run(
                [
                    "-X", "POST", "-H", "Authorization: Bearer \(key)", "-H", "Content-Type: application/json",
                    "--data-binary", "@-", server.baseURL + path,
                ], stdin: Array(try JSONSerialization.data(withJSONObject: body)))
            try #require(answer.status == 200, "\(path): \(String(decoding: answer.body, as: UTF8.self))")
            return try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        }

        /// Assigns `users` through the API: each one's variation and point.
        func assign(_ users: [String]) throws -> [(user: String, variation: String, point: Double)] {
            var assigned: [(user: String, variation: String, point: Double)] = []
            for start in stride(from: 0, to: users.count, by: 1_000) {
                let answer = try post(
                    "/api/v1/tenants/acme/environments/production/features/checkout/assignments",
                    ["users": Array(users[start..<min(users.count, start + 1_000)])], key: editor)
                for assignment in answer["assignments"] as? [[String: Any]] ?? [] {
                    assigned.append(
                        (
                            assignment["user"] as! String, assignment["variation"] as! String,
                            assignment["point"] as! Double
                        ))
                }
            }
            return assigned
        }

        /// Sends one crash per user listed, as an app does, at `time` (the server's clock).
        func crash(_ users: [String], at time: Date, ids: inout Int) throws {
            let time = Int64(time.timeIntervalSince1970 * 1000)
            for start in stride(from: 0, to: users.count, by: 1_000) {
                let events = users[start..<min(users.count, start + 1_000)].map { user -> [String: Any] in
                    ids += 1
                    return ["id": "e\(ids)", "user": user, "goal": "crashes", "time": time]
                }
                let report = try post("/t/acme/production/events", ["events": events], key: delivery)
                try #require(report["accepted"] as? Int == events.count, "\(report)")
            }
        }

        /// Waits (up to 60 s) until the server has judged the ramp at the clock's time: a look of
        /// guard 0 at `time`, or the ramp no longer running.
        func waitForLook(at time: Date, step: Int) async throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(60)
            let stamp = time.formatted(.iso8601)
            while Date() < deadline {
                let ramp = try await rig.ramp()
                let looks = ramp["looks"] as? [[String: Any]] ?? []
                if ramp["state"] as? String != "running"
                    || looks.contains(where: { $0["step"] as? Int == step && $0["at"] as? String == stamp })
                {
                    return ramp
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the server did not look at step \(step + 1) at \(stamp)")
            return try await rig.ramp()
        }
    }

    @Test(
        "Five simulated ramps with a one-point rise, sent through POST …/events, are judged by the server as in process",
        arguments: 1...5 as ClosedRange<UInt64>)
    func decidesAlike(seed: UInt64) async throws {
        let rig = try await GuardRig()
        defer { _ = rig.server.stop() }
        var random = SeededGenerator(seed: seed)
        var ids = 0
        let alpha = RampGuard.alpha(steps: Self.steps.count, goalGuards: 1)
        var outcome = "finished"
        // Every recorded user's point and variation: a step moves the Disabled users whose point
        // falls under the new share, and they join the step's epoch in Enabled.
        var recorded: [String: (variation: String, point: Double)] = [:]
        holds: for step in 0..<(Self.steps.count - 1) {
            // The hold's epoch: its users by variation (new ones, and those the step moved), with
            // their crashes in it so far. Users of earlier epochs no longer count.
            var crashes: [[String: Int]] = [[:], [:]]
            let movers = recorded.filter { $0.value.variation == "Disabled" && $0.value.point < Self.steps[step] }
            for user in movers.keys {
                recorded[user]!.variation = "Enabled"
                crashes[0][user] = 0
            }
            // They crash as Enabled users do, and the readout counts them, but the guard compares
            // only the users the split placed since the step.
            let moved = Set(movers.keys)
            if step > 0 {
                let applied = try await rig.rig.ramp()["applied"] as? [[String: Any]] ?? []
                #expect(applied.last?["movedUsers"] as? Int == movers.count, "seed \(seed), step \(step + 1)")
            }
            for look in 0..<Self.looksPerHold {
                let users = (0..<(Self.usersPerDay / Self.looksPerHold)).map { "s\(seed)-\(step)-\(look)-\($0)" }
                for (user, variation, point) in try rig.assign(users) {
                    recorded[user] = (variation, point)
                    crashes[variation == "Enabled" ? 0 : 1][user] = 0
                }
                var crashing: [String] = []
                for arm in 0..<2 {
                    let everyone = Array(crashes[arm].keys).sorted()
                    for _ in 0..<RampSimulation.poisson(Double(everyone.count) * Self.rates[arm], using: &random) {
                        let user = everyone[Int.random(in: 0..<everyone.count, using: &random)]
                        crashes[arm][user]! += 1
                        crashing.append(user)
                    }
                }
                let day = Double(step) + Double(look + 1) / Double(Self.looksPerHold)
                // The crashes happened during the look's interval, whose start the server's clock shows.
                try rig.crash(crashing, at: rig.rig.time(day: day - 1 / Double(Self.looksPerHold)), ids: &ids)
                try rig.rig.set(day: day)
                let ramp = try await rig.waitForLook(at: rig.rig.time(day: day), step: step)

                // The same guard in process, on the totals sent.
                let totals = (0..<2).map { arm in
                    crashes[arm].filter { !moved.contains($0.key) }.values.reduce(
                        into: ArmTotals(users: 0, sum: 0, sumOfSquares: 0)
                    ) { total, count in
                        total.users += 1
                        total.sum += Double(count)
                        total.sumOfSquares += Double(count * count)
                    }
                }
                let expected = GuardLook.goal(
                    "crashes", growing: totals[0], source: totals[1],
                    events: totals.map { Int($0.sum) }, scale: .mean, threshold: 0.002, alpha: alpha)
                let looks = ramp["looks"] as? [[String: Any]] ?? []
                let served = try #require(
                    looks.last { $0["step"] as? Int == step && $0["guard"] as? String == "crashes:+0.2pt" })
                let figures = served["figures"] as? [String: Any] ?? [:]
                #expect(
                    figures["users"] as? [Int] == expected.figures.users,
                    "seed \(seed), step \(step + 1), look \(look + 1)")
                #expect(figures["events"] as? [Int] == expected.figures.events)
                #expect(served["verdict"] as? String == expected.verdict.rawValue, "\(served)")
                if let low = expected.figures.low {
                    #expect(abs((figures["low"] as? Double ?? .nan) - low) < 1e-9)
                }
                if expected.verdict == .fail {
                    #expect(
                        ramp["state"] as? String == "aborted" && (ramp["reason"] as? String ?? "").contains("crashes"))
                    outcome = "rolled back at step \(step + 1)"
                    break holds
                }
                // At the hold's end the split is judged too; on a random salt a healthy split
                // fails it once in a thousand holds, and the server must pause exactly then.
                if look == Self.looksPerHold - 1,
                    GuardLook.sampleRatio(
                        observed: totals.map(\.users), weights: [Self.steps[step] / 100, 1 - Self.steps[step] / 100]
                    ).verdict == .fail
                {
                    #expect(ramp["state"] as? String == "paused", "\(ramp["reason"] ?? "")")
                    outcome = "paused by the sample-ratio guard at step \(step + 1)"
                    break holds
                }
                let isLast = step == Self.steps.count - 2 && look == Self.looksPerHold - 1
                #expect(ramp["state"] as? String == (isLast ? "finished" : "running"), "\(ramp["reason"] ?? "")")
            }
            // The hold is over and the guards passed: the next step is applied.
            let applied = try await rig.rig.ramp()["applied"] as? [[String: Any]] ?? []
            #expect(applied.count == step + 2, "seed \(seed): step \(step + 2) was not applied")
        }
        print("seed \(seed): \(outcome), server and process alike")
        let state = try await rig.rig.ramp()["state"] as? String
        #expect(state == (outcome == "finished" ? "finished" : outcome.hasPrefix("paused") ? "paused" : "aborted"))
    }
}
