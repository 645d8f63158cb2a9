import EndToEndSupport
import FlagpoleMigrations
import FlagpoleTestSupport
import Foundation
import Testing

/// `flagpole migrate` and the store's commands on a real PostgreSQL server (copies: `CopySoakTests`).
@Suite("flagpole migrate and PostgreSQL on the command line")
struct CopyCommandTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    @Test("migrate brings a PostgreSQL database up to date once; --status lists it")
    func migrate() async throws {
        let url = try TestPostgres.newDatabase("migrate")
        let pending = await cli.run(["migrate", "--status", "--db", url])
        #expect(pending.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("pending  ") })
        let first = await cli.run(["migrate", "--db", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Applied \(SchemaMigrations.postgres.map(\.identifier).joined(separator: ", "))"))
        let again = await cli.run(["migrate"], environment: ["FLAGPOLE_DB": url])
        #expect(again.stdout.contains("is up to date (\(SchemaMigrations.postgres.last!.identifier))"))
    }

    @Test("The store's commands run on PostgreSQL; backup and restore say what to do there")
    func postgresCommands() async throws {
        let url = try TestPostgres.newDatabase("refusals")
        // A command that only reads migrates nothing: an empty database is refused, unchanged.
        let unmigrated = await cli.run(["tenant", "list", "--db", url])
        #expect(unmigrated.status != 0)
        #expect(unmigrated.stderr.contains("flagpole migrate"), "\(unmigrated.stderr)")
        #expect(try TestPostgres.psql(url, "SELECT to_regclass('flagpole_migrations') IS NULL").contains("t"))
        #expect(await cli.run(["tenant", "create", "acme", "--db", url]).status == 0)
        let list = await cli.run(["tenant", "list", "--db", url])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("acme"))
        let backup = await cli.run(["backup", "copy.sqlite", "--db", url])
        #expect(backup.status != 0)
        #expect(backup.stderr.contains("pg_dump --format=custom"), "\(backup.stderr)")
        let bad = await cli.run(["migrate", "--db", "postgres://app:hunter2@127.0.0.1:99999/x"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("the port 99999"))
        #expect(!bad.stderr.contains("hunter2"))
    }
}
