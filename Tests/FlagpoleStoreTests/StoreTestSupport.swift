import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

/// The real configuration files copied from public apps, in Tests/Fixtures/real.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/real")

    static let commented = "vantientu1703-f305791-Features-with-comment.json"

    /// Every fixture's file name.
    static var all: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted())
            ?? []
    }

    /// The fixtures the app accepts.
    static var valid: [String] { all.filter { $0 != commented } }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

extension EnvironmentPath {
    static let acmeProduction = EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: .production)
    static let globexProduction = EnvironmentPath(tenant: TenantSlug(rawValue: "globex"), environment: .production)
}

/// The backend the store's tests run on: SQLite, or PostgreSQL with `FLAGPOLE_TEST_BACKEND=postgres`
/// (`.ci/run` runs this suite both ways; `Scripts/postgres` says where the server comes from).
enum TestBackend {
    static let isPostgres = ProcessInfo.processInfo.environment["FLAGPOLE_TEST_BACKEND"] == "postgres"

    /// For tests of what only SQLite has (its files, pragmas, backups, GRDB's observers).
    static let sqliteOnly = Testing.ConditionTrait.enabled(if: !isPostgres, "SQLite's own")

    /// A PostgreSQL database migrated once per test process, which every store test's database
    /// copies: migrating each anew ran every migration's statements, one round trip each.
    /// `MigrationTests` and `PostgresSchemaTests` still migrate from empty, on purpose.
    static let migratedTemplate = Task<String, any Error> {
        let url = try TestPostgres.newDatabase("template")
        // Opening migrates; closing leaves no connection, which a template must not have.
        await (try await FeatureStore.open(DatabaseAddress(parsing: url))).close()
        return url
    }
}

extension FeatureStore {
    /// An empty store on the backend under test: in memory on SQLite, a new database on PostgreSQL.
    static func makeEmpty() async throws -> FeatureStore {
        guard TestBackend.isPostgres else { return try .inMemory() }
        let template = try await TestBackend.migratedTemplate.value
        return try await open(DatabaseAddress(parsing: TestPostgres.newDatabase("store", copying: template)))
    }

    /// A fresh store with tenants acme and globex, on the backend under test.
    static func makeWithTenants() async throws -> FeatureStore {
        let store = try await makeEmpty()
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await store.access.createTenant(EnvironmentPath.globexProduction.tenant)
        return store
    }

    /// Imports `text` as a file into acme/production.
    @discardableResult
    func importText(
        _ text: String, into path: EnvironmentPath = .acmeProduction, strict: Bool = false, dryRun: Bool = false
    ) async throws -> ImportOutcome {
        try await catalog.importDocument(
            Array(text.utf8), into: path, options: ImportOptions(isDryRun: dryRun, isStrict: strict, actor: "test"))
    }

    /// Everything an import could change, to prove that a refused one changed nothing.
    func fingerprint(of path: EnvironmentPath = .acmeProduction) async throws -> String {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            var parts: [String] = []
            for table in ["features", "variations", "document_extras", "revisions", "audit"] {
                let rows = try db.rows("SELECT * FROM \(table) WHERE tenant_id = ? ORDER BY id", [scope.tenant.id])
                parts.append("\(table): \(rows.map(\.values))")
            }
            return parts.joined(separator: "\n")
        }
    }

    /// The stored features of an environment, with their salts.
    func storedFeatures(of path: EnvironmentPath = .acmeProduction) async throws -> [StoredFeature] {
        try await read { db in try db.features.storedFeatures(in: db.environments.scope(of: path)) }
    }

    /// Gives a feature of acme/production a known salt, so that a test judging its split by
    /// statistics sees the same split on every run, not one draw of the salts an import makes.
    func setSalt(_ salt: String, of feature: String) async throws {
        _ = try await write { db in
            try db.execute(
                "UPDATE features SET salt = ? WHERE environment_id = ? AND name = ?",
                [salt, try db.environments.scope(of: .acmeProduction).id, feature])
        }
    }

    /// The salt of a feature of acme/production, found by its name as the app compares names.
    func salt(of feature: String) async throws -> String {
        try await read { db in
            try db.features.stored(
                named: feature, in: db.environments.scope(of: .acmeProduction), includingArchived: true
            ).salt
        }
    }

    /// The audit rows of revision `number`.
    func auditRows(ofRevision number: Int, in path: EnvironmentPath = .acmeProduction) async throws -> [AuditRecord] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let revision = try db.environments.revision(number, in: scope)!
            return try db.environments.audit(of: revision, in: scope)
        }
    }
}

// MARK: Per-user state

extension UserID {
    /// `count` distinct users: `prefix-0`, `prefix-1`, …
    static func numbered(_ count: Int, prefix: String = "user") -> [UserID] {
        (0..<count).map { UserID(rawValue: "\(prefix)-\($0)") }
    }
}

