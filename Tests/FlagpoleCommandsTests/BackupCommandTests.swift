import EndToEndSupport
import FlagpoleMigrations
import Foundation
import Testing

/// `flagpole backup` and `flagpole restore` on real files.
@Suite("flagpole backup and restore")
struct BackupCommandTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    func path(_ name: String) -> String {
        cli.directory.appendingPathComponent(name).path
    }

    @Test("backup writes one checked file, refuses to overwrite without --force, and restore brings it back")
    func backupThenRestore() async throws {
        // Given a database with one revision and recorded users
        await cli.run(["tenant", "create", "acme"])
        #expect(await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        #expect(
            await cli.run(["assign", "--feature", "Example A/B Test", "--user", "u-1", "--tenant", "acme"]).status == 0)
        let exported = await cli.run(["export", "--tenant", "acme"]).stdoutBytes

        // When it is backed up
        let backup = path("backup.sqlite")
        let made = await cli.run(["backup", backup])

        // Then one standalone file holds it, and the command says what it copied
        #expect(made.status == 0)
        #expect(made.stdout.contains("Backed up \(cli.databasePath) to \(backup)"))
        #expect(made.stdout.contains("schema \(latestSchema)"))
        #expect(made.stdout.contains("1 tenant, 1 environment, 1 revision, 1 assignment, 0 unlocks"))
        #expect(made.stdout.contains("acme/production"))
        #expect(FileManager.default.fileExists(atPath: backup))
        #expect(!FileManager.default.fileExists(atPath: backup + "-wal"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)).prefix(16) == Data("SQLite format 3\0".utf8))

        let again = await cli.run(["backup", backup])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(again.stderr.contains("--force"))
        let forced = await cli.run(["backup", backup, "--force", "--json"])
        #expect(forced.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(forced.stdoutBytes)) as? [String: Any])
        let copied = try #require(json["copied"] as? [String: Any])
        #expect(copied["tenants"] as? Int == 1)
        #expect(copied["schema"] as? String == latestSchema)
        #expect((copied["environments"] as? [[String: Any]])?.first?["revision"] as? Int == 1)

        // When the database moves on, a restore without --force is refused and changes nothing
        #expect(
            await cli.run(["import", CLI.fixture("rwbutler-99b0686-Features.json"), "--tenant", "acme"]).status == 0)
        let moved = await cli.run(["export", "--tenant", "acme"]).stdoutBytes
        let refused = await cli.run(["restore", backup])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("already holds 1 tenant (acme)"))
        #expect(refused.stderr.contains("--force"))
        #expect(await cli.run(["export", "--tenant", "acme"]).stdoutBytes == moved)

        // Then with --force the backup's state comes back
        let restored = await cli.run(["restore", backup, "--force"])
        #expect(restored.status == 0)
        #expect(restored.stdout.contains("Restored \(backup) into \(cli.databasePath): schema \(latestSchema)."))
        #expect(restored.stdout.contains("Replaced what was there: 1 tenant, 1 environment, 2 revisions"))
        #expect(restored.stderr.contains("restart it"))
        #expect(await cli.run(["export", "--tenant", "acme"]).stdoutBytes == exported)
        let revisions = try #require(
            try await cli.json(["revisions", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(revisions.count == 1)

        // And a new database needs no --force
        let other = path("other.sqlite")
        #expect(await cli.run(["restore", backup, "--db", other]).status == 0)
        #expect(await cli.run(["export", "--tenant", "acme", "--db", other]).stdoutBytes == exported)
    }

    @Test(
        "restore refuses a file that is not a database, a damaged one and a missing one, with exit 1 and the database unchanged"
    )
    func restoreRefusesBadFiles() async throws {
        await cli.run(["tenant", "create", "acme"])
        await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"])
        let backup = path("backup.sqlite")
        #expect(await cli.run(["backup", backup]).status == 0)
        let before = await cli.run(["export", "--tenant", "acme"]).stdoutBytes

        let json = CLI.fixture("rwbutler-HEAD-Features.json")
        let notDatabase = await cli.run(["restore", json, "--force"])
        #expect(notDatabase.status == 1)
        #expect(notDatabase.stderr.contains("\(json) is not an SQLite database"))
        #expect(notDatabase.stderr.contains("Nothing was restored"))

        let truncated = path("truncated.sqlite")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: backup))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        let damaged = await cli.run(["restore", truncated, "--force"])
        #expect(damaged.status == 1)
        #expect(damaged.stderr.contains("\(truncated) is damaged"))
        #expect(damaged.stderr.contains("use another backup"))

        let missing = await cli.run(["restore", path("nowhere.sqlite"), "--force"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("there is no such file"))

        #expect(await cli.run(["export", "--tenant", "acme"]).stdoutBytes == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
            $0.hasPrefix(".flagpole")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("backup of a database that does not exist fails and creates nothing; restore without a file is a usage error")
    func missingDatabase() async throws {
        let backup = path("backup.sqlite")
        let result = await cli.run(["backup", backup])
        #expect(result.status == 1)
        #expect(result.stderr.contains("There is no database at \(cli.databasePath)"))
        #expect(!FileManager.default.fileExists(atPath: backup))
        #expect(!FileManager.default.fileExists(atPath: cli.databasePath))

        let usage = await cli.run(["restore"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("Usage: flagpole restore"))
    }
}

/// The schema version a file made by this build has.
private let latestSchema = SchemaMigrations.all.last!.identifier
