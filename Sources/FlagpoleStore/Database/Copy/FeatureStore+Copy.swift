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
        let from = try await source.openCopySource()
        do {
            let to = try await destination.openCopyDestination(tables: tables)
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

/// Where a copy reads, in one read transaction: a SQLite file opened read-only
/// (`SQLiteCopyReader`), or a PostgreSQL session in `REPEATABLE READ` (`PostgresCopyEnd`).
protocol CopySource: Sendable {
    /// Hands every row of `tables` to `consume`, a page at a time, table by table in order.
    func read(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    ) async throws

    func close() async
}

/// Where a copy writes, in one transaction that `keep` commits and `abandon` rolls back: a new
/// SQLite file under a hidden name (`SQLiteCopyWriter`), or an empty PostgreSQL database
/// (`PostgresCopyDestination`).
protocol CopyDestination: Sendable {
    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws
    /// Puts back what loading went faster without (keys, indexes, sequences).
    func finishLoading() async throws
    /// Reads back what was written, as `CopySource.read` reads.
    func readBack(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    ) async throws
    func keep() async throws
    func abandon() async
}

extension DatabaseAddress {
    /// The database here as a copy's source; one that needs migrating is refused, as every
    /// reader refuses it.
    func openCopySource() async throws -> any CopySource {
        switch self {
        case .sqlite(let path):
            return SQLiteCopyReader(reader: try FeatureStore.open(atPath: path, access: .readOnly).sqliteWriter())
        case .postgres(let postgres): return try await PostgresCopyEnd.openSource(postgres)
        }
    }

    /// The database here as a copy's destination: a path where no file exists yet, or an empty
    /// PostgreSQL database (its schema written in the copy's transaction).
    func openCopyDestination(tables: [CopyTable]) async throws -> any CopyDestination {
        switch self {
        case .sqlite(let path): try SQLiteCopyWriter.create(atPath: path, tables: tables)
        case .postgres(let postgres): try await PostgresCopyDestination.open(postgres, tables: tables)
        }
    }
}
