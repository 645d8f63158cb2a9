import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import FlagpoleStore

/// `flagpole copy` between a SQLite file and a real PostgreSQL database, both ways.
@Suite("Copying a database between backends")
struct DatabaseCopyTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Text that COPY's format escapes, characters beyond ASCII, and a point that is no short decimal.
    static let features = #"""
        {"features": [
            {"name": "Checkout", "test-variations": ["A", "B"], "test-biases": [30, 70],
             "description": "tab\there, line\nbreak, carriage\rreturn, back\\slash \\N, café ✓ 🚀"},
            {"name": "Dark mode", "enabled": true, "section": "a;b'c\"d"}
        ]}
        """#

    /// A SQLite store with a row in most tables: documents, per-user state, keys, sessions, events.
    func populatedFile(_ name: String = "source.sqlite", users: Int = 300) async throws -> (String, FeatureStore) {
        let path = directory.appendingPathComponent(name).path
        let store = try FeatureStore.open(atPath: path)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await store.importText(Self.features)
        let userIDs = (0..<users).map { UserID(rawValue: "user-\($0)") }
        _ = try await store.assignments.assign(userIDs, to: "Checkout", in: .acmeProduction)
        _ = try await store.catalog.setBiases(
            [50, 50], of: "Checkout", in: .acmeProduction, options: EditOptions(actor: "test"))
        let key = try await store.access.createKey(for: .tenant(EnvironmentPath.acmeProduction.tenant), role: .admin)
        _ = try await store.access.openSession(withKey: key.secret)
        _ = try await store.access.secret(named: "dashboard")
        try await store.experiments.createGoal(Goal(name: "purchase", kind: .value), in: .acmeProduction)
        let now = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        let events = userIDs.prefix(50).enumerated().map { index, user in
            (
                index,
                ReceivedEvent(
                    id: "e\(index)", user: user, goal: "purchase", feature: nil, value: 0.1 + 0.2, time: now,
                    receivedAt: now)
            )
        }
        _ = try await store.experiments.record(events, in: .acmeProduction)
        _ = try await store.experiments.results(of: "Checkout", in: .acmeProduction)
        return (path, store)
    }

    static func postgres() throws -> DatabaseAddress {
        .postgres(try PostgresAddress(url: try TestPostgres.newDatabase("copy")))
    }

    @Test("SQLite to PostgreSQL and back: every table the same, the store the same to its clients")
    func roundTrip() async throws {
        let (source, original) = try await populatedFile()
        let postgres = try Self.postgres()
        let back = directory.appendingPathComponent("back.sqlite").path

        let there = try await FeatureStore.copy(from: .sqlite(path: source), to: postgres)
        let again = try await FeatureStore.copy(from: postgres, to: .sqlite(path: back))

        #expect(there == again, "the same rows, hashed the same, on the way there and back")
        let rowsOf = Dictionary(uniqueKeysWithValues: there.tables.map { ($0.name, $0.rows) })
        #expect(rowsOf["assignments"] == 300)
        #expect(rowsOf["events"] == 50)
        #expect(rowsOf["sessions"] == 1)
        #expect(there.tables.filter { $0.rows > 0 }.count >= 18, "most tables hold rows: \(there.tables)")

        // The keys and indexes a load sets aside are back, as the migrations made them.
        guard case .postgres(let address) = postgres else { return }
        let described = try await PostgresSession.with(address) { try await PostgresCatalog.describe($0) }
        #expect(described == (try SQLiteCatalog.describe()))
        let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
        let sourceSchema = try DatabaseQueue(path: source).read { try Row.fetchAll($0, sql: schema) }
        #expect(try DatabaseQueue(path: back).read { try Row.fetchAll($0, sql: schema) } == sourceSchema)

        let copy = try FeatureStore.open(atPath: back, access: .readOnly)
        #expect(
            try await copy.catalog.revision(of: .acmeProduction).document
                == original.catalog.revision(of: .acmeProduction).document)
        for user in ["user-0", "user-7", "user-299"] {
            let context = FlagContext(user: UserID(rawValue: user))
            #expect(
                try await copy.assignments.evaluateFlag("Checkout", for: context, in: .acmeProduction).variant
                    == original.assignments.evaluateFlag("Checkout", for: context, in: .acmeProduction).variant)
        }
        #expect(
            try await copy.experiments.results(of: "Checkout", in: .acmeProduction).jsonValue
                == original.experiments.results(of: "Checkout", in: .acmeProduction).jsonValue)
    }

    @Test("The copy is one moment of a store being written: every first assignment with its event")
    func consistentWhileWritten() async throws {
        let (source, store) = try await populatedFile(users: 10)
        let postgres = try Self.postgres()
        // Once the copy has read its first page, a batch of new users is committed before it
        // reads on: a write that lands in the middle of the copy, for certain.
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        let landed = DispatchSemaphore(value: 0)
        let firstPage = Mutex(false)
        let writer = Task {
            for await _ in started { break }
            let users = (0..<200).map { UserID(rawValue: "during-\($0)") }
            _ = try await store.assignments.assign(users, to: "Checkout", in: .acmeProduction)
            landed.signal()
        }
        let report = try await FeatureStore.copy(from: .sqlite(path: source), to: postgres) { _, _ in
            let isFirst = firstPage.withLock { seen in
                defer { seen = true }
                return !seen
            }
            guard isFirst else { return }
            startedSignal.yield()
            landed.wait()
        }
        try await writer.value
        let rows = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, $0.rows) })
        #expect(rows["assignments"] == 10, "the copy holds none of the users written during it")
        #expect(
            try await store.assignments.assignmentCounts(of: "Checkout", in: .acmeProduction).map(\.users).reduce(0, +)
                == 210)
        guard case .postgres(let address) = postgres else { return }
        let firsts = try TestPostgres.psql(
            address.description, "SELECT count(*) FROM assignment_events WHERE reason = 'first'")
        #expect(firsts == "10\n")
    }

    @Test("A copy into a database that holds data, or onto a file, is refused and writes nothing")
    func refusals() async throws {
        let (source, _) = try await populatedFile(users: 20)
        let postgres = try Self.postgres()
        _ = try await FeatureStore.copy(from: .sqlite(path: source), to: postgres)
        guard case .postgres(let address) = postgres else { return }
        let url = address.description
        let before = try TestPostgres.psql(url, "SELECT count(*) FROM assignments")

        await #expect(throws: CopyError.destinationNotEmpty(address: address.description, table: "tenants")) {
            try await FeatureStore.copy(from: .sqlite(path: source), to: postgres)
        }
        #expect(try TestPostgres.psql(url, "SELECT count(*) FROM assignments") == before)

        // Another application's database: refused before Flagpole's schema is added beside it.
        let other = try PostgresAddress(url: try TestPostgres.newDatabase("other"))
        try TestPostgres.psql(other.description, "CREATE TABLE orders (id bigint PRIMARY KEY)")
        await #expect(throws: CopyError.otherApplication(address: other.description, table: "orders")) {
            try await FeatureStore.copy(from: .sqlite(path: source), to: .postgres(other))
        }
        #expect(
            try TestPostgres.psql(
                other.description, "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'")
                == "orders\n")

        let existing = directory.appendingPathComponent("existing.sqlite").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        await #expect(throws: CopyError.destinationExists(existing)) {
            try await FeatureStore.copy(from: postgres, to: .sqlite(path: existing))
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains("partial")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("After a copy into PostgreSQL, new rows get new ids")
    func sequencesMoveOn() async throws {
        let (source, _) = try await populatedFile(users: 5)
        let postgres = try Self.postgres()
        _ = try await FeatureStore.copy(from: .sqlite(path: source), to: postgres)
        guard case .postgres(let address) = postgres else { return }
        let url = address.description
        let id = try TestPostgres.psql(
            url, "INSERT INTO tenants (slug, name, created_at) VALUES ('globex', 'Globex', 'now') RETURNING id")
        #expect(id == "2\n")
    }
}
