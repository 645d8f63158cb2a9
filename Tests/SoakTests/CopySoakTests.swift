import EndToEndSupport
import FlagpoleTestSupport
import Foundation
import Testing

/// `flagpole copy` between SQLite and a real PostgreSQL server: the demo's whole database there and
/// back, and copies killed at any moment. Tens of seconds each: the soak lane.
@Suite("flagpole copy, SQLite to PostgreSQL and back")
struct CopySoakTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    @Test("The demo's database goes to PostgreSQL and back, and serves the same export and groups")
    func roundTrip() async throws {
        // Given the demo's database
        #expect(await cli.run(["demo", "--tenant", "demo"]).status == 0)
        let url = try TestPostgres.newDatabase("cli")

        // When it is copied to PostgreSQL and from there to a new file
        let there = await cli.run(["copy", "--from", cli.databasePath, "--to", url])
        let back = cli.directory.appendingPathComponent("back.sqlite").path
        let again = await cli.run(["copy", "--from", url, "--to", back, "--json"])

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
        let original = await cli.run(["export", "--tenant", "demo"]).stdoutBytes
        #expect(await cli.run(["export", "--tenant", "demo", "--db", back]).stdoutBytes == original)
        for user in ["demo-user-7", "demo-user-1234"] {
            let arguments = ["evaluate", "--key", "New Onboarding", "--user", user, "--tenant", "demo", "--json"]
            let copied = await cli.run(arguments + ["--db", back]).stdout
            #expect(copied == (await cli.run(arguments).stdout))
        }
    }

    @Test("A copy killed at any moment leaves its destination empty, or whole")
    func killedCopies() async throws {
        #expect(await cli.run(["demo", "--tenant", "demo"]).status == 0)
        // A whole copy, which the way back reads and every survivor must equal; how long it takes
        // here, to kill the next ones early, midway and late.
        let whole = try TestPostgres.newDatabase("whole")
        let started = Date()
        // The binary, as the killed copies are: a process's start is part of the time they are given.
        let reference = try checksums(
            of: try cli.runBinary(["copy", "--from", cli.databasePath, "--to", whole, "--json"]))
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
                let copied = try checksums(of: await cli.run(["copy", "--from", to, "--to", check, "--json"]))
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
