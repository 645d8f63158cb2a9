import Testing

@testable import FlagpoleStore

@Suite("Database addresses and migration scripts")
struct DatabaseAddressTests {
    @Test("A path is SQLite's; a postgres:// or postgresql:// URL is PostgreSQL's, read as libpq reads it")
    func parsing() throws {
        #expect(
            try DatabaseAddress(parsing: "./flagpole.sqlite", environment: [:]) == .sqlite(path: "./flagpole.sqlite"))
        #expect(try DatabaseAddress(parsing: "postgres.sqlite", environment: [:]) == .sqlite(path: "postgres.sqlite"))

        guard
            case .postgres(let full) = try DatabaseAddress(
                parsing: "postgresql://flag%40pole:s3cr%2Ft@db.internal:6543/flags?sslmode=require", environment: [:])
        else {
            Issue.record("not PostgreSQL")
            return
        }
        #expect(full.user == "flag@pole")
        #expect(full.password == "s3cr/t")
        #expect(full.host == "db.internal")
        #expect(full.port == 6543)
        #expect(full.database == "flags")
        #expect(full.tls == .require)
        #expect(full.description == "postgres://flag@pole@db.internal:6543/flags?sslmode=require")
        #expect(!full.description.contains("s3cr"))
    }

    @Test("What the URL leaves out comes from PG* variables, then libpq's defaults")
    func defaults() throws {
        let bare = try PostgresAddress(url: "postgres://", environment: [:])
        #expect(bare.host == "127.0.0.1")
        #expect(bare.port == 5432)
        #expect(bare.user == "postgres")
        #expect(bare.database == "postgres")
        #expect(bare.password == nil)
        #expect(bare.tls == .prefer)

        let fromEnvironment = try PostgresAddress(
            url: "postgres:///",
            environment: [
                "PGHOST": "pg", "PGPORT": "5433", "PGUSER": "app", "PGPASSWORD": "pw", "PGSSLMODE": "disable",
            ])
        #expect(fromEnvironment.host == "pg")
        #expect(fromEnvironment.port == 5433)
        #expect(fromEnvironment.user == "app")
        #expect(fromEnvironment.database == "app")
        #expect(fromEnvironment.password == "pw")
        #expect(fromEnvironment.tls == .disable)

        let options = try PostgresAddress(url: "postgres://u@h/db?host=other&port=7000&dbname=real", environment: [:])
        #expect(options.host == "other")
        #expect(options.port == 7000)
        #expect(options.database == "real")
    }

    @Test(
        "A URL that can't be used is refused with what is wrong, never with its password",
        arguments: [
            ("postgres://u:hunter2@h:99999/db", "the port 99999"),
            ("postgres://u:hunter2@h/db?sslmode=verify-ca", "sslmode=verify-ca"),
            ("postgres://u:hunter2@h/db?application_name=x", "the option application_name"),
            ("postgres://u:hunter2@h/db/extra", "more than a database"),
            ("postgres://u:hunter2@h/db?host=/var/run/postgresql", "Unix sockets"),
        ])
    func refusals(url: String, complaint: String) {
        do {
            _ = try DatabaseAddress(parsing: url, environment: [:])
            Issue.record("\(url) was accepted")
        } catch let error as StorageError {
            #expect(error.code == "invalid_address")
            #expect(error.description.contains(complaint), "\(error)")
            #expect(!error.description.contains("hunter2"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("A migration file splits at semicolons outside strings, names, comments and dollar-quoted bodies")
    func scriptStatements() {
        let script = """
            -- a comment; not a statement
            CREATE TABLE "a;b" (x text DEFAULT 'it''s; fine');
            /* a block; comment */
            CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                INSERT INTO t VALUES ('$1;'); RETURN NEW;
            END $body$;
            SELECT $$;$$, $1;
            -- trailing comment only
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 3, "\(statements)")
        #expect(statements.first?.contains("'it''s; fine'") == true)
        #expect(statements.dropFirst().first?.hasSuffix("END $body$") == true)
        #expect(statements.last?.hasSuffix("SELECT $$;$$, $1") == true)
    }
}
