import EndToEndSupport
import Foundation
import Testing

/// What a team regenerating SwiftFeatureConfigs' declaration file sees, and what no write may
/// serve to its apps, run as a user runs `flagpole`.
@Suite("flagpole config for SwiftFeatureConfigs apps")
struct DeclaredConfigCommandTests {
    static let fixture = ConfigCommandTests.swiftFeatureConfigsFixture("featureConfigs.json")

    static func declared() async throws -> CLI {
        let cli = try await ConfigCommandTests.demo()
        try #require(await cli.run(["config", "import", fixture, "--tenant", "demo"]).status == 0)
        return cli
    }

    static func config(_ cli: CLI, _ name: String) async throws -> [String: Any] {
        try #require(try await cli.json(["config", "show", name, "--tenant", "demo", "--json"]) as? [String: Any])
    }

    @Test("A JSON null in a json config is refused on the command line and in a configs file: nothing is written")
    func nullRefused() async throws {
        let cli = try await ConfigCommandTests.demo()
        let before = await cli.run(["revisions", "--tenant", "demo"]).stdout
        let set = await cli.run([
            "config", "set", "nulls", "--type", "json", "--default", #"{"a":null}"#, "--tenant", "demo",
        ])
        #expect(set.status == 1)
        #expect(set.stderr.contains("null") && set.stderr.contains("UserDefaults"), "\(set.stderr)")
        let file = try cli.write(
            #"{"configs": [{"name": "nulls", "type": "json", "default": {"a": {"b": null}}}]}"#, to: "nulls.json")
        let imported = await cli.run(["config", "import", file, "--tenant", "demo"])
        #expect(imported.status == 1)
        #expect(imported.stderr.contains("nulls.json:1:") && imported.stderr.contains("/configs/0/default/a/b"))
        #expect(await cli.run(["revisions", "--tenant", "demo"]).stdout == before)
    }

    @Test("A bell character and a number too small for a double are refused with the reason")
    func controlAndUnderflowRefused() async throws {
        let cli = try await ConfigCommandTests.demo()
        let bell = await cli.run([
            "config", "set", "title", "--type", "string", "--default", "ding\u{7}", "--tenant", "demo",
        ])
        #expect(bell.status == 1 && bell.stderr.contains("U+0007") && bell.stderr.contains("plist"), "\(bell.stderr)")
        let tiny = await cli.run([
            "config", "set", "tiny", "--type", "double", "--default", "1e-400", "--tenant", "demo",
        ])
        #expect(tiny.status == 1 && tiny.stderr.contains("too small"), "\(tiny.stderr)")
        let file = try cli.write(
            #"{"configs": [{"name": "tiny", "type": "double", "default": 1e-400}]}"#, to: "tiny.json")
        #expect(await cli.run(["config", "import", file, "--tenant", "demo"]).status == 1)
    }

    @Test("A configs file whose value a declared type refuses names its line and column, as a null does")
    func declaredTypeRefusalsLocated() async throws {
        let cli = try await Self.declared()
        let file = try cli.write(
            """
            {"configs": [
              {"name": "numberOfCellsToDisplaySomeWhere", "type": "int", "default": 12},
              {"name": "specialFloatValue", "type": "double",
               "default": 0.1}
            ]}
            """, to: "declared.json")
        let imported = await cli.run(["config", "import", file, "--tenant", "demo"])
        #expect(imported.status == 1)
        #expect(
            imported.stderr.contains("declared.json:4:15: error:") && imported.stderr.contains("Float"),
            "\(imported.stderr)")
    }

    @Test("A json config nested deeper than 32 levels is refused on the command line; the environment keeps serving")
    func deepJSONRefused() async throws {
        let cli = try await ConfigCommandTests.demo()
        let deep = String(repeating: #"{"a":"#, count: 510) + "1" + String(repeating: "}", count: 510)
        let set = await cli.run(["config", "set", "deep", "--type", "json", "--default=\(deep)", "--tenant", "demo"])
        #expect(set.status == 1 && set.stderr.contains("deeper than 32 levels"), "\(set.stderr.prefix(300))")
        #expect(await cli.run(["config", "list", "--tenant", "demo"]).status == 0)
        #expect(await cli.run(["export", "--all", "--dir", "cdn"]).status == 0)
    }

    @Test("config import --release records what a release declares; its dictionary and plist serve only that")
    func releases() async throws {
        let cli = try await ConfigCommandTests.demo()
        let imported = await cli.run(["config", "import", Self.fixture, "--release", "5.2", "--tenant", "demo"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stdout.contains(
                "release 5.2: configs.json?release=5.2 serves 8 config(s), leaving out isaEnabledKey"))
        #expect(
            imported.stderr.contains("perform(Selector(\"titleStringKey\"))")
                && imported.stderr.contains("@objcMembers"))
        let dictionary = try #require(
            try await cli.json(["config", "export", "--format", "dictionary", "--release", "5.2", "--tenant", "demo"])
                as? [String: Any])
        #expect(
            dictionary.count == 8 && dictionary["navigationBarIsVisible"] != nil && dictionary["isaEnabledKey"] == nil)
        let plist = await cli.run(["config", "export", "--format", "plist", "--release", "5.2", "--tenant", "demo"])
        #expect(plist.stdout.contains("<key>navigationBarIsVisible</key>") && !plist.stdout.contains("titleStringKey"))
        let unknown = await cli.run(["config", "export", "--format", "plist", "--release", "9.9", "--tenant", "demo"])
        #expect(unknown.status == 1 && unknown.stderr.contains("--release 9.9"), "\(unknown.stderr)")
        let file = try cli.write(#"{"configs": []}"#, to: "configs.json")
        #expect(await cli.run(["config", "import", file, "--release", "5.2", "--tenant", "demo"]).status == 1)
    }

    @Test("A declared Int retyped to a string is refused unless forced; a Float refuses 0.1 and takes 0.5")
    func declaredTypesEnforced() async throws {
        let cli = try await Self.declared()
        let retype = await cli.run([
            "config", "set", "numberOfCellsToDisplaySomeWhere", "--type", "string", "--default", "15", "--tenant",
            "demo",
        ])
        #expect(retype.status == 1)
        #expect(retype.stderr.contains("as? Int") && retype.stderr.contains("--force"), "\(retype.stderr)")
        await #expect(try Self.config(cli, "numberOfCellsToDisplaySomeWhere")["type"] as? String == "int")
        let float = await cli.run(["config", "set", "specialFloatValue", "--default", "0.1", "--tenant", "demo"])
        #expect(float.status == 1 && float.stderr.contains("Float"), "\(float.stderr)")
        #expect(
            await cli.run(["config", "set", "specialFloatValue", "--default", "0.5", "--tenant", "demo"]).status == 0)
        let forced = await cli.run([
            "config", "set", "numberOfCellsToDisplaySomeWhere", "--type", "string", "--default", "15", "--force",
            "--tenant", "demo",
        ])
        #expect(forced.status == 0, "\(forced.stderr)")
        let shown = await cli.run(["config", "show", "numberOfCellsToDisplaySomeWhere", "--tenant", "demo"]).stdout
        #expect(shown.contains("declared      Int, default 12"), "\(shown)")
    }

