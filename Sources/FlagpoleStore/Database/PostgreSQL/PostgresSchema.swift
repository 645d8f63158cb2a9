import FlagpoleMigrations
import PostgresNIO

/// The schema of a PostgreSQL store: the numbered files of `Migrations/PostgreSQL`, the same
/// versions as SQLite's, applied in order and recorded in `flagpole_migrations`.
enum PostgresSchema {
    /// Serialises migrations between instances starting at once: the first applies them, the
    /// others wait for its commit and find nothing pending. A transaction-scoped advisory lock,
    /// so a lost connection releases it.
    static let migrationLock: Int64 = 0x666c_6167_706f_6c65  // "flagpole"

    static let createLedger: PostgresQuery = """
        CREATE TABLE IF NOT EXISTS flagpole_migrations (
            identifier text COLLATE "C" PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// Which migrations the database has, without migrating it.
    static func status(_ session: PostgresSession) async throws -> MigrationStatus {
        let exists = try await session.rows("SELECT to_regclass('flagpole_migrations') IS NOT NULL")
        let hasLedger = try exists.first?.decode(Bool.self) ?? false
        let applied = hasLedger ? try await appliedIdentifiers(session) : []
        let known = SchemaMigrations.postgres.map(\.identifier)
        return MigrationStatus(
            applied: applied.filter(known.contains),
            pending: known.filter { !applied.contains($0) },
            unknown: applied.filter { !known.contains($0) })
    }

    /// Applies the pending migrations in one transaction, and returns their identifiers.
    ///
    /// - throws: `StorageError.databaseTooNew` when the database has migrations this version
    ///   does not know; nothing is applied then.
    @discardableResult
    static func migrate(_ session: PostgresSession) async throws -> [String] {
        try await session.transaction { try await applyPending(session) }
    }

    /// Applies the pending migrations inside the caller's transaction, which then holds the
    /// migration lock until it ends: a copy's rows and the schema they need commit together.
    static func applyPending(_ session: PostgresSession) async throws -> [String] {
        try await session.execute("SELECT pg_advisory_xact_lock(\(migrationLock))")
        try await session.execute(createLedger)
        let applied = Set(try await appliedIdentifiers(session))
        let known = SchemaMigrations.postgres.map(\.identifier)
        let unknown = applied.subtracting(known).sorted()
        guard unknown.isEmpty else { throw StorageError.databaseTooNew(unknownMigrations: unknown) }
        var newlyApplied: [String] = []
        for migration in SchemaMigrations.postgres where !applied.contains(migration.identifier) {
            try await session.run(script: migration.sql)
            try await session.execute("INSERT INTO flagpole_migrations (identifier) VALUES (\(migration.identifier))")
            newlyApplied.append(migration.identifier)
        }
        return newlyApplied
    }

    private static func appliedIdentifiers(_ session: PostgresSession) async throws -> [String] {
        try await session.rows("SELECT identifier FROM flagpole_migrations ORDER BY identifier").map {
            try $0.decode(String.self)
        }
    }
}
