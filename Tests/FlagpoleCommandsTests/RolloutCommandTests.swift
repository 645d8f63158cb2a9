import EndToEndSupport
import Foundation
import Testing

/// Phased roll-outs on the command line: feature show/enable/disable, assign,
/// assignments, bias set, rollout, rollback, diff, unlocks, overrides and the pinned export.
@Suite("flagpole roll-out commands")
struct RolloutCommandTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    static let abTest = "Example A/B Test"
    static let onOffTest = "Example Feature On/Off A/B Test"
    static let mvtTest = "Example MVT Test"
    static let unlockFlag = "Example Unlock Flag"
    static let plainFlag = "Example Feature Flag"

    /// Creates tenant acme and imports the rwbutler example (an A/B test 50/50, an on/off test
    /// 80/20, an MVT 70/20/10, an unlock flag and plain flags) as revision 1.
    private func importExample() async throws {
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
    }

    // MARK: feature show, enable, disable

    @Test(
        "feature show --json has kind, state, variations, biases, a 32-hex salt and the revision; the text shows the salt"
    )
    func featureShow() async throws {
        try await importExample()
        let shown = try await cli.object(["feature", "show", Self.mvtTest, "--tenant", "acme", "--json"])
        #expect(shown["kind"] as? String == "mvt-test")
        #expect(shown["enabled"] as? Bool == true)
        let variations = try #require(shown["variations"] as? [[String: Any]])
        #expect(variations.map { $0["name"] as? String } == ["Group A", "Group B", "Group C"])
        #expect(shown["testBiases"] as? [Double] == [70, 20, 10])
        #expect(shown["effectiveBiases"] as? [Double] == [70, 20, 10])
        #expect(shown["revision"] as? Int == 1)
        let salt = try #require(shown["salt"] as? String)
        #expect(salt.count == 32)
        #expect(salt.allSatisfy { "0123456789abcdef".contains($0) })

        let text = await cli.run(["feature", "show", Self.mvtTest, "--tenant", "acme"])
        #expect(text.status == 0)
        #expect(text.stdout.contains(salt))

        // Biases the app ignores (a sum of 90) are shown as written and as the app uses them.
        let file = try cli.write(
            #"{"features": [{"name": "t", "enabled": true, "test-variations": ["a", "b", "c"], "test-biases": [10, 10, 70]}]}"#,
            to: "t.json")
        try #require(await cli.run(["import", file, "--tenant", "acme"]).status == 0)
        let ignored = try await cli.object(["feature", "show", "t", "--tenant", "acme", "--json"])
        #expect(ignored["testBiases"] as? [Double] == [10, 10, 70])
        let effective = try #require(ignored["effectiveBiases"] as? [Double])
        #expect(effective.count == 3)
        #expect(abs(effective.reduce(0, +) - 100) < 1e-9)
        #expect(effective.allSatisfy { abs($0 - 100.0 / 3) < 1e-6 })
        #expect(ignored["revision"] as? Int == 2)
        #expect(ignored["salt"] as? String != salt)

        let missing = await cli.run(["feature", "show", "nope", "--tenant", "acme"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope"))
    }

    @Test("feature disable and enable print the plan and each write a revision; a disabled test puts users in Disabled")
    func featureEnableDisable() async throws {
        try await importExample()
        let disabled = await cli.run(["feature", "disable", Self.abTest, "--tenant", "acme", "--message", "pause"])
        #expect(disabled.status == 0)
        #expect(disabled.stdout.contains("Group A 50 %, Group B 50 % → Disabled 100 %"))
        #expect(disabled.stdout.contains("Applied as revision 2"))
        #expect(
            try await cli.object(["feature", "show", Self.abTest, "--tenant", "acme", "--json"])["enabled"] as? Bool
                == false)

        let assigned = try await cli.jsonLines([
            "assign", "--feature", Self.abTest, "--user", "dora", "--tenant", "acme", "--json",
        ])
        #expect(assigned.first?["variation"] as? String == "Disabled")

        let enabled = try await cli.object(["feature", "enable", Self.abTest, "--tenant", "acme", "--json"])
        #expect(enabled["revision"] as? Int == 3)
        #expect(enabled["applied"] as? Bool == true)
        let plans = try #require(enabled["plans"] as? [[String: Any]])
        #expect(plans.first?["feature"] as? String == Self.abTest)
        #expect((plans.first?["moves"] as? [[String: Any]])?.allSatisfy { $0["from"] as? String == "Disabled" } == true)

        let revisions = try await cli.array(["revisions", "--tenant", "acme", "--json"])
        #expect(revisions.map { $0["number"] as? Int } == [3, 2, 1])
        #expect(revisions.map { $0["kind"] as? String } == ["edit", "edit", "import"])
        #expect(revisions[1]["message"] as? String == "pause")
        #expect(revisions[0]["message"] as? String == "enable \(Self.abTest)")

        // Enabled again, the recorded user goes back to the group of their point.
        let point = try #require(assigned.first?["point"] as? Double)
        let now = try await cli.jsonLines([
            "assign", "--feature", Self.abTest, "--user", "dora", "--tenant", "acme", "--json",
        ])
        #expect(now.first?["variation"] as? String == (point < 50 ? "Group A" : "Group B"))

        // Enabling what is enabled writes nothing.
        let again = await cli.run(["feature", "enable", Self.abTest, "--tenant", "acme"])
        #expect(again.status == 0)
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 3)
    }

    // MARK: assign

    @Test("assign --user --json prints one object with five keys; re-running prints the same line and records nothing")
    func assignOneUser() async throws {
        try await importExample()
        let arguments = ["assign", "--feature", Self.mvtTest, "--user", "alice", "--tenant", "acme", "--json"]
        let first = await cli.run(arguments)
        #expect(first.status == 0)
        let lines = first.stdout.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(first.stdoutBytes)) as? [String: Any])
        #expect(Set(object.keys) == ["user", "feature", "variation", "point", "revision"])
        #expect(object["user"] as? String == "alice")
        #expect(object["feature"] as? String == Self.mvtTest)
        #expect(object["revision"] as? Int == 1)
        let point = try #require(object["point"] as? Double)
        #expect(point >= 0 && point < 100)
        #expect(object["variation"] as? String == Self.mvtGroup(of: point))

        let events = try await cli.array(["assignments", "--tenant", "acme", "--json"])
        #expect(events.count == 1)

        let second = await cli.run(arguments)
        #expect(second.status == 0)
        #expect(second.stdout == first.stdout)
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).count == 1)

        let text = await cli.run(["assign", "--feature", Self.mvtTest, "--user", "alice", "--tenant", "acme"])
        #expect(text.stdout.contains("alice is in \"\(object["variation"] as? String ?? "?")\" of \(Self.mvtTest)"))
    }

    @Test("assign --users-file prints one JSON object per line in file order, and reads standard input with -")
    func assignUsersFile() async throws {
        try await importExample()
        let file = try cli.write("zed\nalpha\n\nmike\r\n", to: "users.txt")
        let result = await cli.run([
            "assign", "--feature", Self.mvtTest, "--users-file", file, "--tenant", "acme", "--json",
        ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let objects = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["user"] as? String } == ["zed", "alpha", "mike"])
        for object in objects {
            #expect(Set(object.keys) == ["user", "feature", "variation", "point", "revision"])
            #expect(object["variation"] as? String == Self.mvtGroup(of: object["point"] as? Double ?? -1))
        }

        let piped = await cli.run(
            ["assign", "--feature", Self.mvtTest, "--users-file", "-", "--tenant", "acme", "--json"],
            stdin: Array("mike\nnew-one\n".utf8))
        #expect(piped.status == 0)
        let pipedObjects = try cli.parseLines(piped.stdout)
        #expect(pipedObjects.map { $0["user"] as? String } == ["mike", "new-one"])
        // A known user gets the very same answer.
        #expect(pipedObjects[0]["point"] as? Double == objects[2]["point"] as? Double)
        #expect(pipedObjects[0]["variation"] as? String == objects[2]["variation"] as? String)
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).count == 4)
    }

    @Test("A users file with a bad line fails naming FILE:LINE and writes nothing")
    func assignBadUsersFile() async throws {
        try await importExample()
        let file = try cli.write("good-1\ngood-2\nbad\tuser\ngood-3\n", to: "users.txt")
        let result = await cli.run([
            "assign", "--feature", Self.mvtTest, "--users-file", file, "--tenant", "acme", "--json",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(file):3:"))
        #expect(result.stderr.contains("Nothing was written"))
        #expect(result.stdout.isEmpty)
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).isEmpty)

        let stdin = await cli.run(
            ["assign", "--feature", Self.mvtTest, "--users-file", "-", "--tenant", "acme"],
            stdin: Array("ok\n\u{7f}x\n".utf8))
        #expect(stdin.status == 1)
        #expect(stdin.stderr.contains("<stdin>:2:"))
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).isEmpty)
    }

    @Test("assign refuses --user with --users-file (usage), neither, a plain flag and an unknown feature")
    func assignErrors() async throws {
        try await importExample()
        let file = try cli.write("u1\n", to: "users.txt")
        let both = await cli.run([
            "assign", "--feature", Self.mvtTest, "--user", "u1", "--users-file", file, "--tenant", "acme",
        ])
        #expect(both.status == 64)
        #expect(both.stderr.contains("Usage: flagpole assign"))
        #expect(await cli.run(["assign", "--feature", Self.mvtTest, "--tenant", "acme"]).status == 64)

        let flag = await cli.run(["assign", "--feature", Self.plainFlag, "--user", "u1", "--tenant", "acme"])
        #expect(flag.status == 1)
        #expect(flag.stderr.contains("not a test"))
        #expect(flag.stderr.contains(Self.plainFlag))

        let unknown = await cli.run(["assign", "--feature", "No Such Test", "--user", "u1", "--tenant", "acme"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("No Such Test"))
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).isEmpty)
    }

    // MARK: assignments

    @Test("assignments: newest first, filtered by user, feature, limit and time, with the JSON fields")
    func assignmentsListing() async throws {
        try await importExample()
        let file = try cli.write("u1\nu2\nu3\n", to: "users.txt")
        try #require(
            await cli.run(["assign", "--feature", Self.mvtTest, "--users-file", file, "--tenant", "acme"]).status == 0)
        try #require(
            await cli.run(["assign", "--feature", Self.abTest, "--users-file", file, "--tenant", "acme"]).status == 0)

        let all = try await cli.array(["assignments", "--tenant", "acme", "--json"])
        #expect(all.count == 6)
        let ids = all.compactMap { $0["id"] as? Int }
        #expect(ids == ids.sorted(by: >))
        #expect(Set(ids).count == 6)
        for event in all {
            #expect(
                Set(event.keys) == [
                    "id", "time", "user", "feature", "previousVariation", "variation", "point", "revision", "reason",
                    "rule",
                ])
            #expect(event["previousVariation"] is NSNull)
            #expect(event["reason"] as? String == "first")
            #expect(event["revision"] as? Int == 1)
            let time = try #require(event["time"] as? String)
            #expect((try? Date(time, strategy: .iso8601)) != nil, "\(time) is not ISO 8601")
        }
        // The A/B test's users were assigned last, so they come first.
        #expect(all.prefix(3).allSatisfy { $0["feature"] as? String == Self.abTest })
        #expect(all.prefix(3).map { $0["user"] as? String } == ["u3", "u2", "u1"])

        let byUser = try await cli.array(["assignments", "--user", "u2", "--tenant", "acme", "--json"])
        #expect(byUser.count == 2)
        #expect(byUser.allSatisfy { $0["user"] as? String == "u2" })
        let byFeature = try await cli.array(["assignments", "--feature", Self.mvtTest, "--tenant", "acme", "--json"])
        #expect(byFeature.map { $0["user"] as? String } == ["u3", "u2", "u1"])
        #expect(byFeature.allSatisfy { $0["feature"] as? String == Self.mvtTest })
        let both = try await cli.array([
            "assignments", "--user", "u1", "--feature", Self.abTest, "--tenant", "acme", "--json",
        ])
        #expect(both.count == 1)
        let limited = try await cli.array(["assignments", "--limit", "2", "--tenant", "acme", "--json"])
        #expect(limited.compactMap { $0["id"] as? Int } == Array(ids.prefix(2)))

        #expect(
            try await cli.array(["assignments", "--since", "2099-01-01T00:00:00Z", "--tenant", "acme", "--json"])
                .isEmpty)
        #expect(try await cli.array(["assignments", "--since", "2000-01-01", "--tenant", "acme", "--json"]).count == 6)
        #expect(
            try await cli.array(["assignments", "--until", "2000-01-01T00:00:00Z", "--tenant", "acme", "--json"])
                .isEmpty)
        #expect(try await cli.array(["assignments", "--until", "2099-01-01", "--tenant", "acme", "--json"]).count == 6)
        #expect(try await cli.array(["assignments", "--user", "nobody", "--tenant", "acme", "--json"]).isEmpty)

        let text = await cli.run(["assignments", "--since", "2099-01-01", "--tenant", "acme"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("No assignment events match."))

        let badTime = await cli.run(["assignments", "--since", "yesterday", "--tenant", "acme"])
        #expect(badTime.status == 64)
        #expect(badTime.stderr.contains("ISO 8601"))
        #expect(await cli.run(["assignments", "--limit", "0", "--tenant", "acme"]).status == 64)
        #expect(await cli.run(["assignments", "--csv", "--json", "--tenant", "acme"]).status == 64)
    }

    @Test("assignments --csv has the header row and quotes a user id with a comma and a quote (RFC 4180)")
    func assignmentsCSV() async throws {
        try await importExample()
        let user = #"a,b"c"#
        let assigned = try await cli.jsonLines([
            "assign", "--feature", Self.abTest, "--user", user, "--tenant", "acme", "--json",
        ])
        try #require(assigned.count == 1)
        try #require(
            await cli.run(["assign", "--feature", Self.abTest, "--user", "plain", "--tenant", "acme"]).status == 0)

        let csv = await cli.run(["assignments", "--csv", "--tenant", "acme"])
        #expect(csv.status == 0)
        let rows = csv.stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(rows.count == 3)
        #expect(rows.first == "time,user,feature,previous_variation,variation,point,revision,reason,id,rule")
        let quoted = try #require(rows.last)
        let variation = try #require(assigned[0]["variation"] as? String)
        #expect(quoted.contains(#","a,b""c",Example A/B Test,,\#(variation),"#))
        #expect(quoted.hasSuffix(",1,first,1,"))
        #expect(rows[1].contains(",plain,Example A/B Test,,"))
        #expect(rows[1].hasSuffix(",1,first,2,"))
    }

    @Test("assignments stats counts add up to the users assigned, and a time before them gives zero")
    func assignmentStats() async throws {
        try await importExample()
        let users = (1...60).map { "user-\($0)" }.joined(separator: "\n")
        let file = try cli.write(users, to: "users.txt")
        let assigned = try await cli.jsonLines([
            "assign", "--feature", Self.mvtTest, "--users-file", file, "--tenant", "acme", "--json",
        ])
        try #require(assigned.count == 60)

        let stats = try await cli.object([
            "assignments", "stats", "--feature", Self.mvtTest, "--tenant", "acme", "--json",
        ])
        #expect(stats["feature"] as? String == Self.mvtTest)
        #expect(stats["users"] as? Int == 60)
        let variations = try #require(stats["variations"] as? [[String: Any]])
        #expect(variations.map { $0["variation"] as? String } == ["Group A", "Group B", "Group C"])
        #expect(variations.compactMap { $0["users"] as? Int }.reduce(0, +) == 60)
        for entry in variations {
            let expected = assigned.filter { $0["variation"] as? String == entry["variation"] as? String }.count
            #expect(entry["users"] as? Int == expected, "\(entry)")
        }

        let past = try await cli.object([
            "assignments", "stats", "--feature", Self.mvtTest, "--at", "2000-01-01T00:00:00Z", "--tenant", "acme",
            "--json",
        ])
        #expect(past["users"] as? Int == 0)
        #expect((past["variations"] as? [[String: Any]])?.allSatisfy { $0["users"] as? Int == 0 } == true)

        let text = await cli.run(["assignments", "stats", "--feature", Self.mvtTest, "--tenant", "acme"])
        #expect(text.stdout.contains("60 recorded users"))
        #expect(
            await cli.run(["assignments", "stats", "--feature", Self.mvtTest, "--at", "soon", "--tenant", "acme"])
                .status
                == 64)
    }

    // MARK: bias set

    @Test(
        "bias set --dry-run shows the moves and writes nothing; applying writes a bias revision and moves exactly the planned users"
    )
    func biasSet() async throws {
        try await importExample()
        let users = (1...200).map { "user-\($0)" }.joined(separator: "\n")
        let file = try cli.write(users, to: "users.txt")
        let assigned = try await cli.jsonLines([
            "assign", "--feature", Self.abTest, "--users-file", file, "--tenant", "acme", "--json",
        ])
        try #require(assigned.count == 200)
        // 50/50 → 20/80 moves the points in [20, 50) from Group A to Group B, and nobody else.
        let movers = Set(
            assigned.filter { ($0["point"] as? Double).map { $0 >= 20 && $0 < 50 } ?? false }.compactMap {
                $0["user"] as? String
            })
        try #require(!movers.isEmpty)
        let eventsBefore = try await cli.array(["assignments", "--limit", "1000", "--tenant", "acme", "--json"]).count

        let dryRun = try await cli.object([
            "bias", "set", Self.abTest, "20", "80", "--dry-run", "--tenant", "acme", "--json",
        ])
        #expect(dryRun["dryRun"] as? Bool == true)
        #expect(dryRun["applied"] as? Bool == false)
        #expect(dryRun["revision"] as? Int == 2)
        let plan = try #require((dryRun["plans"] as? [[String: Any]])?.first)
        #expect(plan["recordedUsers"] as? Int == 200)
        #expect(plan["movingUsers"] as? Int == movers.count)
        let moves = try #require(plan["moves"] as? [[String: Any]])
        #expect(moves.count == 1)
        #expect(moves.first?["from"] as? String == "Group A")
        #expect(moves.first?["to"] as? String == "Group B")
        #expect(moves.first?["share"] as? Double == 30)
        #expect(moves.first?["recordedUsers"] as? Int == movers.count)
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 1)
        #expect(
            try await cli.object(["feature", "show", Self.abTest, "--tenant", "acme", "--json"])["testBiases"]
                as? [Double]
                == [50, 50])
        #expect(
            try await cli.array(["assignments", "--limit", "1000", "--tenant", "acme", "--json"]).count == eventsBefore)

        let applied = await cli.run([
            "bias", "set", Self.abTest, "20", "80", "--message", "phase 2", "--tenant", "acme",
        ])
        #expect(applied.status == 0)
        #expect(applied.stdout.contains("Group A 50 % → 20 %, Group B 50 % → 80 %"))
        #expect(applied.stdout.contains("Applied as revision 2; \(movers.count) recorded users changed group."))
        let revisions = try await cli.array(["revisions", "--tenant", "acme", "--json"])
        #expect(revisions.count == 2)
        #expect(revisions.first?["kind"] as? String == "bias")
        #expect(revisions.first?["message"] as? String == "phase 2")

        let biasEvents = try await cli.array([
            "assignments", "--feature", Self.abTest, "--limit", "1000", "--tenant", "acme", "--json",
        ])
        .filter { $0["reason"] as? String == "bias" }
        #expect(Set(biasEvents.compactMap { $0["user"] as? String }) == movers)
        #expect(biasEvents.count == movers.count)
        #expect(
            biasEvents.allSatisfy {
                $0["previousVariation"] as? String == "Group A" && $0["variation"] as? String == "Group B"
                    && $0["revision"] as? Int == 2
            })
        let stats = try await cli.object([
            "assignments", "stats", "--feature", Self.abTest, "--tenant", "acme", "--json",
        ])
        let inA = assigned.filter { ($0["point"] as? Double ?? 100) < 20 }.count
        #expect((stats["variations"] as? [[String: Any]])?.map { $0["users"] as? Int } == [inA, 200 - inA])
        // A mover asked again is in their new group.
        let mover = try #require(movers.first)
        let again = try await cli.jsonLines([
            "assign", "--feature", Self.abTest, "--user", mover, "--tenant", "acme", "--json",
        ])
        #expect(again.first?["variation"] as? String == "Group B")
        #expect(again.first?["revision"] as? Int == 2)
    }

    @Test(
        "bias set refuses biases the app would ignore unless --force, and a bias that is not a number is a usage error")
    func biasSetRefusals() async throws {
        try await importExample()
        let short = await cli.run(["bias", "set", Self.abTest, "20", "70", "--tenant", "acme"])
        #expect(short.status == 1)
        #expect(short.stderr.contains("--force"))
        #expect(short.stderr.contains("90"))
        let tooMany = await cli.run(["bias", "set", Self.abTest, "20", "30", "50", "--tenant", "acme"])
        #expect(tooMany.status == 1)
        #expect(tooMany.stderr.contains("--force"))
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 1)

        let notANumber = await cli.run(["bias", "set", Self.abTest, "20", "abc", "--tenant", "acme"])
        #expect(notANumber.status == 64)
        #expect(notANumber.stderr.contains("abc"))
        #expect(await cli.run(["bias", "set", Self.abTest, "nan", "100", "--tenant", "acme"]).status == 64)
        #expect(await cli.run(["bias", "set", Self.abTest, "--tenant", "acme"]).status == 64)
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 1)

        let forced = await cli.run(["bias", "set", Self.abTest, "20", "70", "--force", "--tenant", "acme"])
        #expect(forced.status == 0)
        #expect(forced.stderr.contains("W201"))
        let revisions = try await cli.array(["revisions", "--tenant", "acme", "--json"])
        #expect(revisions.count == 2)
        #expect(revisions.first?["kind"] as? String == "bias")
        let shown = try await cli.object(["feature", "show", Self.abTest, "--tenant", "acme", "--json"])
        #expect(shown["testBiases"] as? [Double] == [20, 70])
        #expect(shown["effectiveBiases"] as? [Double] == [50, 50])

        let flag = await cli.run(["bias", "set", Self.plainFlag, "50", "50", "--tenant", "acme"])
        #expect(flag.status == 1)
        let unknown = await cli.run(["bias", "set", "No Such Test", "50", "50", "--tenant", "acme"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("No Such Test"))
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 2)
    }

    // MARK: rollout, rollback, diff

    @Test(
        "rollout of an on/off test exports a plain flag, enabled; an MVT needs --variation and then keeps its variations"
    )
    func rollout() async throws {
        try await importExample()
        let rolled = await cli.run(["rollout", Self.onOffTest, "--tenant", "acme"])
        #expect(rolled.status == 0)
        #expect(rolled.stdout.contains("Applied as revision 2"))
        let flag = try #require(try await cli.exportedFeature(Self.onOffTest))
        #expect(flag["enabled"] as? Bool == true)
        #expect(flag["test-variations"] == nil)
        #expect(flag["test-biases"] == nil)
        #expect(
            try await cli.object(["feature", "show", Self.onOffTest, "--tenant", "acme", "--json"])["kind"] as? String
                == "flag")
        #expect(
            try await cli.array(["revisions", "--tenant", "acme", "--json"]).first?["kind"] as? String == "rollout")

        let unnamed = await cli.run(["rollout", Self.mvtTest, "--tenant", "acme"])
        #expect(unnamed.status == 1)
        for variation in ["Group A", "Group B", "Group C"] {
            #expect(unnamed.stderr.contains(variation))
        }
        #expect(unnamed.stderr.contains("--variation"))
        let wrong = await cli.run(["rollout", Self.mvtTest, "--variation", "Group Z", "--tenant", "acme"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("Group Z"))
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 2)

        #expect(await cli.run(["rollout", Self.mvtTest, "--variation", "Group B", "--tenant", "acme"]).status == 0)
        let mvt = try #require(try await cli.exportedFeature(Self.mvtTest))
        #expect(mvt["test-variations"] as? [String] == ["Group A", "Group B", "Group C"])
        #expect(mvt["test-biases"] as? [Double] == [0, 100, 0])

        let plain = await cli.run(["rollout", Self.plainFlag, "--tenant", "acme"])
        #expect(plain.status == 1)
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 3)
    }

    @Test("rollback --to 1 makes export byte-identical to export --revision 1; diff lists changes field by field")
    func rollbackAndDiff() async throws {
        try await importExample()
        try #require(await cli.run(["bias", "set", Self.abTest, "20", "80", "--tenant", "acme"]).status == 0)
        try #require(await cli.run(["rollout", Self.onOffTest, "--tenant", "acme"]).status == 0)
        let original = await cli.run(["export", "--tenant", "acme", "--revision", "1"])
        #expect(await cli.run(["export", "--tenant", "acme"]).stdoutBytes != original.stdoutBytes)

        let rolledBack = await cli.run(["rollback", "--to", "1", "--tenant", "acme"])
        #expect(rolledBack.status == 0)
        #expect(rolledBack.stdout.contains("Applied as revision 4"))
        #expect(await cli.run(["export", "--tenant", "acme"]).stdoutBytes == original.stdoutBytes)
        let revisions = try await cli.array(["revisions", "--tenant", "acme", "--json"])
        #expect(revisions.map { $0["kind"] as? String } == ["rollback", "rollout", "bias", "import"])

        let diff = try await cli.array(["diff", "1", "2", "--tenant", "acme", "--json"])
        #expect(diff.count == 1)
        #expect(diff.first?["feature"] as? String == Self.abTest)
        #expect(diff.first?["field"] as? String == "test-biases")
        #expect(diff.first?["change"] as? String == "changed")
        #expect(diff.first?["before"] as? [Double] == [50, 50])
        #expect(diff.first?["after"] as? [Double] == [20, 80])

        let rollout = try await cli.array(["diff", "2", "3", "--tenant", "acme", "--json"])
        #expect(Set(rollout.compactMap { $0["field"] as? String }) == ["test-variations", "test-biases", "labels"])
        #expect(
            rollout.allSatisfy { $0["feature"] as? String == Self.onOffTest && $0["change"] as? String == "removed" })

        #expect(try await cli.array(["diff", "1", "4", "--tenant", "acme", "--json"]).isEmpty)
        #expect(await cli.run(["diff", "1", "4", "--tenant", "acme"]).stdout.contains("same content"))

        let missing = await cli.run(["rollback", "--to", "9", "--tenant", "acme"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("revisions run from 1 to 4"))
        #expect(await cli.run(["rollback", "--to", "0", "--tenant", "acme"]).status == 64)
        #expect(await cli.run(["diff", "1", "9", "--tenant", "acme"]).status == 1)
        #expect(try await cli.array(["revisions", "--tenant", "acme", "--json"]).count == 4)
    }

    // MARK: unlocks and the pinned export

    @Test("unlock, unlocks, lock: the user's export carries their state; the shared export keeps the default")
    func unlocks() async throws {
        try await importExample()
        let unlocked = await cli.run([
            "unlock", Self.unlockFlag, "--user", "bob", "--source", "order-1", "--tenant", "acme",
        ])
        #expect(unlocked.status == 0)
        #expect(unlocked.stdout.contains("now unlocked for bob"))
        let repeated = await cli.run([
            "unlock", Self.unlockFlag, "--user", "bob", "--source", "order-1", "--tenant", "acme",
        ])
        #expect(repeated.stdout.contains("already unlocked"))

        let records = try await cli.array(["unlocks", "--tenant", "acme", "--json"])
        #expect(records.count == 1)
        #expect(records.first?["feature"] as? String == Self.unlockFlag)
        #expect(records.first?["user"] as? String == "bob")
        #expect(records.first?["unlocked"] as? Bool == true)
        #expect(records.first?["source"] as? String == "order-1")
        #expect(try await cli.array(["unlocks", "--user", "carol", "--tenant", "acme", "--json"]).isEmpty)
        #expect(
            try await cli.array(["unlocks", "--feature", Self.unlockFlag, "--tenant", "acme", "--json"]).count == 1)

        #expect(try await cli.exportedFeature(Self.unlockFlag, user: "bob")?["unlocked"] as? Bool == true)
        #expect(try await cli.exportedFeature(Self.unlockFlag, user: "carol")?["unlocked"] as? Bool == false)
        #expect(try await cli.exportedFeature(Self.unlockFlag)?["unlocked"] as? Bool == false)

        let locked = await cli.run(["lock", Self.unlockFlag, "--user", "bob", "--tenant", "acme"])
        #expect(locked.status == 0)
        #expect(locked.stdout.contains("now locked for bob"))
        let after = try await cli.array(["unlocks", "--user", "bob", "--tenant", "acme", "--json"])
        #expect(after.first?["unlocked"] as? Bool == false)
        #expect(try await cli.exportedFeature(Self.unlockFlag, user: "bob")?["unlocked"] as? Bool == false)

        let notUnlockable = await cli.run(["unlock", Self.abTest, "--user", "bob", "--tenant", "acme"])
        #expect(notUnlockable.status == 1)
        #expect(notUnlockable.stderr.contains("not an unlock flag"))
        #expect(await cli.run(["unlock", Self.unlockFlag, "--user", "bad\tid", "--tenant", "acme"]).status == 64)
        #expect(try await cli.array(["unlocks", "--tenant", "acme", "--json"]).count == 1)
    }

    @Test(
        "export --user pins test-variation-assignment on every test to the recorded point; the shared export has none")
    func pinnedExport() async throws {
        try await importExample()
        let known = try await cli.jsonLines([
            "assign", "--feature", Self.mvtTest, "--user", "bob", "--tenant", "acme", "--json",
        ])
        let pinned = await cli.run(["export", "--user", "bob", "--tenant", "acme"])
        #expect(pinned.status == 0)
        let features = try #require(
            (try JSONSerialization.jsonObject(with: Data(pinned.stdoutBytes)) as? [String: Any])?["features"]
                as? [[String: Any]])
        let tests = features.filter { $0["test-variations"] != nil }
        #expect(tests.compactMap { $0["name"] as? String } == [Self.abTest, Self.onOffTest, Self.mvtTest])
        for feature in features {
            let point = feature["test-variation-assignment"] as? Double
            if feature["test-variations"] != nil {
                #expect(point.map { $0 >= 0 && $0 < 100 } == true, "\(feature["name"] ?? "")")
            } else {
                #expect(point == nil, "\(feature["name"] ?? "")")
            }
        }
        let mvt = try #require(features.first { $0["name"] as? String == Self.mvtTest })
        #expect(mvt["test-variation-assignment"] as? Double == known.first?["point"] as? Double)

        // The export records the user's other tests, at the points it wrote.
        let events = try await cli.array(["assignments", "--user", "bob", "--tenant", "acme", "--json"])
        #expect(events.count == 3)
        for test in tests {
            let event = events.first { $0["feature"] as? String == test["name"] as? String }
            #expect(event?["point"] as? Double == test["test-variation-assignment"] as? Double)
        }
        let again = await cli.run(["export", "--user", "bob", "--tenant", "acme"])
        #expect(again.stdoutBytes == pinned.stdoutBytes)
        #expect(try await cli.array(["assignments", "--user", "bob", "--tenant", "acme", "--json"]).count == 3)

        let shared = await cli.run(["export", "--tenant", "acme"])
        #expect(!shared.stdout.contains("test-variation-assignment"))
        #expect(await cli.run(["export", "--user", "bob", "--revision", "1", "--tenant", "acme"]).status == 64)
    }

    // MARK: overrides

    @Test(
        "override puts the pinned point in the variation's range under the biases the app uses; clear returns the user to their own group"
    )
    func overrides() async throws {
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        // Biases adding up to 90 are ignored by the app: three equal thirds, not 10/10/70.
        let file = try cli.write(
            #"{"features": [{"name": "t", "enabled": true, "test-variations": ["a", "b", "c"], "test-biases": [10, 10, 70]}]}"#,
            to: "t.json")
        try #require(await cli.run(["import", file, "--tenant", "acme"]).status == 0)
        let effective = try #require(
            try await cli.object(["feature", "show", "t", "--tenant", "acme", "--json"])["effectiveBiases"] as? [Double]
        )
        try #require(effective.count == 3)
        try #require(effective.allSatisfy { abs($0 - 100.0 / 3) < 1e-6 })

        let own = try #require(
            try await cli.jsonLines(["assign", "--feature", "t", "--user", "qa", "--tenant", "acme", "--json"]).first)
        let ownPoint = try #require(own["point"] as? Double)
        let ownVariation = try #require(own["variation"] as? String)
        // Force the user into a group that is not theirs.
        let forced = ownVariation == "b" ? "c" : "b"
        let forcedIndex = forced == "b" ? 1 : 2
        let forcedLower = effective.prefix(forcedIndex).reduce(0, +)
        let forcedUpper = forcedLower + effective[forcedIndex]

        let set = await cli.run([
            "override", "t", "--user", "qa", "--variation", forced.uppercased(), "--tenant", "acme", "--json",
        ])
        #expect(set.status == 0)
        let setObject = try #require(try JSONSerialization.jsonObject(with: Data(set.stdoutBytes)) as? [String: Any])
        #expect(setObject["variation"] as? String == forced)
        #expect(setObject["override"] as? Bool == true)

        let pinned = try #require(try await cli.exportedFeature("t", user: "qa"))
        let point = try #require(pinned["test-variation-assignment"] as? Double)
        // Under the biases as written, "b" would be 10..<20 and "c" 20..<90.
        #expect(
            point >= forcedLower && point < forcedUpper,
            "\(point) is not in \(forced)'s range \(forcedLower)..<\(forcedUpper)")

        let events = try await cli.array(["assignments", "--user", "qa", "--tenant", "acme", "--json"])
        #expect(events.first?["reason"] as? String == "override")
        #expect(events.first?["previousVariation"] as? String == ownVariation)
        #expect(events.first?["variation"] as? String == forced)

        let cleared = await cli.run(["override", "clear", "t", "--user", "qa", "--tenant", "acme"])
        #expect(cleared.status == 0)
        #expect(cleared.stdout.contains("qa is in \"\(ownVariation)\" of t"))
        #expect(!cleared.stdout.contains("override"))
        let afterClear = try await cli.array(["assignments", "--user", "qa", "--tenant", "acme", "--json"])
        #expect(afterClear.count == events.count + 1)
        #expect(afterClear.first?["previousVariation"] as? String == forced)
        #expect(afterClear.first?["variation"] as? String == ownVariation)
        #expect(try await cli.exportedFeature("t", user: "qa")?["test-variation-assignment"] as? Double == ownPoint)

        let again = await cli.run(["override", "clear", "t", "--user", "qa", "--tenant", "acme"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("no override"))
        #expect(
            try await cli.array(["assignments", "--user", "qa", "--tenant", "acme", "--json"]).count == afterClear.count
        )
    }

    @Test("override refuses a variation the test lacks and a plain flag, writing nothing")
    func overrideRefusals() async throws {
        try await importExample()
        let unknown = await cli.run([
            "override", Self.mvtTest, "--user", "qa", "--variation", "Group Z", "--tenant", "acme",
        ])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("Group Z"))
        #expect(unknown.stderr.contains("Group A"))
        let flag = await cli.run([
            "override", Self.plainFlag, "--user", "qa", "--variation", "Enabled", "--tenant", "acme",
        ])
        #expect(flag.status == 1)
        #expect(flag.stderr.contains("not a test"))
        #expect(try await cli.array(["assignments", "--tenant", "acme", "--json"]).isEmpty)
    }

    /// The MVT's group for a point under its 70/20/10 biases.
    private static func mvtGroup(of point: Double) -> String {
        point < 70 ? "Group A" : point < 90 ? "Group B" : "Group C"
    }
}

