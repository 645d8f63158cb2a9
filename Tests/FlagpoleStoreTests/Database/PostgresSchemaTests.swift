import FlagpoleMigrations
import FlagpoleTestSupport
import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import FlagpoleStore

/// Both backends end with the same schema: the catalogs of a SQLite database and a PostgreSQL
/// database, each migrated by its own files, described in one vocabulary and compared line by line.
@Suite("PostgreSQL schema")
struct PostgresSchemaTests {
    @Test("PostgreSQL's migrations have SQLite's versions, in the same order")
    func sameVersions() {
        #expect(SchemaMigrations.postgres.map(\.identifier) == SchemaMigrations.all.map(\.identifier))
    }

    @Test("Both backends end with the same tables, columns by meaning, keys, constraints and indexes")
    func sameSchema() async throws {
        let sqlite = try SQLiteCatalog.describe()
        let postgres = try await PostgresSession.with(try Self.newDatabase()) { session in
            try await PostgresSchema.migrate(session)
            return try await PostgresCatalog.describe(session)
        }
        #expect(sqlite.count > 200, "the description covers the whole schema")
        let onlySQLite = sqlite.subtracting(postgres).sorted()
        let onlyPostgres = postgres.subtracting(sqlite).sorted()
        #expect(onlySQLite.isEmpty, "only in SQLite:\n\(onlySQLite.joined(separator: "\n"))")
        #expect(onlyPostgres.isEmpty, "only in PostgreSQL:\n\(onlyPostgres.joined(separator: "\n"))")
    }

