import FlagpoleTestSupport
import Foundation
import Testing

/// Each table's SQL has one home, a file named after the table in its domain's folder of
/// `Sources/FlagpoleStore` (ARCHITECTURE.md, "Where each table's SQL lives"), a file per type: these read the store's sources and fail when a statement, or a record's
/// query, appears anywhere else, so "where is an assignment event written?" keeps a
/// one-file answer and a second backend has one list of operations to provide.
@Suite("Each table's SQL lives in its one home")
struct SQLHomeTests {
    /// The home of each table of Migrations/.
    static let homes: [String: String] = [
        "tenants": "TenantTable.swift",
        "environments": "EnvironmentTable.swift", "revisions": "EnvironmentTable.swift",
        "audit": "EnvironmentTable.swift", "document_extras": "EnvironmentTable.swift",
        "store_generation": "EnvironmentTable.swift", "environment_changes": "EnvironmentTable.swift",
        "features": "FeatureTable.swift", "variations": "FeatureTable.swift",
        "assignments": "AssignmentTable.swift", "assignment_events": "AssignmentTable.swift",
        "assignment_deltas": "AssignmentTable.swift",
        "unlocks": "UnlockTable.swift", "unlock_events": "UnlockTable.swift",
        "api_keys": "KeyTable.swift", "sessions": "KeyTable.swift", "server_secrets": "KeyTable.swift",
        "members": "MemberTable.swift", "memberships": "MemberTable.swift", "member_links": "MemberTable.swift",
        "member_sessions": "MemberTable.swift", "sign_in_failures": "MemberTable.swift",
        "ramps": "RampTable.swift", "ramp_steps": "RampTable.swift", "ramp_events": "RampTable.swift",
        "ramp_looks": "RampTable.swift",
        "triggers": "TriggerTable.swift", "trigger_calls": "TriggerTable.swift",
        "fetch_counts": "FetchCountTable.swift", "webhooks": "WebhookTable.swift",
        "webhook_deliveries": "WebhookTable.swift", "refused_event_batches": "RefusedEventBatchTable.swift",
        "publish_log": "PublishTable.swift",
        "segment_lists": "TargetingTable.swift",
        "user_attributes": "UserAttributeTable.swift", "erasures": "UserAttributeTable.swift",
        "goals": "ExperimentTable.swift", "events": "ExperimentTable.swift",
        "experiment_epochs": "ExperimentTable.swift", "experiment_arms": "ExperimentTable.swift",
        "experiment_totals": "ExperimentTable.swift", "experiment_days": "ExperimentTable.swift",
        "experiment_users": "ExperimentTable.swift", "experiment_progress": "ExperimentTable.swift",
        "test_controls": "ExperimentTable.swift",
    ]

    /// The files of a home beside its table's own, one per type: the writers of the assignment
    /// tables, each in its file.
    static let homeFiles: [String: Set<String>] = [
        "AssignmentTable.swift": ["AssignmentTable.swift", "AssignmentWriter.swift", "FirstAssignments.swift"]
    ]

    /// The file name of `path`, whichever domain's folder holds it.
    static func fileName(_ path: String) -> String {
        String(path.split(separator: "/").last!)
    }

    /// Whether `path` is in the home named `home`.
    static func isInHome(_ path: String, _ home: String) -> Bool {
        (homeFiles[home] ?? [home]).contains(fileName(path))
    }

    /// Whether `path` is a table's home, or a file of one.
    static func isHome(_ path: String) -> Bool {
        Set(homes.values).union(homeFiles.values.joined()).contains(fileName(path))
    }

    /// The migrators run the numbered SQL files (SQLite's, with migration 0005's data step, the
    /// names' NFC keys; PostgreSQL's, with its ledger of migrations): the schema's own homes,
    /// which write whatever table a migration changes.
    static let migrators: Set<String> = [
        "Database/SQLite/FeatureStore+SQLite.swift", "Database/PostgreSQL/PostgresSchema.swift",
    ]