extension UserPoints {
    /// The first of `prefix-0`, `prefix-1`, … whose point satisfies `condition`.
    func firstUser(prefix: String = "user", where condition: (Double) -> Bool) -> UserID {
        var index = 0
        while !condition(point(for: "\(prefix)-\(index)")) { index += 1 }
        return UserID(rawValue: "\(prefix)-\(index)")
    }
}

extension FeatureStore {
    /// A fresh store in a temporary SQLite file (a WAL `DatabasePool`, as the CLI and the
    /// server open it), with tenants acme and globex.
    static func makeOnFileWithTenants() async throws -> FeatureStore {
        if TestBackend.isPostgres { return try await makeWithTenants() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try FeatureStore.open(atPath: directory.appendingPathComponent("flagpole.sqlite").path)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await store.access.createTenant(EnvironmentPath.globexProduction.tenant)
        return store
    }

    /// Every assignment event of an environment, newest first.
    func allAssignmentEvents(
        in path: EnvironmentPath = .acmeProduction, user: UserID? = nil, feature: String? = nil
    ) async throws -> [AssignmentEvent] {
        try await assignments.assignmentEvents(
            in: path, matching: AssignmentEventQuery(user: user, feature: feature, limit: Int(Int32.max)))
    }

    /// The recorded assignments of a feature (current or archived), by user.
    func recordedAssignments(
        of feature: String, in path: EnvironmentPath = .acmeProduction
    ) async throws -> [UserID: Assignment] {
        try await read { db in
            let id = try db.features.id(named: feature, in: db.environments.scope(of: path))
            let rows = try db.rows(
                "SELECT user_id, point, variation, revision, is_override FROM assignments WHERE feature_id = ?", [id])
            return Dictionary(
                uniqueKeysWithValues: rows.map { row in
                    let user = UserID(rawValue: row[0])
                    return (
                        user,
                        Assignment(
                            user: user, feature: feature, variation: row[2], point: row[1], revision: row[3],
                            isOverride: row[4])
                    )
                })
        }
    }

    /// How many unlock events an environment has.
    func unlockEventCount(in path: EnvironmentPath = .acmeProduction) async throws -> Int {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.value(
                Int.self, "SELECT count(*) FROM unlock_events WHERE tenant_id = ? AND environment_id = ?",
                [scope.tenant.id, scope.id]) ?? 0
        }
    }

    /// Moves every assignment event of an environment `seconds` into the past, so history can
    /// be told apart from now without waiting.
    func backdateAssignmentEvents(by seconds: Double, in path: EnvironmentPath = .acmeProduction) async throws {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            try db.execute(
                "UPDATE assignment_events SET created_at = created_at - ? WHERE tenant_id = ? AND environment_id = ?",
                [Int64(seconds * 1000), scope.tenant.id, scope.id])
        }
    }
}

extension JSONValue {
    /// The feature objects of a parsed features.json, by name.
    var featuresByName: [String: JSONObject] {
        guard case .object(let root) = self, case .array(let features)? = root["features"] else { return [:] }
        var result: [String: JSONObject] = [:]
        for case .object(let feature) in features {
            if case .string(let name)? = feature["name"] { result[name] = feature }
        }
        return result
    }
}

/// Collects what a `report` callback sees, from whatever thread it runs on.
final class Collected<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ item: Element) {
        lock.lock()
        defer { lock.unlock() }
        items.append(item)
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

extension String {
    /// The decomposed (NFD) spelling: the same text to Swift, other bytes.
    var decomposedForTest: String { decomposedStringWithCanonicalMapping }
    /// The precomposed (NFC) spelling.
    var precomposedForTest: String { precomposedStringWithCanonicalMapping }
}

extension MigrationFixtureTests {
    /// Every (feature, variation) whose assignment deltas do not sum to the users recorded in it,
    /// variation names compared by bytes, as `assignment_deltas` and `assignments` store them.
    @Sendable static func deltasDisagreeingWithAssignments(_ db: Transaction) throws -> [String] {
        func tally(_ sql: String) throws -> [String: Int] {
            var tally: [String: Int] = [:]
            for row in try db.rows(sql) {
                let variation: Data = row[1]
                tally["\(row[0] as Int64) \(Array(variation))", default: 0] += row[2]
            }
            return tally.filter { $0.value != 0 }
        }
        let bytes = db.sqlite != nil ? "CAST(variation AS BLOB)" : "convert_to(variation, 'UTF8')"
        let deltas = try tally("SELECT feature_id, \(bytes), sum(users) FROM assignment_deltas GROUP BY 1, 2")
        let recorded = try tally("SELECT feature_id, \(bytes), count(*) FROM assignments GROUP BY 1, 2")
        return Set(deltas.keys).union(recorded.keys).sorted().compactMap { key in
            deltas[key] == recorded[key] ? nil : "\(key): deltas \(deltas[key] ?? 0), recorded \(recorded[key] ?? 0)"
        }
    }
}

extension Transaction {
    /// The SQLite connection under this one, for the tests of what only SQLite has (its
    /// transaction observers, its catalog); `nil` on PostgreSQL.
    var sqlite: Database? { connection as? Database }
}
