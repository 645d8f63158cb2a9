import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Backup and restore")
struct BackupTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    // MARK: Backup

    @Test("Backups taken while another task keeps importing and assigning are consistent copies of one revision")
    func backupWhileWriting() async throws {
        // Given a file store that a writer task keeps changing
        let source = try FeatureStore.open(atPath: path("live.sqlite"))
        try await source.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await source.access.createTenant(EnvironmentPath.globexProduction.tenant)
        try await source.importText(ConcurrentWrites.document(0))
        try await source.importText(ConcurrentWrites.document(0), into: .globexProduction)
        // Some megabytes, so that copying takes a while; the writer leaves these users alone.
        _ = try await source.assignments.assign(
            UserID.numbered(30_000, prefix: "settled"), to: "big", in: .acmeProduction)
        let (writes, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        let progress = WriterProgress()
        let writer = Task {
            defer { continuation.finish() }
            var step = 1
            while !progress.isStopped {
                try await ConcurrentWrites.step(step, on: source)
                progress.finished(step)
                continuation.yield(step)
                step += 1
            }
            return step - 1
        }

        // When five backups are taken, each after at least one more write step
        var copies: [(path: String, summary: DatabaseSummary, stepsDuring: Int)] = []
        var seen = 0
        var iterator = writes.makeAsyncIterator()
        for index in 0..<5 {
            while progress.steps <= seen {
                guard await iterator.next() != nil else { break }
            }
            seen = progress.steps
            let copy = path("copy-\(index).sqlite")
            let summary = try await source.backup(toPath: copy)
            copies.append((copy, summary, progress.steps - seen))
        }
        progress.stop()
        let totalSteps = try await writer.value

        // Then each copy is whole, standalone, and equal to the source at its latest revisions
        #expect(totalSteps >= 5)
        for (copyPath, summary, _) in copies {
            #expect(try integrityCheck(copyPath) == ["ok"])
            #expect(!FileManager.default.fileExists(atPath: copyPath + "-wal"))
            #expect(try journalMode(copyPath) == "delete")
            #expect(summary.byteCount == (try FileManager.default.attributesOfItem(atPath: copyPath)[.size] as? Int))
            #expect(summary.schemaVersion == SchemaMigrations.all.last?.identifier)
            #expect(summary.tenantCount == 2)

            let copy = try FeatureStore.open(atPath: copyPath, access: .readOnly)
            for path in [EnvironmentPath.acmeProduction, .globexProduction] {
                let numbers = try await copy.catalog.revisions(of: path).map(\.number).sorted()
                #expect(numbers == Array(1...numbers.count), "revisions of \(path) in \(copyPath) are not contiguous")
                #expect(summary.environments.first(where: { $0.path == path })?.latestRevision == numbers.count)
                let copied = try await copy.catalog.revision(of: path)
                #expect(copied.document == (try await source.catalog.revision(copied.number, of: path).document))
                // The tables were copied at the same moment as the revisions.
                #expect(try await copy.catalog.snapshot(of: path).document.rendered() == copied.document)
            }
            // No user was assigned under a revision the copy lacks.
            let latestAssignment = try await copy.read { db in
                try db.value(Int.self, "SELECT max(revision) FROM assignments") ?? 0
            }
            #expect(latestAssignment <= (try await copy.catalog.revision(of: .acmeProduction).number))
        }
        print(
            "backupWhileWriting: \(totalSteps) write steps in all; steps finished during each backup: \(copies.map(\.stepsDuring)); copies of \(copies.map(\.summary.byteCount)) bytes"
        )
    }

    @Test("A backup refuses to replace a file unless told to, and never the database itself")
    func backupRefusesExistingFiles() async throws {
        let databasePath = path("live.sqlite")
        let store = try FeatureStore.open(atPath: databasePath)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        let existing = path("existing.sqlite")
        let keep = Data("keep me".utf8)
        try keep.write(to: URL(fileURLWithPath: existing))

        await #expect {
            try await store.backup(toPath: existing)
        } throws: { error in
            guard case BackupError.backupFileExists(let path) = error else { return false }
            return path == existing && "\(error)".contains("--force")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == keep)

        let summary = try await store.backup(toPath: existing, replacingExisting: true)
        #expect(summary.tenantCount == 1)
        #expect(try integrityCheck(existing) == ["ok"])

        await #expect {
            try await store.backup(toPath: databasePath, replacingExisting: true)
        } throws: { error in
            guard case BackupError.sameDatabase = error else { return false }
            return true
        }
        await #expect(throws: BackupError.self) { try await store.backup(toPath: path("no-such-folder/copy.sqlite")) }
        #expect(try await store.access.tenants().count == 1)
        #expect(try leftovers() == [])
    }

    // MARK: Restore

    @Test(
        "Restore round trip: the target holds exactly the source's rows, a store already open on it sees them, and writes go on"
    )
    func restoreRoundTrip() async throws {
        // Given a source with every kind of data, and its backup
        let source = try await makeStoreWithData(at: path("source.sqlite"))
        let key = try await source.access.createKey(for: .tenant(TenantSlug(rawValue: "acme")), role: .editor)
        let session = try #require(try await source.access.openSession(withKey: key.secret))
        let backup = path("backup.sqlite")
        try await source.backup(toPath: backup)
        try await source.access.closeSession(session.token)

        // And a target with other data, open in another store (as a server would have it)
        let targetPath = path("target.sqlite")
        let server = try FeatureStore.open(atPath: targetPath)
        try await server.access.createTenant(TenantSlug(rawValue: "initech"))
        #expect(try await server.access.tenants().map(\.slug.rawValue) == ["initech"])

        // When the backup is restored over it
        let outcome = try await FeatureStore.restore(fromPath: backup, intoPath: targetPath, replacingData: true)

        // Then the target holds the source's rows, and the open store reads them
        #expect(outcome.replaced.tenantCount == 1)
        #expect(outcome.restored.tenantCount == 2)
        #expect(outcome.fileSchemaVersion == SchemaMigrations.all.last?.identifier)
        #expect(try await contents(of: server) == (try await contents(of: source)))
        #expect(try await server.access.tenants().map(\.slug.rawValue) == ["acme", "globex"])
        #expect(
            try await server.catalog.revision(of: .acmeProduction).document
                == (try await source.catalog.revision(of: .acmeProduction).document))
        #expect(try integrityCheck(targetPath) == ["ok"])
        #expect(try leftovers() == [])
        // Keys come back; sign-ins do not (one signed out since the backup must stay out)
        #expect(try await server.access.identity(ofKey: key.secret) != nil)
        #expect(try await server.access.sessionIdentity(session.token) == nil)

        // And new writes land after the restored revisions
        let next = try await server.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [50, 50]}]}"#)
        #expect(next.status == .applied(revision: 4))
        let summary = try await server.assignments.assign(
            UserID.numbered(5, prefix: "new"), to: "t", in: .acmeProduction)
        #expect(summary.recorded == 5)
        _ = try await server.access.createKey(for: .tenant(TenantSlug(rawValue: "acme")), role: .editor)
    }

    @Test(
        "Every restore raises the store generation above both files', so servers drop what they cached; pinned documents follow at once"
    )
    func restoreRaisesTheGeneration() async throws {
        let source = try await makeStoreWithData(at: path("source.sqlite"))
        let backup = path("backup.sqlite")
        try await source.backup(toPath: backup)
        // The target moves on past the backup: revision 4 here is not revision 4 there.
        let target = try FeatureStore.open(atPath: path("target.sqlite"))
        try await FeatureStore.restore(fromPath: backup, intoPath: path("target.sqlite"))
        try await target.importText(
            #"{"features": [{"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]}]}"#)
        let user = UserID(rawValue: "restored-user")
        let before = try await target.assignments.pinnedDocument(for: user, in: .acmeProduction)
        let generation = try await target.access.deliveryState(of: .acmeProduction).generation
        #expect(generation == 1)

        try await FeatureStore.restore(fromPath: backup, intoPath: path("target.sqlite"), replacingData: true)

        #expect(try await target.access.deliveryState(of: .acmeProduction).generation == 2)
        #expect(
            try await source.access.deliveryState(of: .acmeProduction).generation == 0,
            "the backup's file is not touched")
        let after = try await target.assignments.pinnedDocument(for: user, in: .acmeProduction)
        #expect(after.revision == before.revision - 1)
        #expect(after.bytes != before.bytes)
        #expect(after.bytes.starts(with: try await source.catalog.revision(of: .acmeProduction).document.prefix(20)))
    }

    @Test("Restore into a database that holds tenants is refused unless told to, and changes nothing")
    func restoreRefusesToReplaceData() async throws {
        let source = try await makeStoreWithData(at: path("source.sqlite"))
        let backup = path("backup.sqlite")
        try await source.backup(toPath: backup)
        let targetPath = path("target.sqlite")
        let target = try FeatureStore.open(atPath: targetPath)
        try await target.access.createTenant(TenantSlug(rawValue: "initech"))
        let before = try fileBytes(targetPath)

        await #expect {
            try await target.restore(fromPath: backup)
        } throws: { error in
            guard case BackupError.restoreWouldReplaceData(_, let tenants) = error else { return false }
            return tenants.map(\.rawValue) == ["initech"] && "\(error)".contains("--force")
        }
        #expect(try fileBytes(targetPath) == before)
        #expect(try await target.access.tenants().map(\.slug.rawValue) == ["initech"])
        #expect(try leftovers() == [])
    }

    @Test("A refused file leaves the target byte for byte as it was", arguments: RefusedFile.allCases)
    func restoreRefusesFile(_ kind: RefusedFile) async throws {
        // Given a target with data and a bad file
        let source = try await makeStoreWithData(at: path("source.sqlite"))
        let file = path("file.sqlite")
        try await source.backup(toPath: file)
        try kind.spoil(file)
        let targetPath = path("target.sqlite")
        let target = try await makeStoreWithData(at: targetPath)
        let before = try fileBytes(targetPath)
        let rowsBefore = try await contents(of: target)

        // When it is restored, even with data replacement allowed
        await #expect {
            try await target.restore(fromPath: file, replacingData: true)
        } throws: { error in
            // Then it is refused for the right reason, with a message naming the file and a way out
            kind.matches(error) && "\(error)".contains(file) && "\(error)".contains("Nothing was restored")
        }
        #expect(try fileBytes(targetPath) == before)
        #expect(try await contents(of: target) == rowsBefore)
        #expect(try leftovers() == [])
    }

    @Test("A file refused by the static restore creates no database")
    func refusedRestoreCreatesNothing() async throws {
        let file = path("garbage.sqlite")
        try RefusedFile.garbage.spoil(file)
        let targetPath = path("target.sqlite")
        await #expect(throws: BackupError.self) { try await FeatureStore.restore(fromPath: file, intoPath: targetPath) }
        #expect(!FileManager.default.fileExists(atPath: targetPath))
        await #expect(throws: BackupError.self) {
            try await FeatureStore.restore(fromPath: targetPath, intoPath: targetPath)
        }
    }

    @Test("A backup with another page size is restored, converted to the target's")
    func restoreConvertsPageSize() async throws {
        let source = try await makeStoreWithData(at: path("source.sqlite"))
        let file = path("backup.sqlite")
        try await source.backup(toPath: file)
        let queue = try DatabaseQueue(path: file)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 8192")
            try db.execute(sql: "VACUUM")
        }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") } == 8192)
        try queue.close()

        let target = try FeatureStore.open(atPath: path("target.sqlite"))
        let outcome = try await target.restore(fromPath: file)
        #expect(outcome.restored.tenantCount == 2)
        #expect(try await contents(of: target) == (try await contents(of: source)))
        #expect(try integrityCheck(path("target.sqlite")) == ["ok"])
    }

    // MARK: Support

    /// A store with two tenants, three revisions, assignments, an override, unlocks and a key.
    private func makeStoreWithData(at path: String) async throws -> FeatureStore {
        let store = try FeatureStore.open(atPath: path)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await store.access.createTenant(EnvironmentPath.globexProduction.tenant)
        _ = try await store.catalog.importDocument(
            try Fixtures.bytes("rwbutler-HEAD-Features.json"), into: .acmeProduction,
            options: ImportOptions(actor: "test"))
        let edit = EditOptions(actor: "test")
        _ = try await store.assignments.assign(UserID.numbered(200), to: "Example A/B Test", in: .acmeProduction)
        _ = try await store.catalog.setBiases([30, 70], of: "Example A/B Test", in: .acmeProduction, options: edit)
        _ = try await store.catalog.setEnabled(
            false, feature: "Example Feature Flag", in: .acmeProduction, options: edit)
        _ = try await store.assignments.setOverride(
            "Example A/B Test", user: UserID(rawValue: "qa"), variation: "Group B", in: .acmeProduction)
        _ = try await store.assignments.setUnlocked(
            true, feature: "Example Unlock Flag", user: UserID(rawValue: "buyer"), source: "p-1", actor: "test",
            in: .acmeProduction)
        try await store.importText(#"{"features": [{"name": "g", "enabled": true}]}"#, into: .globexProduction)
        _ = try await store.access.createKey(
            for: .tenant(EnvironmentPath.globexProduction.tenant), role: .reader, name: "ci")
        return store
    }

    /// Every row of every table, in order: two databases with equal contents give equal text.
    private func contents(of store: FeatureStore) async throws -> String {
        try await store.sqliteWriter().read { db in
            // The generation is the one thing a restore changes on purpose (see `restoreRaisesTheGeneration`).
            let tables = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'store_generation' ORDER BY name
                    """)
            return try tables.map { table in
                // Some tables have no rowid: rows are compared as sorted text.
                "\(table): \(try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map(\.description).sorted())"
            }.joined(separator: "\n")
        }
    }

    /// The database file and its WAL, as bytes.
    private func fileBytes(_ path: String) throws -> [Data?] {
        [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
    }

    /// Files a backup or a restore left behind in the test's folder.
    private func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }
}

/// A file `restore` must refuse, and how to make one from a good backup.
enum RefusedFile: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case missing, garbage, damagedPage, truncated, notFlagpole, newerSchema

    var testDescription: String { rawValue }

    func spoil(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        switch self {
        case .missing:
            try? FileManager.default.removeItem(at: url)
        case .garbage:
            try Data(String(repeating: "not a database\n", count: 600).utf8).write(to: url)
        case .damagedPage:
            try damageIndexPage(path)
            // The damage must be one SQLite's integrity check sees.
            #expect(try integrityCheck(path) != ["ok"])
        case .truncated:
            // A copy cut off in the middle, as `cp` killed halfway leaves it.
            let bytes = try Data(contentsOf: url)
            try bytes.prefix(bytes.count / 2).write(to: url)
        case .notFlagpole:
            try FileManager.default.removeItem(at: url)
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('hello')"
                )
            }
            try queue.close()
        case .newerSchema:
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
            }
            try queue.close()
        }
    }

    func matches(_ error: any Error) -> Bool {
        switch (self, error as? BackupError) {
        case (.missing, .cannotRead?): true
        case (.garbage, .notADatabase?): true
        case (.damagedPage, .damagedFile?), (.truncated, .damagedFile?): true
        case (.notFlagpole, .notAFlagpoleDatabase?): true
        case (.newerSchema, .fileTooNew(_, let unknown)?): unknown == ["9999_from_the_future"]
        default: false
        }
    }

    /// Overwrites 16 bytes in the middle of the cell area of an index's root page with other
    /// bytes: the keys no longer match their rows.
    private func damageIndexPage(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        let (root, pageSize) = try queue.read { db in
            (
                try Int.fetchOne(
                    db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'assignment_events_by_user'")!,
                try Int.fetchOne(db, sql: "PRAGMA page_size")!
            )
        }
        try queue.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let page = (root - 1) * pageSize
        let cellArea = Int(bytes[page + 5]) << 8 | Int(bytes[page + 6])
        let middle = page + cellArea + (pageSize - cellArea) / 2
        bytes.replaceSubrange(middle..<middle + 16, with: Array(repeating: UInt8(0x5A), count: 16))
        try bytes.write(to: URL(fileURLWithPath: path))
    }
}

/// What the writer of `backupWhileWriting` does: every step is one import (a new revision of
/// acme/production, every third step of globex/production too, re-evaluating the recorded users
/// of "t") and one assignment of 20 new users to "t".
enum ConcurrentWrites {
    static func document(_ step: Int) -> String {
        let bias = 10 + step % 80
        return #"""
            {"features": [
                {"name": "t", "test-variations": ["A", "B"], "test-biases": [\#(bias), \#(100 - bias)]},
                {"name": "f", "enabled": \#(step % 2 == 0)},
                {"name": "big", "test-variations": ["A", "B"], "test-biases": [50, 50]}
            ]}
            """#
    }

    static func step(_ step: Int, on store: FeatureStore) async throws {
        try await store.importText(document(step))
        if step % 3 == 0 { try await store.importText(document(step), into: .globexProduction) }
        _ = try await store.assignments.assign(
            UserID.numbered(20, prefix: "step-\(step)"), to: "t", in: .acmeProduction)
    }
}

/// How far a writer task got, and whether it should stop, shared with the task that watches it.
final class WriterProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var lastStep = 0
    private var stopped = false

    var steps: Int {
        lock.lock()
        defer { lock.unlock() }
        return lastStep
    }

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func finished(_ step: Int) {
        lock.lock()
        defer { lock.unlock() }
        lastStep = step
    }

    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopped = true
    }
}

/// The rows of `PRAGMA integrity_check` for the file at `path`, or the error SQLite stopped
/// the check with when it found the file malformed.
func integrityCheck(_ path: String) throws -> [String] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    do {
        return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
        return ["\(error.resultCode): \(error.message ?? "")"]
    }
}

func journalMode(_ path: String) throws -> String? {
    var configuration = Configuration()
    configuration.readonly = true
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    defer { try? queue.close() }
    return try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
}
