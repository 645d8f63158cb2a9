import FlagpoleMigrations
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Migrations")
struct MigrationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    @Test("A fresh file reaches the latest schema version, in WAL mode")
    func freshDatabaseIsMigrated() async throws {
        let path = directory.appendingPathComponent("fresh.sqlite").path
        let store = try FeatureStore.open(atPath: path)
        try await store.access.createTenant(.init(rawValue: "acme"))

        let status = try FeatureStore.migrationStatus(atPath: path)
        #expect(status.applied == SchemaMigrations.all.map(\.identifier))
        #expect(status.pending.isEmpty)
        #expect(status.unknown.isEmpty)
        let journalMode = try await store.read { db in try db.value(String.self, "PRAGMA journal_mode") }
        #expect(journalMode == "wal")
    }

    @Test("Reopening an up-to-date file keeps its data")
    func reopeningKeepsData() async throws {
        let path = directory.appendingPathComponent("reopen.sqlite").path
        try await FeatureStore.open(atPath: path).access.createTenant(.init(rawValue: "acme"))
        let reopened = try FeatureStore.open(atPath: path)
        #expect(try await reopened.access.tenants().map(\.slug.rawValue) == ["acme"])
    }

    @Test("A database migrated by a newer version is refused with a clear message, and left alone")
    func newerDatabaseIsRefused() async throws {
        let path = directory.appendingPathComponent("newer.sqlite").path
        try await FeatureStore.open(atPath: path).access.createTenant(.init(rawValue: "acme"))
        // A newer Flagpole would have recorded a migration this version does not know.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_the_future')")
        }
        try queue.close()

        #expect {
            try FeatureStore.open(atPath: path)
        } throws: { error in
            guard case StorageError.databaseTooNew(let unknown) = error else { return false }
            return unknown == ["9999_from_the_future"] && "\(error)".contains("newer version of Flagpole")
        }
        #expect(try FeatureStore.migrationStatus(atPath: path).unknown == ["9999_from_the_future"])
    }

    @Test("A read-only open of a missing file is refused, naming the path and what creates one, and creates nothing")
    func missingFileIsRefusedReadOnly() throws {
        let path = directory.appendingPathComponent("typo.sqlite").path

        #expect {
            try FeatureStore.open(atPath: path, access: .readOnly)
        } throws: { error in
            guard case StorageError.databaseNotFound(let missing) = error else { return false }
            let message = "\(error)"
            return missing == path && message.contains("There is no database at \(path).")
                && message.contains("`flagpole tenant create SLUG`") && message.contains("`flagpole migrate`")
        }
        #expect {
            try FeatureStore.migrationStatus(atPath: path)
        } throws: { error in
            guard case StorageError.databaseNotFound(path) = error else { return false }
            return true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("A file that is not a database is refused, not overwritten")
    func garbageFileIsRefused() throws {
        let path = directory.appendingPathComponent("garbage.sqlite").path
        let garbage = Data(repeating: 0x42, count: 4096)
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: StorageError.self) { try FeatureStore.open(atPath: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }
}
