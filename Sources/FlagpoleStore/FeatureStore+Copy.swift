import Foundation
import Synchronization

/// What `flagpole copy` moved: each table's rows and the SHA-256 of its rows in key order, equal
/// on both sides (it reports only after reading the destination back).
public struct CopyReport: Sendable, Hashable {
    public struct Table: Sendable, Hashable {
        public var name: String
        public var rows: Int
        public var sha256: String
    }

    public var tables: [Table]
    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
}

extension FeatureStore {
    /// Copies a whole database into a new one, between SQLite and PostgreSQL in either direction.
    ///
    /// The source is read in one read transaction, so the copy is the store as it was at one
    /// moment while servers keep writing. The destination is a SQLite path where no file exists
    /// yet, or an empty PostgreSQL database; the migrations it lacks are applied first. Its rows
    /// are written, then read back and compared table by table, count and SHA-256, with what was
    /// read from the source, and only then kept: a new SQLite file appears at its path, the
    /// PostgreSQL transaction commits. A failed copy keeps nothing of the data.
    ///
    /// - parameter progress: Told of each page of rows written, with its table.
    /// - throws: `CopyError`, `StorageError` (a source that needs migrating, a database that
    ///   can't be opened), `BackupError.cannotWrite`.
    public static func copy(
        from source: DatabaseAddress, to destination: DatabaseAddress,
        progress: @escaping @Sendable (_ table: String, _ rows: Int) -> Void = { _, _ in }
    ) async throws -> CopyReport {
        let tables = try CopyTable.all()
        let from = try await CopySource.open(source)
        do {
            let to = try await CopyDestination.open(destination, tables: tables)
            // One page is written while the next is read: the source's reading and the
            // destination's writing overlap, in order, never more than one page apart.
            let writing = Mutex<Task<Void, any Error>?>(nil)
            do {
                let read = Mutex<[String: TableChecksum]>([:])
                try await from.read(tables) { table, page in
                    read.withLock { $0[table.name, default: TableChecksum()].add(page) }
                    try await writing.withLock { $0 }?.value
                    let write = Task {
                        try await to.insert(page, into: table)
                        progress(table.name, page.count)
                    }
                    writing.withLock { $0 = write }
                }
                try await writing.withLock { $0 }?.value
                try await to.finishLoading()
                let written = Mutex<[String: TableChecksum]>([:])
                try await to.readBack(tables) { table, page in
                    written.withLock { $0[table.name, default: TableChecksum()].add(page) }
                }
                let report = try compare(tables, read: read.withLock { $0 }, written: written.withLock { $0 })
                try await to.keep()
                await from.close()
                return report
            } catch {
                // A page still being written finishes before its transaction is rolled back.
                _ = try? await writing.withLock { $0 }?.value
                await to.abandon()
                throw error
            }
        } catch {
            await from.close()
            throw error
        }
    }

    private static func compare(
        _ tables: [CopyTable], read: [String: TableChecksum], written: [String: TableChecksum]
    ) throws -> CopyReport {
        var report = CopyReport(tables: [])
        for table in tables {
            let expected = read[table.name] ?? TableChecksum()
            let found = written[table.name] ?? TableChecksum()
            guard expected.rows == found.rows, expected.hex == found.hex else {
                throw CopyError.verificationFailed(
                    table: table.name, expected: "\(expected.rows) rows, SHA-256 \(expected.hex)",
                    found: "\(found.rows) rows, SHA-256 \(found.hex)")
            }
            report.tables.append(CopyReport.Table(name: table.name, rows: expected.rows, sha256: expected.hex))
        }
        return report
    }
}

/// Where a copy reads: a SQLite file opened read-only, or a PostgreSQL session inside one
/// `REPEATABLE READ` transaction.
private enum CopySource {
    case sqlite(SQLiteCopyReader)
    case postgres(PostgresCopyEnd)

    static func open(_ address: DatabaseAddress) async throws -> CopySource {
        switch address {
        case .sqlite(let path):
            // Read-only: refuses a missing file, and one that needs migrating, as every reader does.
            let store = try FeatureStore.open(atPath: path, access: .readOnly)
            return .sqlite(SQLiteCopyReader(reader: try store.sqliteWriter()))
        case .postgres(let postgres):
            let session = try await PostgresSession.open(postgres)
            do {
                let status = try await PostgresSchema.status(session)
                guard status.unknown.isEmpty else {
                    throw StorageError.databaseTooNew(unknownMigrations: status.unknown)
                }
                guard status.pending.isEmpty else {
                    throw StorageError.databaseNeedsMigration(path: postgres.description, pending: status.pending)
                }
                try await session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return .postgres(try await PostgresCopyEnd.open(session))
            } catch {
                await session.close()
                throw error
            }
        }
    }

    func read(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    )
        async throws
    {
        switch self {
        case .sqlite(let reader): try await reader.read(tables, consume)
        case .postgres(let end): try await end.read(tables, consume)
        }
    }

    func close() async {
        if case .postgres(let end) = self { await end.session.close() }
    }
}

/// Where a copy writes: a new SQLite file under a hidden name, or an empty PostgreSQL database
/// inside one transaction.
private enum CopyDestination {
    case sqlite(SQLiteCopyWriter)
    case postgres(PostgresCopyEnd, PostgresCopyEnd.SetAside)

    static func open(_ address: DatabaseAddress, tables: [CopyTable]) async throws -> CopyDestination {
        switch address {
        case .sqlite(let path):
            return .sqlite(try SQLiteCopyWriter.create(atPath: path, tables: tables))
        case .postgres(let postgres):
            let session = try await PostgresSession.open(postgres)
            do {
                // The schema, when the database lacks it, is written in the copy's transaction:
                // a copy that fails leaves the database as it found it.
                try await session.execute("BEGIN")
                try await PostgresCopyEnd.refuseOtherTables(session, tables: tables)
                _ = try await PostgresSchema.applyPending(session)
                let end = try await PostgresCopyEnd.open(session)
                try await end.checkEmpty(tables)
                return .postgres(end, try await end.setAsideKeysAndIndexes())
            } catch {
                try? await session.execute("ROLLBACK")
                await session.close()
                throw error
            }
        }
    }

    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws {
        switch self {
        case .sqlite(let writer): try await writer.insert(rows, into: table)
        case .postgres(let end, _): try await end.insert(rows, into: table)
        }
    }

    func finishLoading() async throws {
        switch self {
        case .sqlite(let writer):
            try await writer.finishLoading()
        case .postgres(let end, let setAside):
            try await end.putBack(setAside)
            try await end.advanceSequences()
        }
    }

    func readBack(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    )
        async throws
    {
        switch self {
        case .sqlite(let writer): try await writer.reader.read(tables, consume)
        case .postgres(let end, _): try await end.read(tables, consume)
        }
    }

    func keep() async throws {
        switch self {
        case .sqlite(let writer):
            try writer.finish()
        case .postgres(let end, _):
            try await end.session.execute("COMMIT")
            await end.session.close()
        }
    }

    func abandon() async {
        switch self {
        case .sqlite(let writer):
            writer.abandon()
        case .postgres(let end, _):
            try? await end.session.execute("ROLLBACK")
            await end.session.close()
        }
    }
}