    /// Every Swift file of the store, by its path under `Sources/FlagpoleStore`.
    static func sources() throws -> [(path: String, text: String)] {
        try RepositorySources.swiftFiles(under: "Sources/FlagpoleStore")
    }

    /// `(table, line)` for each statement of `text` that writes a table: INSERT INTO, UPDATE, DELETE FROM.
    static func writes(in text: String) -> [(table: String, line: Int)] {
        let pattern = try! Regex(#"(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:temp\.)?([a-z_]+)"#)
        return RepositorySources.codeLines(text).flatMap { number, line in
            line.matches(of: pattern).map { (String($0.output[1].substring!), number) }
        }
    }

    /// `(table, line)` for each table a statement of `text` reads (FROM, JOIN).
    static func reads(in text: String) -> [(table: String, line: Int)] {
        let pattern = try! Regex(#"\b(?:FROM|JOIN)\s+([a-z_]+)"#)
        return RepositorySources.codeLines(text).flatMap { number, line in
            line.matches(of: pattern).map { (String($0.output[1].substring!), number) }
                .filter { homes[$0.0] != nil }
        }
    }

    @Test("Every table has a home file, and every record is declared in its table's home")
    func homesExist() throws {
        let files = Dictionary(uniqueKeysWithValues: try Self.sources().map { ($0.path, $0.text) })
        for home in Set(Self.homes.values) {
            #expect(files.keys.contains { Self.fileName($0) == home }, "\(home) is missing")
        }
        let declaration = try Regex(#"struct ([A-Za-z]+):[^{]*\bSQLRecord\b"#)
        var records = 0
        for (path, text) in files {
            for match in text.matches(of: declaration) {
                records += 1
                #expect(
                    Self.isHome(path), "\(match.output[1].substring!) is declared in \(path), not in a table's home")
            }
        }
        #expect(records > 0)
    }

    @Test("A table is written only from its home (or by the migrator)")
    func writesStayHome() throws {
        for (path, text) in try Self.sources() where !Self.migrators.contains(path) {
            for (table, line) in Self.writes(in: text) {
                if table == "staged_points" {
                    #expect(Self.fileName(path) == "FirstAssignments.swift", "\(path):\(line) stages assignments")
                    continue
                }
                guard let home = Self.homes[table] else {
                    Issue.record("\(path):\(line) writes \(table), a table with no home in SQLHomeTests.homes")
                    continue
                }
                #expect(Self.isInHome(path, home), "\(path):\(line) writes \(table), whose home is \(home)")
            }
        }
    }

    @Test("Statements and record queries are written in the tables' homes only")
    func queriesStayInTables() throws {
        // A record's query interface generates SQL: it is a statement too.
        let recordQuery = try Regex(
            #"[A-Za-z]+Record\.(filter|fetch|order|all|owned|deleteAll|select)\b|\.inserted\(|\.insert\(db"#)
        for (path, text) in try Self.sources() where !Self.isHome(path) && !Self.migrators.contains(path) {
            for (table, line) in Self.reads(in: text) {
                Issue.record("\(path):\(line) reads \(table) outside the tables' homes")
            }
            for (number, line) in RepositorySources.codeLines(text) where line.contains(recordQuery) {
                Issue.record(
                    "\(path):\(number) queries a record outside the tables' homes: \(line.trimmingCharacters(in: .whitespaces))"
                )
            }
        }
    }

    @Test(
        "The checks see what they look for",
        arguments: [
            (#"try db.execute(sql: "INSERT INTO assignment_events (a) VALUES (1)")"#, "assignment_events"),
            (#"    UPDATE features SET position = ? WHERE id = ?"#, "features"),
            (#"DELETE FROM sessions WHERE sha256 = ?"#, "sessions"),
        ])
    func detectsWrites(line: String, table: String) {
        #expect(Self.writes(in: line).map(\.table) == [table])
        #expect(Self.writes(in: "/// " + line).isEmpty)
    }
}
