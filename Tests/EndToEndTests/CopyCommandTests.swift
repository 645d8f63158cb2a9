import FlagpoleMigrations
import FlagpoleTestSupport
import Foundation
import Testing

/// `flagpole copy` and `flagpole migrate` on a real PostgreSQL server, with the real binary.
@Suite("flagpole copy and PostgreSQL on the command line")
struct CopyCommandTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    @Test("The demo's database goes to PostgreSQL and back, and serves the same export and groups")
    func roundTrip() throws {
        // Given the demo's database
        #expect(try cli.run(["demo", "--tenant", "demo"]).status == 0)
        let url = try TestPostgres.newDatabase("cli")

        // When it is copied to PostgreSQL and from there to a new file
        let there = try cli.run(["copy", "--from", cli.databasePath, "--to", url])
        let back = cli.directory.appendingPathComponent("back.sqlite").path
        let again = try cli.run(["copy", "--from", url, "--to", back, "--json"])

        // Then both copies report the same tables, and the file holds the same store
        #expect(there.status == 0, "\(there.stderr)")
        #expect(there.stdout.contains("every table read back and matched its source"))
        #expect(again.status == 0, "\(again.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(again.stdoutBytes)) as? [String: Any])
        let tables = try #require(report["tables"] as? [[String: Any]])
        for table in tables {
            let name = try #require(table["name"] as? String)
            let line = try #require(there.stdout.split(separator: "\n").first { $0.hasPrefix("\(name) ") })
            #expect(line.hasSuffix(String((table["sha256"] as? String ?? "").prefix(16))), "\(name)")
        }
        #expect((report["rows"] as? Int ?? 0) > 20_000)
        let original = try cli.run(["export", "--tenant", "demo"]).stdoutBytes
        #expect(try cli.run(["export", "--tenant", "demo", "--db", back]).stdoutBytes == original)
        for user in ["demo-user-7", "demo-user-1234"] {
            let arguments = ["evaluate", "--key", "New Onboarding", "--user", user, "--tenant", "demo", "--json"]
            #expect(try cli.run(arguments + ["--db", back]).stdout == cli.run(arguments).stdout)
        }
    }

    @Test("migrate brings a PostgreSQL database up to date once; --status lists it")
    func migrate() throws {
        let url = try TestPostgres.newDatabase("migrate")
        let pending = try cli.run(["migrate", "--status", "--db", url])
        #expect(pending.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("pending  ") })
        let first = try cli.run(["migrate", "--db", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Applied \(SchemaMigrations.postgres.map(\.identifier).joined(separator: ", "))"))
        let again = try cli.run(["migrate"], environment: ["FLAGPOLE_DB": url])
        #expect(again.stdout.contains("is up to date (\(SchemaMigrations.postgres.last!.identifier))"))
    }

    @Test("The store's commands run on PostgreSQL; backup and restore say what to do there")
    func postgresCommands() throws {
        let url = try TestPostgres.newDatabase("refusals")
        // A command that only reads migrates nothing: an empty database is refused, unchanged.
        let unmigrated = try cli.run(["tenant", "list", "--db", url])
        #expect(unmigrated.status != 0)
        #expect(unmigrated.stderr.contains("flagpole migrate"), "\(unmigrated.stderr)")
        #expect(try TestPostgres.psql(url, "SELECT to_regclass('flagpole_migrations') IS NULL").contains("t"))
        #expect(try cli.run(["tenant", "create", "acme", "--db", url]).status == 0)
        let list = try cli.run(["tenant", "list", "--db", url])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("acme"))
        let backup = try cli.run(["backup", "copy.sqlite", "--db", url])
        #expect(backup.status != 0)
        #expect(backup.stderr.contains("pg_dump --format=custom"), "\(backup.stderr)")
        let bad = try cli.run(["migrate", "--db", "postgres://app:hunter2@127.0.0.1:99999/x"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("the port 99999"))
        #expect(!bad.stderr.contains("hunter2"))
    }

    @Test("A copy killed at any moment leaves its destination empty, or whole")
    func killedCopies() throws {
        #expect(try cli.run(["demo", "--tenant", "demo"]).status == 0)
        // A whole copy, which the way back reads and every survivor must equal; how long it takes
        // here, to kill the next ones early, midway and late.
        let whole = try TestPostgres.newDatabase("whole")
        let started = Date()
        let reference = try checksums(of: try cli.run(["copy", "--from", cli.databasePath, "--to", whole, "--json"]))
        let duration = Date().timeIntervalSince(started)

        var emptyAfterKill = 0
        for (index, share) in [0.1, 0.3, 0.5, 0.7, 0.9].enumerated() {
            let url = try TestPostgres.newDatabase("killed")
            let file = cli.directory.appendingPathComponent("killed-\(index).sqlite").path
            for (from, to) in [(cli.databasePath, url), (whole, file)] {
                let child = try cli.start(["copy", "--from", from, "--to", to])
                let deadline = Date().addingTimeInterval(duration * share)
                while child.isRunning && Date() < deadline { usleep(500) }
                child.kill()
                _ = child.finish()
                // Empty: not even the schema, which is written in the copy's transaction.
                let isEmpty =
                    to == url
                    ? try TestPostgres.psql(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == "0\n"
                    : !FileManager.default.fileExists(atPath: file)
                if isEmpty {
                    emptyAfterKill += 1
                    continue
                }
                // Killed after it kept the copy (or done before the kill): every table as the source's.
                let check = cli.directory.appendingPathComponent("check-\(index)-\(to == url ? "pg" : "file").sqlite")
                    .path
                let copied = try checksums(of: try cli.run(["copy", "--from", to, "--to", check, "--json"]))
                #expect(copied == reference, "a killed copy kept part of its rows")
            }
        }
        #expect(emptyAfterKill >= 5, "most kills land while a copy runs")
    }

    /// Each table's SHA-256 from `copy --json`.
    func checksums(of result: CLI.Result) throws -> [String: String] {
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
        let tables = try #require(report["tables"] as? [[String: Any]])
        return Dictionary(
            uniqueKeysWithValues: tables.map { ($0["name"] as? String ?? "", $0["sha256"] as? String ?? "") })
    }
}
