import FlagpoleCore
@testable import FlagpoleStore
import Foundation
import GRDB

/// The real configuration files copied from public apps, in Tests/Fixtures/real.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/real")

    static let commented = "vantientu1703-f305791-Features-with-comment.json"

    /// Every fixture's file name.
    static var all: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()) ?? []
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

extension FeatureStore {
    /// A fresh in-memory store with tenants acme and globex.
    static func makeWithTenants() async throws -> FeatureStore {
        let store = try FeatureStore.inMemory()
        try await store.createTenant(EnvironmentPath.acmeProduction.tenant)
        try await store.createTenant(EnvironmentPath.globexProduction.tenant)
        return store
    }

    /// Imports `text` as a file into acme/production.
    @discardableResult
    func importText(_ text: String, into path: EnvironmentPath = .acmeProduction, strict: Bool = false, dryRun: Bool = false) async throws -> ImportOutcome {
        try await importDocument(Array(text.utf8), into: path, options: ImportOptions(isDryRun: dryRun, isStrict: strict, actor: "test"))
    }

    /// Everything an import could change, to prove that a refused one changed nothing.
    func fingerprint(of path: EnvironmentPath = .acmeProduction) async throws -> String {
        try await read { db in
            let scope = try db.scope(of: path)
            var parts: [String] = []
            for table in ["features", "variations", "document_extras", "revisions", "audit"] {
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table) WHERE tenant_id = ? ORDER BY id", arguments: [scope.tenant.id])
                parts.append("\(table): \(rows)")
            }
            return parts.joined(separator: "\n")
        }
    }

    /// The stored features of an environment, with their salts.
    func storedFeatures(of path: EnvironmentPath = .acmeProduction) async throws -> [StoredFeature] {
        try await read { db in try db.storedFeatures(in: db.scope(of: path)) }
    }

    /// The audit rows of revision `number`.
    func auditRows(ofRevision number: Int, in path: EnvironmentPath = .acmeProduction) async throws -> [AuditRecord] {
        try await read { db in
            let scope = try db.scope(of: path)
            let revision = try db.revisionRecord(number, in: scope)!
            return try AuditRecord.owned(by: scope.tenant).filter(AuditRecord.Columns.revisionID == revision.id!).order(Column("id")).fetchAll(db)
        }
    }
}
