import EndToEndSupport
import Foundation
import Testing

/// `flagpole config` and `flagpole evaluate`, run as a user runs them.
@Suite("flagpole config")
struct ConfigCommandTests {
    static func swiftFeatureConfigsFixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/swiftfeatureconfigs/\(name)").path
    }

    static func demo() async throws -> CLI {
        let cli = try CLI()
        try #require(await cli.run(["demo"]).status == 0)
        return cli
    }

    @Test(
        "SwiftFeatureConfigs' declaration file becomes configs: trailing commas warned of, values typed, keys as the library looks them up"
    )
    func declarations() async throws {
        let cli = try await Self.demo()
        let imported = await cli.run([
            "config", "import", Self.swiftFeatureConfigsFixture("featureConfigs.json"), "--tenant", "demo",
        ])
        #expect(imported.status == 0)
        #expect(
            imported.stderr.components(separatedBy: "comma before").count - 1 == 12, "one warning per trailing comma")
        #expect(imported.stderr.components(separatedBy: "is not the name of its property").count - 1 == 4)
        let configs = try #require(
            try await cli.json(["config", "list", "--tenant", "demo", "--json"]) as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: configs.map { ($0["name"] as! String, $0) })
        #expect(byName["isaEnabledKey"]?["type"] as? String == "bool")
        #expect(byName["navigationBarIsVisible"]?["default"] as? Bool == true)
        #expect(byName["numberOfCellsToDisplaySomeWhere"]?["default"] as? Int == 12)
        #expect(byName["specialFloatValue"]?["type"] as? String == "double")
        #expect(byName["titleStringKey"]?["default"] as? String == "My Default title")

        // A default that isn't of its type is refused with its line and column; nothing is written.
        let before = await cli.run(["revisions", "--tenant", "demo"]).stdout
        let bad = try cli.write(
            """
            {"configCollectionName": "App", "features": [
                {"type": "Int", "name": "count", "default": "12x"}
            ]}
            """, to: "bad.json")
        let refused = await cli.run(["config", "import", bad, "--tenant", "demo"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bad.json:2:49: error:"), "\(refused.stderr)")
        #expect(await cli.run(["revisions", "--tenant", "demo"]).stdout == before)
    }

    @Test("export → import gives the same typed configs: no new revision")
    func roundTrip() async throws {
        let cli = try await Self.demo()
        let exported = await cli.run(["config", "export", "--tenant", "demo", "--output", "configs.json"])
        #expect(exported.status == 0)
        let text = try String(
            contentsOfFile: cli.directory.appendingPathComponent("configs.json").path, encoding: .utf8)
        #expect(text.contains(#""default": 2.0"#) && text.contains(#""default": 15"#))
        let again = await cli.run(["config", "import", "configs.json", "--tenant", "demo"])
        #expect(again.status == 0 && again.stdout.contains("Unchanged"))
    }

    @Test(
        "The override plist parses with Python's plistlib, every value of its type; a user's matches their features.json"
    )
    func plist() async throws {
        let cli = try await Self.demo()
        let user = "demo-user-42"
        let exported = await cli.run(["config", "export", "--format", "plist", "--user", user, "--tenant", "demo"])
        #expect(exported.status == 0)
        let checker = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import plistlib, sys, json
                values = plistlib.loads(sys.stdin.buffer.read())
                types = {key: type(value).__name__ for key, value in values.items()}
                print(json.dumps({"types": types, "values": values}))
                """,
            ], in: cli.directory, stdin: exported.stdoutBytes)
        let (ending, out, err) = checker.finish()
        try #require(ending == .exited(0), "plistlib refused it: \(err)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(
            parsed["types"] as? [String: String] == [
                "mainViewTitle": "str", "numberOfItemsToDisplay": "int", "someFeatureEnabled": "bool",
                "discountRate": "float", "theme": "dict",
            ])
        let values = try #require(parsed["values"] as? [String: Any])
        let pinned = await cli.run(["export", "--tenant", "demo", "--user", user]).stdout
        let group =
            try #require(
                try await cli.json([
                    "evaluate", "--tenant", "demo", "--user", user, "--flag", "Example A/B Test", "--json",
                ])
                    as? [String: Any])["variant"] as? String
        #expect(values["mainViewTitle"] as? String == (group == "Group A" ? "Welcome" : "Hello"))
        #expect(pinned.contains("test-variation-assignment"))
        // Recorded once: the plist, features.json and evaluate all asked for the same user.
        let history = await cli.run(["assignments", "--tenant", "demo", "--user", user, "--json"]).stdout
        #expect(history.components(separatedBy: "\"Example A/B Test\"").count - 1 == 1)
    }

    @Test("A value of the wrong type is refused with exit 1 and writes nothing")
    func wrongType() async throws {
        let cli = try await Self.demo()
        let refused = await cli.run([
            "config", "set", "count", "--type", "int", "--default", "12.5", "--tenant", "demo",
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("expected an integer"))
        #expect(await cli.run(["config", "show", "count", "--tenant", "demo"]).status == 1)
    }

    @Test("diff names the config a change is of")
    func diffNamesTheConfig() async throws {
        let cli = try await Self.demo()
        let set = await cli.run(["config", "set", "count", "--type", "int", "--default", "12", "--tenant", "demo"])
        #expect(set.status == 0)
        let revisions = try #require(
            try await cli.json(["revisions", "--tenant", "demo", "--json"]) as? [[String: Any]])
        let latest = try #require(revisions.first?["number"] as? Int)
        let diff = await cli.run(["diff", "\(latest - 1)", "\(latest)", "--tenant", "demo"])
        #expect(
            diff.stdout.contains(#"+ config "count": {"name":"count","type":"int","default":12}"#), "\(diff.stdout)")
    }
}
