import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Migration 0002 (assignments)")
struct AssignmentMigrationTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-0002-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    @Test("A file at schema 0001 gains the assignment tables when opened, and then records assignments")
    func schemaOneFileIsMigrated() async throws {
        // Given a file migrated only to 0001
        let path = directory.appendingPathComponent("v1.sqlite").path
        let queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        let first = SchemaMigrations.all[0]
        migrator.registerMigration(first.identifier) { db in try db.execute(sql: first.sql) }
        try migrator.migrate(queue)
        try queue.close()
        let before = try FeatureStore.migrationStatus(atPath: path)
        #expect(before.applied == ["0001_initial"])
        #expect(before.pending == SchemaMigrations.all.dropFirst().map(\.identifier))

        // When the store opens it
        let store = try FeatureStore.open(atPath: path)

        // Then 0002 and later are applied and the new tables work
        let after = try FeatureStore.migrationStatus(atPath: path)
        #expect(after.applied == SchemaMigrations.all.map(\.identifier))
        #expect(after.pending.isEmpty)
        try await store.access.createTenant(TenantSlug(rawValue: "acme"))
        try await store.importText(#"{"features": [{"name": "t", "test-variations": ["A", "B"]}]}"#)
        let summary = try await store.assignments.assign(UserID.numbered(10), to: "t", in: .acmeProduction)
        #expect(summary.recorded == 10)
        #expect(try await store.allAssignmentEvents().count == 10)
        let tables = try await store.read { db in
            try ["assignments", "assignment_events", "unlocks", "unlock_events"].filter {
                try db.sqlite!.tableExists($0)
            }
        }
        #expect(tables.count == 4)
    }

    @Test("A file made by this version lists 0002_assignments as applied")
    func freshFileHasAssignments() async throws {
        let path = directory.appendingPathComponent("fresh.sqlite").path
        try await FeatureStore.open(atPath: path).access.createTenant(TenantSlug(rawValue: "acme"))
        let status = try FeatureStore.migrationStatus(atPath: path)
        #expect(status.applied.contains("0002_assignments"))
        #expect(status.pending.isEmpty)
    }
}
