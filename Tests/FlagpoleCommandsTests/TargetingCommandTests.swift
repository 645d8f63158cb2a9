import EndToEndSupport
import Foundation
import Testing

/// `flagpole segment` and `flagpole rule`, run as a user runs them.
@Suite("flagpole segment and rule")
struct TargetingCommandTests {
    @Test(
        "Segments from a users file and clauses; rules that name them; refusals with their place; in-use segments kept")
    func segmentsAndRules() async throws {
        let cli = try CLI()
        try #require(await cli.run(["demo"]).status == 0)
        let ids = try cli.write("beta-1\r\nbeta-2\n\nbeta-3\n", to: "ids.txt")
        let set = await cli.run([
            "segment", "set", "beta-testers", "--users-file", ids, "--description", "Friends and QA",
            "--clause", #"{"attribute": "email", "operator": "endsWith", "values": ["@corp.com"]}"#, "--tenant", "demo",
        ])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("added segment \"beta-testers\""))
        let shown = try #require(
            try await cli.json(["segment", "show", "beta-testers", "--tenant", "demo"]) as? [String: Any])
        #expect(shown["users"] as? [String] == ["beta-1", "beta-2", "beta-3"])
        #expect((shown["clauses"] as? [Any])?.count == 1)

        let rules = try cli.write(
            #"""
            {"rules": [
              {"id": "beta-gets-b", "clauses": [{"operator": "inSegment", "values": ["beta-testers"]}], "serve": {"variation": "Group B"}},
              {"id": "de-5.2", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]},
                  {"attribute": "appVersion", "operator": "versionGreaterThanOrEqual", "values": ["5.2"]}],
               "serve": {"split": [{"variation": "Group A", "weight": 20}, {"variation": "Group B", "weight": 80}]}}
            ]}
            """#, to: "rules.json")
        let dryRun = await cli.run([
            "rule", "set", "Example A/B Test", "--file", rules, "--dry-run", "--tenant", "demo",
        ])
        #expect(dryRun.status == 0 && dryRun.stdout.contains("Would write revision"))
        #expect(
            await cli.run(["rule", "list", "--tenant", "demo"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "{}")
        let applied = await cli.run(["rule", "set", "Example A/B Test", "--file", rules, "--tenant", "demo"])
        #expect(applied.status == 0 && applied.stdout.contains("added rules of \"Example A/B Test\""))
        let listed = try #require(
            try await cli.json(["rule", "list", "--tenant", "demo"]) as? [String: [[String: Any]]])
        #expect(listed["Example A/B Test"]?.map { $0["id"] as? String } == ["beta-gets-b", "de-5.2"])
        let history = try #require(try await cli.json(["revisions", "--tenant", "demo", "--json"]) as? [[String: Any]])
        let latest = try #require(history.first?["number"] as? Int)
        let diff = await cli.run(["diff", "\(latest - 1)", "\(latest)", "--tenant", "demo"]).stdout
        #expect(diff.contains(#"+ "Example A/B Test" rules: [{"id":"beta-gets-b""#), "\(diff)")

        // A bad operator: refused at its line and column, nothing written.
        let revisions = await cli.run(["revisions", "--tenant", "demo"]).stdout
        let bad = try cli.write(
            """
            {"rules": [
              {"id": "r", "clauses": [{"attribute": "age", "operator": "olderThan", "values": [18]}], "serve": {"variation": "Group A"}}
            ]}
            """, to: "bad.json")
        let refused = await cli.run(["rule", "set", "Example A/B Test", "--file", bad, "--tenant", "demo"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.json:2:60: error: unknown operator \"olderThan\""), "\(refused.stderr)")
        // A variation the feature doesn't have: refused by the store, nothing written.
        let ghost = try cli.write(#"{"rules": [{"id": "r", "serve": {"variation": "Group Z"}}]}"#, to: "ghost.json")
        let unknown = await cli.run(["rule", "set", "Example A/B Test", "--file", ghost, "--tenant", "demo"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no variation \"Group Z\""), "\(unknown.stderr)")
        #expect(await cli.run(["revisions", "--tenant", "demo"]).stdout == revisions)

        // A segment file is read as written: its errors point into it.
        let segmentFile = try cli.write(
            """
            {"name": "corp",
             "users": ["a", ""]}
            """, to: "corp.json")
        let badSegment = await cli.run(["segment", "set", "corp", "--file", segmentFile, "--tenant", "demo"])
        #expect(badSegment.status == 1)
        #expect(badSegment.stderr.contains("corp.json:2:17: error: a user id"), "\(badSegment.stderr)")

        // A segment a rule names stays; without the rules it goes.
        let inUse = await cli.run(["segment", "delete", "beta-testers", "--tenant", "demo"])
        #expect(inUse.status == 1 && inUse.stderr.contains("Example A/B Test/beta-gets-b"), "\(inUse.stderr)")
        #expect(await cli.run(["rule", "set", "Example A/B Test", "--clear", "--tenant", "demo"]).status == 0)
        #expect(await cli.run(["segment", "delete", "beta-testers", "--tenant", "demo"]).status == 0)
        #expect(await cli.run(["segment", "list", "--tenant", "demo"]).stdout.contains("No segments"))
    }

    @Test(
        "evaluate --attr decides by rule and records; the plan names who moves and the apps that stay; user forget leaves no trace"
    )
    func evaluatePlanAndForget() async throws {
        let cli = try CLI()
        try #require(await cli.run(["demo"]).status == 0)
        let rules = try cli.write(
            #"{"rules": [{"id": "germany", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "Group B"}}]}"#,
            to: "rules.json")
        // Users recorded as followers (evaluate) and as apps (export --user), all German.
        for index in 0..<20 {
            let evaluated = await cli.run([
                "evaluate", "--user", "cli-\(index)", "--attr", "country=DE", "--flag", "Example A/B Test", "--tenant",
                "demo",
            ])
            #expect(evaluated.status == 0, "\(evaluated.stderr)")
            #expect(await cli.run(["export", "--user", "app-\(index)", "--tenant", "demo"]).status == 0)
        }
        let plan = await cli.run(["rule", "set", "Example A/B Test", "--file", rules, "--dry-run", "--tenant", "demo"])
        #expect(plan.status == 0, "\(plan.stderr)")
        // Some of the 20 followers sit in Group A: they would move; the apps never do.
        #expect(plan.stdout.contains("Group A → Group B"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("app-"), "\(plan.stdout)")
        let applied = await cli.run(["rule", "set", "Example A/B Test", "--file", rules, "--tenant", "demo"])
        #expect(applied.status == 0)
        let table = await cli.run([
            "evaluate", "--user", "cli-0", "--flag", "Example A/B Test", "--tenant", "demo", "--json",
        ]).stdout
        #expect(table.contains(#""variant":"Group B""#) && table.contains(#""rule":"germany""#), "\(table)")

        // As a Bucketeer app gets it: the rule's id as the SDK's RULE, values as text.
        let bucketeer = await cli.run([
            "evaluate", "--client", "bucketeer", "--user", "cli-0", "--attr", "country=DE", "--tenant", "demo",
            "--json",
        ])
        #expect(bucketeer.status == 0, "\(bucketeer.stderr)")
        #expect(
            bucketeer.stdout.contains(
                #""variationValue":"Group B","reason":{"type":"RULE","ruleId":"germany"}"#), "\(bucketeer.stdout)")
        #expect(bucketeer.stdout.contains(#""forceUpdate":true"#))
        let refused = await cli.run(["evaluate", "--client", "bucketeer", "--tenant", "demo"])
        #expect(refused.status != 0 && refused.stderr.contains("--user"), "\(refused.stderr)")

        let forgotten = try #require(
            try await cli.json(["user", "forget", "cli-0", "--tenant", "demo", "--json"]) as? [String: Any])
        let deleted = try #require(forgotten["deleted"] as? [String: Int])
        #expect(deleted["assignments"]! >= 1 && deleted["attributes"] == 1 && deleted["assignmentEvents"]! >= 1)
        let history = await cli.run(["assignments", "--user", "cli-0", "--tenant", "demo", "--json"]).stdout
        #expect(history.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(history)")
        let again = try #require(
            try await cli.json(["user", "forget", "cli-0", "--tenant", "demo", "--json"]) as? [String: Any])
        #expect((again["deleted"] as? [String: Int])?.values.allSatisfy { $0 == 0 } == true)
    }

    @Test("evaluate --attr keeps each value as text, as a query parameter: 5.10 stays 5.10, 007 stays 007")
    func attributesAreText() async throws {
        let cli = try CLI()
        try #require(await cli.run(["demo"]).status == 0)
        let rules = try cli.write(
            #"{"rules": [{"id": "old-app", "clauses": [{"attribute": "appVersion", "operator": "versionLessThan", "values": ["5.9"]}], "serve": {"variation": "Group B"}}]}"#,
            to: "rules.json")
        #expect(await cli.run(["rule", "set", "Example A/B Test", "--file", rules, "--tenant", "demo"]).status == 0)
        let evaluated = await cli.run([
            "evaluate", "--user", "u-510", "--attr", "appVersion=5.10", "--attr", "zip=007", "--flag",
            "Example A/B Test", "--tenant", "demo", "--json",
        ])
        #expect(evaluated.status == 0, "\(evaluated.stderr)")
        // 5.10 is above 5.9: the rule doesn't hold, as it doesn't for OFREP's "5.10".
        #expect(!evaluated.stdout.contains(#""rule":"old-app""#), "\(evaluated.stdout)")
        let kept = try SQLiteShell(databasePath: cli.databasePath).text(
            "SELECT attributes FROM user_attributes WHERE user_id = 'u-510'")
        #expect(kept.contains(#""appVersion":"5.10""#) && kept.contains(#""zip":"007""#), "\(kept)")
        let older = await cli.run([
            "evaluate", "--user", "u-58", "--attr", "appVersion=5.8", "--flag", "Example A/B Test", "--tenant", "demo",
            "--json",
        ])
        #expect(older.stdout.contains(#""rule":"old-app""#), "\(older.stdout)")
    }
}