    @Test(
        "Regenerating the declaration file: the unchanged file changes nothing; a changed one is planned, then merged keeping the team's edits"
    )
    func regenerating() async throws {
        let cli = try await Self.declared()
        // The team's edits.
        #expect(
            await cli.run([
                "config", "set", "numberOfCellsToDisplaySomeWhere", "--default", "20", "--tag", "ios",
                "--description", "Cells on the home screen", "--tenant", "demo",
            ]).status == 0)
        let again = await cli.run(["config", "import", Self.fixture, "--tenant", "demo"])
        #expect(again.status == 0 && again.stdout.contains("12 declared config(s) unchanged"))
        #expect(again.stdout.contains("Unchanged"), "\(again.stdout)")
        await #expect(try Self.config(cli, "numberOfCellsToDisplaySomeWhere")["default"] as? Int == 20)

        // The app's next release: a new default for two configs, one renamed, one added.
        var text = try String(contentsOfFile: Self.fixture, encoding: .utf8)
        text = text.replacingOccurrences(of: #""default":"12""#, with: #""default":"14""#)
        text = text.replacingOccurrences(of: #""default":"My Default title""#, with: #""default":"Welcome""#)
        text = text.replacingOccurrences(of: #""name":"otherThingEnabled7""#, with: #""name":"otherThingEnabled8""#)
        text = text.replacingOccurrences(
            of: #""features":["#, with: #""features":[{"type":"Double","name":"ratio","default":"1.5"},"#)
        let next = try cli.write(text, to: "next.json")
        let before = await cli.run(["revisions", "--tenant", "demo"]).stdout
        let plan = await cli.run(["config", "import", next, "--dry-run", "--tenant", "demo"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout.contains("~ numberOfCellsToDisplaySomeWhere: keeps the team's default 20 (declared 12 → 14)"))
        #expect(plan.stdout.contains(#"~ titleStringKey: default "My Default title" → "Welcome", as declared"#))
        #expect(plan.stdout.contains("- otherThingEnabled7: no longer declared: still served"))
        #expect(plan.stdout.contains("+ ratio: Double, default 1.5"))
        #expect(plan.stdout.contains("dry run: nothing written"))
        #expect(await cli.run(["revisions", "--tenant", "demo"]).stdout == before)

        #expect(await cli.run(["config", "import", next, "--tenant", "demo"]).status == 0)
        let cells = try await Self.config(cli, "numberOfCellsToDisplaySomeWhere")
        #expect(cells["default"] as? Int == 20 && cells["tags"] as? [String] == ["ios"])
        #expect(cells["description"] as? String == "Cells on the home screen")
        await #expect(try Self.config(cli, "titleStringKey")["default"] as? String == "Welcome")
        let withdrawn = try await Self.config(cli, "otherThingEnabled7")
        #expect((withdrawn["declared"] as? [String: Any])?["withdrawn"] as? Bool == true)
        let listed = await cli.run(["config", "list", "--tenant", "demo"]).stdout
        #expect(listed.contains("(no longer declared)"))
        let served = await cli.run(["config", "export", "--format", "dictionary", "--tenant", "demo"]).stdout
        #expect(served.contains(#""otherThingEnabled7": true"#), "still served")
    }

    @Test("config show and list --json write a double's 2.0 as 2.0")
    func doublesKeepTheirPoint() async throws {
        let cli = try await ConfigCommandTests.demo()
        #expect(
            await cli.run(["config", "set", "ratio", "--type", "double", "--default", "2", "--tenant", "demo"]).status
                == 0)
        #expect(
            await cli.run(["config", "show", "ratio", "--tenant", "demo", "--json"]).stdout.contains(#""default": 2.0"#)
        )
        #expect(await cli.run(["config", "list", "--tenant", "demo", "--json"]).stdout.contains(#""default": 2.0"#))
    }

    @Test("A null an earlier version stored is reported by migrate and config list, and served without it")
    func storedNullReported() async throws {
        let cli = try await ConfigCommandTests.demo()
        #expect(
            await cli.run(["config", "set", "theme", "--type", "json", "--default", #"{"a":1}"#, "--tenant", "demo"])
                .status
                == 0)
        // What an earlier version let through, written straight into the newest revision.
        try SQLiteShell(databasePath: cli.databasePath).execute(
            #"UPDATE revisions SET configs = CAST(replace(CAST(configs AS TEXT), '{"a":1}', '{"a":null,"b":2}') AS BLOB) WHERE number = (SELECT max(number) FROM revisions)"#
        )
        let migrate = await cli.run(["migrate"])
        #expect(migrate.status == 0)
        #expect(
            migrate.stderr.contains("demo/production: config \"theme\"")
                && migrate.stderr.contains("served without it"), "\(migrate.stderr)")
        let list = await cli.run(["config", "list", "--tenant", "demo"])
        #expect(list.stderr.contains("/configs/") && list.stderr.contains("null"), "\(list.stderr)")
        let served = await cli.run(["config", "export", "--format", "dictionary", "--tenant", "demo"]).stdout
        #expect(served.contains(#""theme": {"b":2}"#), "\(served)")
    }
}