    @Test("Instances migrating one new database at once apply each migration once")
    func concurrentMigrations() async throws {
        let address = try Self.newDatabase()
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<3 { group.addTask { try await FeatureStore.migrate(.postgres(address)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(applied.filter { !$0.isEmpty } == [SchemaMigrations.postgres.map(\.identifier)])
        let status = try await FeatureStore.migrationStatus(at: .postgres(address))
        #expect(status?.pending == [])
        #expect(status?.applied == SchemaMigrations.postgres.map(\.identifier))
    }

    @Test("A database migrated by a newer Flagpole is refused, and left as it was")
    func newerDatabaseRefused() async throws {
        let address = try Self.newDatabase()
        try await FeatureStore.migrate(.postgres(address))
        let url = address.description
        try TestPostgres.psql(url, "INSERT INTO flagpole_migrations (identifier) VALUES ('9999_from_the_future')")
        await #expect(throws: StorageError.self) { try await FeatureStore.migrate(.postgres(address)) }
        do {
            try await FeatureStore.migrate(.postgres(address))
        } catch let error as StorageError {
            #expect(error.code == "database_too_new")
            #expect(error.description.contains("9999_from_the_future"))
        }
        // Every migration of this version, and the one from the future.
        #expect(
            try TestPostgres.psql(url, "SELECT count(*) FROM flagpole_migrations")
                == "\(SchemaMigrations.postgres.count + 1)\n")
    }

    @Test("A database that doesn't keep text as UTF-8 is refused, with how to create one that does")
    func encodingRefused() async throws {
        var latin1 = try Self.newDatabase()
        try TestPostgres.psql(
            latin1.description,
            "CREATE DATABASE \"\(latin1.database)_latin1\" ENCODING 'LATIN1' TEMPLATE template0 LOCALE 'C'")
        latin1.database += "_latin1"
        do {
            try await FeatureStore.migrate(.postgres(latin1))
            Issue.record("a LATIN1 database was migrated")
        } catch let error as StorageError {
            #expect(error.description.contains("its encoding is LATIN1"))
            #expect(error.description.contains("createdb --encoding=UTF8"))
        }
    }

    static func newDatabase() throws -> PostgresAddress {
        try PostgresAddress(url: try TestPostgres.newDatabase("schema"))
    }
}

/// A schema in lines such as `column features.enabled boolean null`: a vocabulary both catalogs
/// can be written in. Booleans are SQLite integers checked `IN (0, 1)`; a primary key's columns
/// count as NOT NULL on both sides (SQLite lets a non-integer key hold NULL; nothing stores one).
enum SQLiteCatalog {
    static func describe() throws -> Set<String> {
        let queue = try DatabaseQueue()
        try FeatureStore.migrate(queue)
        return try queue.read { db in
            var lines: Set<String> = []
            let tables = try Row.fetchAll(
                db,
                sql: """
                    SELECT name, sql FROM sqlite_master
                    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
                    """)
            for table in tables {
                let name: String = table["name"]
                let sql: String = table["sql"]
                lines.insert("table \(name)")
                var key: [(Int, String)] = []
                var booleans = 0
                for column in try Row.fetchAll(db, sql: "SELECT * FROM pragma_table_info(?)", arguments: [name]) {
                    let columnName: String = column["name"]
                    let type: String = column["type"]
                    let order: Int = column["pk"]
                    let isBoolean = sql.contains("(\(columnName) IN (0, 1))")
                    if isBoolean { booleans += 1 }
                    let kind =
                        isBoolean
                        ? "boolean"
                        : ["INTEGER": "integer", "REAL": "real", "TEXT": "text", "BLOB": "blob"][type] ?? type
                    let notNull = (column["notnull"] as Int) == 1 || order > 0
                    lines.insert("column \(name).\(columnName) \(kind) \(notNull ? "not null" : "null")")
                    if order > 0 { key.append((order, columnName)) }
                }
                lines.insert("primary key \(name)(\(key.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: ", ")))")
                // Each CHECK, less the ones PostgreSQL's boolean type replaces.
                let checks = sql.components(separatedBy: "CHECK (").count - 1 - booleans
                lines.insert("checks \(name) \(checks)")
                for index in try Row.fetchAll(db, sql: "SELECT * FROM pragma_index_list(?)", arguments: [name]) {
                    let indexName: String = index["name"]
                    let origin: String = index["origin"]
                    let columns = try String.fetchAll(
                        db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [indexName]
                    ).joined(separator: ", ")
                    switch origin {
                    case "u": lines.insert("unique \(name)(\(columns))")
                    case "c":
                        let unique = (index["unique"] as Int) == 1 ? " unique" : ""
                        let partial = (index["partial"] as Int) == 1 ? " partial" : ""
                        lines.insert("index \(indexName) on \(name)(\(columns))\(unique)\(partial)")
                    default: break  // the primary key's
                    }
                }
                let foreignKeys = try Row.fetchAll(
                    db, sql: "SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq", arguments: [name])
                for (_, parts) in Dictionary(grouping: foreignKeys, by: { $0["id"] as Int }) {
                    let from = parts.map { $0["from"] as String }.joined(separator: ", ")
                    let to = parts.map { $0["to"] as String }.joined(separator: ", ")
                    let onDelete: String = parts[0]["on_delete"]
                    lines.insert(
                        "foreign key \(name)(\(from)) -> \(parts[0]["table"] as String)(\(to)) on delete \(onDelete)")
                }
            }
            return lines
        }
    }
}

enum PostgresCatalog {
    static func describe(_ session: PostgresSession) async throws -> Set<String> {
        var lines: Set<String> = []
        let tables = try await session.rows(
            """
            SELECT table_name::text FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'flagpole_migrations'
            """)
        for row in tables { lines.insert("table \(try row.decode(String.self))") }

        let columns = try await session.rows(
            """
            SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, coalesce(collation_name::text, '')
            FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name <> 'flagpole_migrations'
            """)
        for row in columns {
            let (table, column, type, nullable, collation) = try row.decode(
                (String, String, String, String, String).self)
            var kind =
                [
                    "bigint": "integer", "boolean": "boolean", "double precision": "real", "text": "text",
                    "bytea": "blob",
                ][
                    type] ?? type
            // Text keeps SQLite's byte order only in the "C" collation.
            if kind == "text" && collation != "C" { kind = "text collated \(collation)" }
            lines.insert("column \(table).\(column) \(kind) \(nullable == "NO" ? "not null" : "null")")
        }

        let constraints = try await session.rows(
            """
            SELECT c.conrelid::regclass::text, c.contype::text,
                   coalesce((SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(num, ord)
                             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num), ''),
                   coalesce(c.confrelid::regclass::text, ''),
                   coalesce((SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(num, ord)
                             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.num), ''),
                   c.confdeltype::text
            FROM pg_constraint c
            WHERE c.connamespace = current_schema()::regnamespace AND c.conrelid::regclass::text <> 'flagpole_migrations'
            """)
        var checks: [String: Int] = [:]
        for row in constraints {
            let (table, type, columns, parent, parentColumns, onDelete) = try row.decode(
                (String, String, String, String, String, String).self)
            switch type {
            case "p": lines.insert("primary key \(table)(\(columns))")
            case "u": lines.insert("unique \(table)(\(columns))")
            case "c": checks[table, default: 0] += 1
            case "f":
                let action =
                    ["a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"][onDelete]
                    ?? onDelete
                lines.insert("foreign key \(table)(\(columns)) -> \(parent)(\(parentColumns)) on delete \(action)")
            default: lines.insert("constraint \(table) of type \(type)")
            }
        }
        for row in tables {
            let table = try row.decode(String.self)
            lines.insert("checks \(table) \(checks[table] ?? 0)")
        }

        // Indexes of their own, not those behind a key or a unique constraint (a foreign key names
        // the index it references too).
        let indexes = try await session.rows(
            """
            SELECT i.relname::text, t.relname::text,
                   (SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(x.indkey) WITH ORDINALITY k(num, ord)
                    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.num),
                   x.indisunique, x.indpred IS NOT NULL
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            WHERE t.relnamespace = current_schema()::regnamespace
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))
            """)
        for row in indexes {
            let (name, table, columns, unique, partial) = try row.decode((String, String, String, Bool, Bool).self)
            lines.insert("index \(name) on \(table)(\(columns))\(unique ? " unique" : "")\(partial ? " partial" : "")")
        }
        return lines
    }
}
