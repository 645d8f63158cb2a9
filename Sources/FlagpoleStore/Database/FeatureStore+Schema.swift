import FlagpoleMigrations
import Foundation

extension FeatureStore {
    /// Which migrations the database at `address` has, without migrating it; `nil` when no
    /// SQLite file exists there yet.
    ///
    /// - throws: `StorageError.cannotOpen`.
    public static func migrationStatus(at address: DatabaseAddress) async throws -> MigrationStatus? {
        switch address {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return try migrationStatus(atPath: path)
        case .postgres(let postgres):
            return try await PostgresSession.with(postgres, PostgresSchema.status)
        }
    }

    /// Applies the migrations the database at `address` lacks, creating a SQLite file when there
    /// is none, and returns the identifiers applied. On PostgreSQL they apply in one transaction,
    /// one instance at a time.
    ///
    /// - throws: `StorageError.databaseTooNew`, `StorageError.cannotOpen`, `StorageError.storage`.
    @discardableResult
    public static func migrate(_ address: DatabaseAddress) async throws -> [String] {
        switch address {
        case .sqlite(let path):
            let before = try await migrationStatus(at: address)
            _ = try open(atPath: path)
            return before?.pending ?? SchemaMigrations.all.map(\.identifier)
        case .postgres(let postgres):
            return try await PostgresSession.with(postgres) { try await PostgresSchema.migrate($0) }
        }
    }
}