extension CLI {
    /// Runs and returns the JSON object printed on stdout.
    fileprivate func object(_ arguments: [String]) async throws -> [String: Any] {
        let result = await run(arguments)
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any] else {
            throw CLIOutputError(arguments: arguments, result: result)
        }
        return object
    }

    /// Runs and returns the JSON array of objects printed on stdout.
    fileprivate func array(_ arguments: [String]) async throws -> [[String: Any]] {
        let result = await run(arguments)
        guard let array = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [[String: Any]] else {
            throw CLIOutputError(arguments: arguments, result: result)
        }
        return array
    }

    /// Runs and returns the JSON objects printed one per line on stdout.
    fileprivate func jsonLines(_ arguments: [String], stdin: [UInt8]? = nil) async throws -> [[String: Any]] {
        let result = await run(arguments, stdin: stdin)
        guard result.status == 0 else { throw CLIOutputError(arguments: arguments, result: result) }
        return try parseLines(result.stdout)
    }

    /// Each line of `text` as a JSON object.
    fileprivate func parseLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw CLIOutputError(
                    arguments: ["<a line that is not a JSON object>"],
                    result: Result(status: 0, stdout: Array(line.utf8), stderr: []))
            }
            return object
        }
    }

    /// One feature of tenant acme's production export, shared or pinned to `user`.
    fileprivate func exportedFeature(_ name: String, user: String? = nil) async throws -> [String: Any]? {
        let arguments = ["export", "--tenant", "acme"] + (user.map { ["--user", $0] } ?? [])
        let document = try await object(arguments)
        return (document["features"] as? [[String: Any]])?.first { $0["name"] as? String == name }
    }
}

/// A run whose standard output was not the JSON expected.
private struct CLIOutputError: Error, CustomStringConvertible {
    let arguments: [String]
    let result: CLI.Result

    var description: String {
        "flagpole \(arguments.joined(separator: " ")) exited \(result.status): stdout \(result.stdout.prefix(500)) stderr \(result.stderr.prefix(500))"
    }
}
