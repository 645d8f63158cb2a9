import EndToEndSupport
import FlagpoleCore
import FlagpoleStore
import Foundation
import Testing

/// The command line on a real SQLite file in a temporary directory.
@Suite("flagpole command line")
struct CommandLineTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    // MARK: validate

    @Test("The help says what the commands do now: rules apply, assign applies them, either database")
    func helpTellsTheTruth() async throws {
        let cli = try CLI()
        let top = await cli.run(["--help"]).stdout
        #expect(!top.contains("Every command works on one SQLite file") && top.contains("PostgreSQL"), "\(top)")
        for command in [["rule", "--help"], ["segment", "--help"]] {
            let help = await cli.run(command).stdout
            #expect(!help.contains("not applied to users yet") && help.contains("planned"), "\(command): \(help)")
        }
        let assign = await cli.run(["assign", "--help"]).stdout
        #expect(assign.contains("rules"), "\(assign)")
        let evaluate = await cli.run(["evaluate", "--help"]).stdout
        #expect(evaluate.contains("as text"), "\(evaluate)")
    }

    @Test("validate accepts a real file and refuses the one with a comment at its line and column")
    func validateRealFiles() async throws {
        let valid = await cli.run(["validate", CLI.fixture("rwbutler-HEAD-Features.json")])
        #expect(valid.status == 0)
        #expect(valid.stdout.contains("valid (6 features), no problems"))

        let commented = CLI.fixture("vantientu1703-f305791-Features-with-comment.json")
        let invalid = await cli.run(["validate", commented])
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("\(commented):7:9: error: E100"))
        #expect(invalid.stderr.contains("fix: "))
        #expect(invalid.stdout.contains("invalid, 1 error, 0 warnings"))
    }

    @Test("validate --json prints exactly valid and diagnostics with the eight fields")
    func validateJSON() async throws {
        let file = try cli.write(
            #"{"features": [{"name": "a", "enabled": "true"}, {"name": "b", "test-variations": ["x"]}]}"#, to: "f.json")
        let result = await cli.run(["validate", file, "--json"])
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
        #expect(Set(object.keys) == ["valid", "diagnostics"])
        #expect(object["valid"] as? Bool == false)
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 2)
        for diagnostic in diagnostics {
            #expect(
                Set(diagnostic.keys) == ["severity", "code", "message", "feature", "pointer", "line", "column", "fix"])
        }
        #expect(diagnostics[0]["code"] as? String == "E112")
        #expect(diagnostics[0]["severity"] as? String == "error")
        #expect(diagnostics[0]["feature"] as? String == "a")
        #expect(diagnostics[0]["pointer"] as? String == "/features/0/enabled")
        #expect(diagnostics[0]["line"] as? Int == 1)
        #expect(diagnostics[0]["column"] as? Int == 40)
        #expect(diagnostics[1]["code"] as? String == "W230")
        #expect(diagnostics[1]["severity"] as? String == "warning")
    }

    @Test("validate reads standard input, and needs no database")
    func validateStandardInput() async throws {
        let result = await cli.run(["validate", "-"], stdin: Array(#"[{"name": "a"}]"#.utf8))
        #expect(result.status == 0)
        #expect(!FileManager.default.fileExists(atPath: cli.databasePath))
    }

    // MARK: tenants and environments

    @Test("tenant and env commands create and list, in text and JSON")
    func tenantsAndEnvironments() async throws {
        #expect(await cli.run(["tenant", "create", "acme", "--name", "Acme Inc."]).status == 0)
        #expect(await cli.run(["env", "create", "staging", "--tenant", "acme"]).status == 0)

        let tenants = try #require(try await cli.json(["tenant", "list", "--json"]) as? [[String: Any]])
        #expect(tenants.map { $0["slug"] as? String } == ["acme"])
        #expect(tenants.first?["name"] as? String == "Acme Inc.")
        #expect(tenants.first?["environments"] as? [String] == ["production", "staging"])

        let environments = try #require(
            try await cli.json(["env", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(environments.map { $0["name"] as? String } == ["production", "staging"])
        #expect(environments.allSatisfy { $0["revision"] is NSNull })

        let duplicate = await cli.run(["tenant", "create", "acme"])
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr.contains("already exists"))
    }

    @Test("env mark sets the colour and the reason flag; a bad colour is a usage error that says how to write one")
    func markEnvironment() async throws {
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        let marked = await cli.run([
            "env", "mark", "production", "--tenant", "acme", "--colour", "#C0392B", "--requires-reason",
        ])
        #expect(marked.status == 0, "\(marked.stderr)")
        #expect(marked.stdout.contains("acme/production: colour #c0392b, changes need a reason."))
        let listed = try #require(
            try await cli.json(["env", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(listed.first?["colour"] as? String == "#c0392b")
        #expect(listed.first?["requiresReason"] as? Bool == true)
        #expect(await cli.run(["env", "list", "--tenant", "acme"]).stdout.contains("#c0392b"))

        let cleared = await cli.run([
            "env", "mark", "production", "--tenant", "acme", "--no-colour", "--no-requires-reason",
        ])
        #expect(cleared.stdout.contains("colour none, changes need no reason."))

        let bad = await cli.run(["env", "mark", "production", "--tenant", "acme", "--colour", "red"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--colour: The environment's colour \"red\" is not a colour"))
        #expect(bad.stderr.contains("#c0392b"))
        let nothing = await cli.run(["env", "mark", "production", "--tenant", "acme"])
        #expect(nothing.status == 64)
        #expect(nothing.stderr.contains("Nothing to change"))
        let listedAgain = try #require(
            try await cli.json(["env", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(listedAgain.first?["colour"] is NSNull)
    }

    @Test("env create --private and env access make an environment private or public; env list shows which")
    func environmentAccess() async throws {
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        let created = await cli.run(["env", "create", "staging", "--tenant", "acme", "--private"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Created private environment acme/staging."))
        func access() async throws -> [String: Bool] {
            let listed = try #require(
                try await cli.json(["env", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
            return Dictionary(
                uniqueKeysWithValues: listed.map { ($0["name"] as? String ?? "", $0["private"] as? Bool ?? false) })
        }
        #expect(try await access() == ["production": false, "staging": true])
        let table = await cli.run(["env", "list", "--tenant", "acme"]).stdout
        #expect(table.contains("ACCESS") && table.contains("private") && table.contains("public"), "\(table)")

        #expect(await cli.run(["env", "access", "production", "--tenant", "acme", "--private"]).status == 0)
        let opened = await cli.run(["env", "access", "staging", "--tenant", "acme", "--public"])
        #expect(opened.stdout.contains("acme/staging is public"), "\(opened.stderr)")
        #expect(try await access() == ["production": true, "staging": false])
        let neither = await cli.run(["env", "access", "staging", "--tenant", "acme"])
        #expect(neither.status == 64 && neither.stderr.contains("--private"), "\(neither.stderr)")
    }

    @Test("Where changes need a reason, a command that writes a revision needs --message: exit 1, nothing written")
    func reasonRequired() async throws {
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        let file = CLI.fixture("rwbutler-HEAD-Features.json")
        #expect(await cli.run(["import", file, "--tenant", "acme"]).status == 0)
        #expect(await cli.run(["env", "mark", "production", "--tenant", "acme", "--requires-reason"]).status == 0)
        let bias = ["bias", "set", "Example A/B Test", "30", "70", "--tenant", "acme"]
        let refused = await cli.run(bias)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("acme/production asks a reason for every change: nothing was written"))
        #expect(refused.stderr.contains("--message") && refused.stderr.contains("--no-requires-reason"))
        #expect(await cli.run(bias + ["--dry-run"]).status == 0)
        let applied = await cli.run(bias + ["--message", "phase 2 of the roll-out"])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(await cli.run(["rollback", "--to", "1", "--tenant", "acme"]).status == 1)
        let revisions = try #require(
            try await cli.json(["revisions", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(revisions.map { $0["message"] as? String }.contains("phase 2 of the roll-out"))
        #expect(revisions.count == 2)
    }

    @Test("env list says under its table which environments refused event batches lately, by cause and key")
    func refusedEventBatches() async throws {
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        #expect(await cli.run(["env", "create", "staging", "--tenant", "acme"]).status == 0)
        // What a server adds every few seconds.
        let production = EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: .production)
        try await FeatureStore.open(atPath: cli.databasePath).outbound.addRefusedEventBatches(
            [
                RefusedBatchKey(path: production, cause: .unknownKey, keyPrefix: "fp_1a2b3c4d"): 9,
                RefusedBatchKey(path: production, cause: .malformed, keyPrefix: ""): 1,
            ], now: Date())
        let table = await cli.run(["env", "list", "--tenant", "acme"]).stdout
        #expect(
            table.contains(
                "production: 10 event batches refused in the last 24 h: unknown key 9 (fp_1a2b3c4d… 9), malformed 1 (no key 1)."
            ), "\(table)")
        #expect(!table.contains("staging:"))
        let listed = try #require(
            try await cli.json(["env", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
        let refused = listed.first { $0["name"] as? String == "production" }?["refusedEventBatches"] as? [String: Any]
        #expect((refused?["unknown_key"] as? [String: Int]) == ["fp_1a2b3c4d": 9])
        #expect(
            (listed.first { $0["name"] as? String == "staging" }?["refusedEventBatches"] as? [String: Any])?.isEmpty
                == true)
    }

    @Test(
        "results --set-control names the test's control for later readouts; --clear-control goes back; a wrong name changes nothing"
    )
    func namedControl() async throws {
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        #expect(await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        #expect(
            await cli.run(["assign", "--feature", "Example A/B Test", "--user", "u-1", "--tenant", "acme"]).status == 0)
        let named = await cli.run(["results", "Example A/B Test", "--set-control", "Group B", "--tenant", "acme"])
        #expect(named.status == 0 && named.stdout.contains("Control: Group B, named for this test"), "\(named.stderr)")
        let json = try #require(
            try await cli.json(["results", "Example A/B Test", "--tenant", "acme", "--json"]) as? [String: Any])
        #expect(json["namedControl"] as? String == "Group B")
        let wrong = await cli.run(["results", "Example A/B Test", "--set-control", "Group Z", "--tenant", "acme"])
        #expect(wrong.status == 1 && wrong.stderr.contains("can't be its control"), "\(wrong.stderr)")
        let both = await cli.run(
            ["results", "Example A/B Test", "--set-control", "Group A", "--clear-control", "--tenant", "acme"])
        #expect(both.status == 64)
        let cleared = await cli.run(["results", "Example A/B Test", "--clear-control", "--tenant", "acme"])
        #expect(cleared.status == 0 && !cleared.stdout.contains("named for this test"))
    }

    @Test("A bad argument is a usage error (exit 64); an unknown tenant says how to create it (exit 1)")
    func errorsAndExitCodes() async throws {
        let badSlug = await cli.run(["tenant", "create", "Not A Slug"])
        #expect(badSlug.status == 64)
        #expect(badSlug.stderr.contains("lowercase letters, digits and hyphens"))
        #expect(badSlug.stderr.contains("Usage: flagpole tenant create"))

        let badEnvironment = await cli.run(["export", "--tenant", "acme", "--env", "Prod"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.contains("Usage: flagpole export"))
        #expect(await cli.run(["export", "--all", "--dir", "cdn", "--env", "staging"]).status == 64)

        // Read-only commands on a database that does not exist fail without creating it.
        #expect(await cli.run(["tenant", "list"]).status == 1)
        #expect(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme", "--dry-run"])
                .status
                == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.databasePath))

        let missingOption = await cli.run(["import", "x.json"])
        #expect(missingOption.status == 64)

        let missingFile = await cli.run(["validate", "does-not-exist.json"])
        #expect(missingFile.status == 64)
        #expect(missingFile.stderr.contains("no such file"))

        await cli.run(["tenant", "create", "acme"])
        let unknownTenant = await cli.run(["export", "--tenant", "nobody"])
        #expect(unknownTenant.status == 1)
        #expect(unknownTenant.stderr.contains("flagpole tenant create nobody"))

        let unknownEnvironment = await cli.run(["export", "--tenant", "acme", "--env", "qa"])
        #expect(unknownEnvironment.status == 1)
        #expect(unknownEnvironment.stderr.contains("flagpole env create qa --tenant acme"))

        let noRevision = await cli.run(["export", "--tenant", "acme"])
        #expect(noRevision.status == 1)
        #expect(noRevision.stderr.contains("no revision yet"))
    }

    // MARK: import and export

    @Test("import then export: byte-identical twice, equal to the canonical rendering, and stable on re-import")
    func importExportRoundTrip() async throws {
        await cli.run(["tenant", "create", "acme"])
        let fixture = CLI.fixture("rwbutler-HEAD-Features.json")
        let imported = await cli.run(["import", fixture, "--tenant", "acme", "--message", "first"])
        #expect(imported.status == 0)
        #expect(imported.stdout.contains("as revision 1"))

        let first = await cli.run(["export", "--tenant", "acme"])
        let second = await cli.run(["export", "--tenant", "acme"])
        #expect(first.status == 0)
        #expect(first.stdoutBytes == second.stdoutBytes)
        #expect(
            first.stdout.hasPrefix("{\n    \"features\": [\n        {\n            \"name\": \"Example Feature Flag\""))

        // The export imports back to the same state: no new revision.
        let exportFile = try cli.write(first.stdout, to: "export.json")
        let reimport = await cli.run(["import", exportFile, "--tenant", "acme"])
        #expect(reimport.stdout.contains("identical to revision 1"))
        let revisions = try #require(
            try await cli.json(["revisions", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(revisions.count == 1)
        #expect(revisions.first?["message"] as? String == "first")
        #expect(revisions.first?["actor"] as? String == "cli:e2e")

        // Compact output parses to the same JSON.
        let compact = await cli.run(["export", "--tenant", "acme", "--compact"])
        #expect(!compact.stdout.contains("\n    "))
        let pretty = try JSONSerialization.jsonObject(with: Data(first.stdoutBytes)) as? NSDictionary
        let dense = try JSONSerialization.jsonObject(with: Data(compact.stdoutBytes)) as? NSDictionary
        #expect(pretty == dense)
    }

    @Test(
        "import reads standard input, --dry-run writes nothing, --strict refuses warnings, refusals print diagnostics")
    func importModes() async throws {
        await cli.run(["tenant", "create", "acme"])
        let withWarning = Array(
            #"{"features": [{"name": "a", "test-variations": ["x", "y"], "test-biases": [50, 49]}]}"#.utf8)

        let dryRun = await cli.run(["import", "-", "--tenant", "acme", "--dry-run"], stdin: withWarning)
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout.contains("would create revision 1"))
        #expect(dryRun.stderr.contains("W201"))
        #expect(await cli.run(["revisions", "--tenant", "acme"]).stdout.contains("no revisions yet"))

        let strict = await cli.run(["import", "-", "--tenant", "acme", "--strict"], stdin: withWarning)
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("<stdin>:1:75: warning: W201"))
        #expect(strict.stderr.contains("refused under --strict"))

        let refused = await cli.run(
            ["import", "-", "--tenant", "acme"], stdin: Array(#"{"features": {"name": "a"}}"#.utf8))
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("<stdin>:1:14: error: E102"))
        #expect(refused.stderr.contains("Nothing was written"))

        let applied = await cli.run(["import", "-", "--tenant", "acme", "--json"], stdin: withWarning)
        let outcome = try #require(try JSONSerialization.jsonObject(with: Data(applied.stdoutBytes)) as? [String: Any])
        #expect(outcome["status"] as? String == "applied")
        #expect(outcome["revision"] as? Int == 1)
        #expect(outcome["added"] as? [String] == ["a"])
    }

    @Test("export --revision serves past revisions; --output writes the file")
    func exportRevisionsAndOutput() async throws {
        await cli.run(["tenant", "create", "acme"])
        let v1 = try cli.write(#"{"features": [{"name": "a"}]}"#, to: "v1.json")
        let v2 = try cli.write(#"{"features": [{"name": "a", "enabled": true}]}"#, to: "v2.json")
        await cli.run(["import", v1, "--tenant", "acme"])
        await cli.run(["import", v2, "--tenant", "acme"])

        let old = await cli.run(["export", "--tenant", "acme", "--revision", "1", "--compact"])
        #expect(old.stdout == #"{"features":[{"name":"a"}]}"#)
        let missing = await cli.run(["export", "--tenant", "acme", "--revision", "7"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("revisions run from 1 to 2"))

        let output = cli.directory.appendingPathComponent("out/features.json")
        try FileManager.default.createDirectory(
            at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(await cli.run(["export", "--tenant", "acme", "--output", output.path]).status == 0)
        #expect(try Data(contentsOf: output) == Data(await cli.run(["export", "--tenant", "acme"]).stdoutBytes))
    }

    @Test(
        "export --all --dir writes the CDN tree (documents, gzip, configs, revision copies) and a manifest, and keeps unchanged files' bytes and times"
    )
    func exportCDNTree() async throws {
        await cli.run(["tenant", "create", "acme"])
        await cli.run(["tenant", "create", "globex"])
        await cli.run(["env", "create", "staging", "--tenant", "acme"])
        await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"])
        await cli.run(["import", CLI.fixture("thbonk-repti-HEAD-features.json"), "--tenant", "globex"])

        let tree = cli.directory.appendingPathComponent("cdn")
        let published = await cli.run(["export", "--all", "--dir", tree.path])
        #expect(published.status == 0)
        #expect(published.stderr.contains("skipped acme/staging: no revision yet"))

        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: tree.appendingPathComponent("manifest.json")))
                as? [String: Any])
        let files = try #require(manifest["files"] as? [[String: Any]])
        let objects = [
            "configs.json", "features.json", "features.json.gz", "revisions/1/configs.json",
            "revisions/1/features.json", "revisions/1/features.json.gz",
        ]
        #expect(
            files.map { $0["path"] as? String }
                == ["acme", "globex"].flatMap { tenant in objects.map { "\(tenant)/production/\($0)" } })
        for file in files {
            let data = try Data(contentsOf: tree.appendingPathComponent(file["path"] as! String))
            #expect(file["size"] as? Int == data.count)
            #expect(file["sha256"] as? String == sha256(of: data))
            #expect(file["revision"] as? Int == 1)
        }
        let json = try Data(contentsOf: tree.appendingPathComponent("acme/production/features.json"))
        #expect(json == Data(await cli.run(["export", "--tenant", "acme"]).stdoutBytes))
        #expect(try Data(contentsOf: tree.appendingPathComponent("acme/production/revisions/1/features.json")) == json)
        #expect(
            try Data(contentsOf: tree.appendingPathComponent("acme/production/configs.json"))
                == Data(await cli.run(["config", "export", "--format", "dictionary", "--tenant", "acme"]).stdoutBytes))
        #expect(try gunzip(tree.appendingPathComponent("acme/production/features.json.gz")) == json)

        // Publishing again after a change in globex only: acme's files keep their bytes and times.
        let acmeFile = tree.appendingPathComponent("acme/production/features.json.gz")
        // Date the published file in the past: a rewrite would carry the present time instead.
        let past = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: acmeFile.path)
        let acmeBytes = try Data(contentsOf: acmeFile)
        let change = try cli.write(
            #"{"features": [{"name": "repti_enable_documents", "enabled": false}]}"#, to: "g.json")
        await cli.run(["import", change, "--tenant", "globex"])
        #expect(await cli.run(["export", "--all", "--dir", tree.path]).status == 0)
        #expect(try Data(contentsOf: acmeFile) == acmeBytes)
        #expect(try FileManager.default.attributesOfItem(atPath: acmeFile.path)[.modificationDate] as? Date == past)
        let globexFile = tree.appendingPathComponent("globex/production/features.json")
        #expect(try String(decoding: Data(contentsOf: globexFile), as: UTF8.self).contains("\"enabled\": false"))
        let globex = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: tree.appendingPathComponent("manifest.json")))
                as? [String: Any])
        #expect((globex["files"] as? [[String: Any]])?.last?["revision"] as? Int == 2)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
            $0.hasPrefix(".cdn")
        }
        #expect(leftovers.isEmpty)
    }

    // MARK: listings and the rest

    @Test("feature list shows kinds and the biases the app uses")
    func featureList() async throws {
        await cli.run(["tenant", "create", "acme"])
        await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"])
        let features = try #require(
            try await cli.json(["feature", "list", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(
            features.map { $0["kind"] as? String } == [
                "flag", "development-flag", "unlock-flag", "ab-test", "on-off-ab-test", "mvt-test",
            ])
        let onOff = try #require(features[4]["variations"] as? [[String: Any]])
        #expect(onOff.map { $0["name"] as? String } == ["Enabled", "Disabled"])
        #expect(onOff.map { $0["share"] as? Double } == [80, 20])
        let text = await cli.run(["feature", "list", "--tenant", "acme"]).stdout
        #expect(text.contains("Example MVT Test  ·  MVT Test  ·  enabled"))
    }

    @Test("migrate --status lists the applied migrations; a database from a newer version is refused")
    func migrations() async throws {
        let none = await cli.run(["migrate", "--status"])
        #expect(none.stdout.contains("No database at"))
        #expect(await cli.run(["migrate"]).stdout.contains("Applied 0001_initial"))
        #expect(await cli.run(["migrate"]).stdout.contains("is up to date"))
        #expect(await cli.run(["migrate", "--status"]).stdout.contains("applied  0001_initial"))

        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["sqlite3", cli.databasePath, "INSERT INTO grdb_migrations VALUES ('9999_future')"]
        try sqlite.run()
        sqlite.waitUntilExit()
        try #require(sqlite.terminationStatus == 0, "the sqlite3 shell is needed (apt-get install sqlite3)")
        let refused = await cli.run(["tenant", "list"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("newer version of Flagpole"))
    }

    @Test("Commands that only read refuse a database that does not exist: exit 1, the path named, no file created")
    func readsRefuseMissingDatabase() async throws {
        let typo = cli.directory.appendingPathComponent("flagpol.sqlite").path
        let reads: [[String]] = [
            ["tenant", "list"], ["env", "list", "--tenant", "acme"], ["feature", "list", "--tenant", "acme"],
            ["revisions", "--tenant", "acme"], ["assignments", "--tenant", "acme"], ["export", "--tenant", "acme"],
            ["export", "--all", "--dir", "cdn"], ["backup", "backup.sqlite"],
            ["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme", "--dry-run"],
        ]
        for arguments in reads {
            let result = await cli.run(arguments + ["--db", typo])
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains("There is no database at \(typo)."), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("`flagpole tenant create SLUG` or `flagpole migrate`"), "\(arguments)")
            #expect(!result.stdout.contains("No tenants yet"), "\(arguments)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).isEmpty)

        // What the message says creates the file does.
        #expect(await cli.run(["migrate", "--db", typo]).status == 0)
        #expect(await cli.run(["tenant", "list", "--db", typo]).stdout.contains("No tenants yet"))
    }

    @Test(
        "Commands that only read refuse a database whose migrations are pending, name `flagpole migrate`, and leave it byte for byte"
    )
    func readsRefuseOldSchema() async throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/migrations")
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter {
            $0.hasSuffix(".sqlite")
        }.sorted()
        try #require(!names.isEmpty)
        for name in names {
            // Given a copy of a file an older Flagpole wrote
            let path = cli.directory.appendingPathComponent(name).path
            try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent(name).path, toPath: path)
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            let reads: [[String]] = [
                ["tenant", "list"], ["feature", "list", "--tenant", "acme"], ["revisions", "--tenant", "acme"],
                ["export", "--tenant", "acme"], ["backup", "\(name).backup"],
                ["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme", "--dry-run"],
            ]
            for arguments in reads {
                // When a command that only reads opens it, then it is refused and says how to migrate
                let result = await cli.run(arguments + ["--db", path])
                #expect(result.status == 1, "\(name) \(arguments)")
                #expect(result.stderr.contains("pending"), "\(name) \(arguments): \(result.stderr)")
                #expect(result.stderr.contains("flagpole migrate --db \(path)"), "\(name) \(arguments)")
                // And the file is as it was
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original, "\(name) \(arguments)")
            }
            #expect(
                !FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("\(name).backup").path))

            // The way out the message names works.
            #expect(await cli.run(["migrate", "--db", path]).status == 0)
            #expect(await cli.run(["tenant", "list", "--db", path]).stdout.contains("acme"))
        }
    }

    @Test("Commands that only read write nothing to the database")
    func readsChangeNothingOnDisk() async throws {
        await cli.run(["tenant", "create", "acme"])
        await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"])
        let database = try Data(contentsOf: URL(fileURLWithPath: cli.databasePath))
        let reads: [[String]] = [
            ["export", "--tenant", "acme"], ["export", "--tenant", "acme", "--compact"],
            ["feature", "list", "--tenant", "acme"],
            ["revisions", "--tenant", "acme"], ["tenant", "list"], ["env", "list", "--tenant", "acme"],
            ["import", CLI.fixture("rwbutler-f8a982f-Features.json"), "--tenant", "acme", "--dry-run"],
        ]
        for arguments in reads {
            #expect(await cli.run(arguments).status == 0, "\(arguments)")
        }
        // Reading a WAL database may create an empty -wal and a -shm index, but writes nothing.
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.databasePath)) == database)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: cli.databasePath + "-wal")))?.isEmpty ?? true)
    }

    @Test(
        "--synchronous takes normal or full; anything else, on the command line or in FLAGPOLE_SYNCHRONOUS, is a usage error"
    )
    func synchronousOption() async throws {
        #expect(await cli.run(["tenant", "create", "acme", "--synchronous", "full"]).status == 0)
        #expect(await cli.run(["tenant", "list", "--synchronous", "fsync"]).status == 64)
        let fromEnvironment = await cli.run(["tenant", "list"], environment: ["FLAGPOLE_SYNCHRONOUS": "off"])
        #expect(fromEnvironment.status == 64)
        #expect(fromEnvironment.stderr.contains("FLAGPOLE_SYNCHRONOUS must be normal or full"))
    }
}

private func sha256(of data: Data) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum"]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try? process.run()
    input.fileHandleForWriting.write(data)
    try? input.fileHandleForWriting.close()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.split(separator: " ").first.map(String.init)
}

private func gunzip(_ url: URL) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["gzip", "-dc", url.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}
