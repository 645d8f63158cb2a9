import Foundation
import GRDB
import Synchronization

/// Reads a SQLite database's tables for a copy, in key order, inside one read transaction:
/// every table as it was at one moment, however much other connections write meanwhile.
struct SQLiteCopyReader: Sendable {
    let reader: any DatabaseReader

    func read(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    )
        async throws
    {
        try await FeatureStore.translatingErrorsAsync {
            try await reader.read { db in
                for table in tables {
                    let cursor = try Row.fetchCursor(
                        db, sql: "SELECT \(table.quotedColumns) FROM \"\(table.name)\" ORDER BY \(table.orderBy)")
                    var page: [[CopyValue]] = []
                    page.reserveCapacity(CopyTable.pageSize)
                    while let row = try cursor.next() {
                        page.append(try Self.values(of: row, in: table))
                        if page.count == CopyTable.pageSize {
                            let full = page
                            try Self.await { try await consume(table, full) }
                            page.removeAll(keepingCapacity: true)
                        }
                    }
                    if !page.isEmpty {
                        let last = page
                        try Self.await { try await consume(table, last) }
                    }
                }
            }
        }
    }

    /// Runs `work` and waits for it on this thread: a GRDB read runs on its connection's own
    /// dispatch queue, never on Swift's cooperative pool, so its transaction can stay open
    /// while each page is written elsewhere.
    private static func await(_ work: @escaping @Sendable () async throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        Task {
            do { try await work() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// A row's values in their columns' kinds. SQLite keeps what it is given where the declared
    /// type allows (a BLOB column may hold text): the kind decides, so both backends agree.
    static func values(of row: Row, in table: CopyTable) throws -> [CopyValue] {
        try table.columns.indices.map { index in
            let column = table.columns[index]
            let value: DatabaseValue = row[index]
            switch (column.kind, value.storage) {
            case (_, .null): return .null
            case (.integer, .int64(let integer)): return .integer(integer)
            case (.real, .int64(let integer)): return .real(Double(integer))
            case (.real, .double(let real)): return .real(real)
            case (.text, .string(let text)): return .text(text)
            case (.blob, .blob(let data)): return .blob(Array(data))
            case (.blob, .string(let text)): return .blob(Array(text.utf8))
            default:
                throw CopyError.unexpectedValue(
                    table: table.name, column: column.name, value: value.description,
                    key: table.primaryKey.map { "\(table.columns[$0].name)=\(row[$0] as DatabaseValue)" }.joined(
                        separator: ", "))
            }
        }
    }

    static func databaseValue(_ value: CopyValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let integer): integer.databaseValue
        case .real(let real): real.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }
}

/// Writes a copy into a new SQLite file: a hidden file beside the destination, migrated, filled,
/// read back and checked, and only then moved to its path.
struct SQLiteCopyWriter {
    let path: String
    let partial: URL
    let queue: DatabaseQueue

    /// - throws: `CopyError.destinationExists`, `BackupError.cannotWrite`.
    static func create(atPath path: String, tables: [CopyTable]) throws -> SQLiteCopyWriter {
        guard !FileManager.default.fileExists(atPath: path) else { throw CopyError.destinationExists(path) }
        let destination = URL(fileURLWithPath: path)
        let partial = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).partial-\(UUID().uuidString)")
        do {
            let queue = try DatabaseQueue(path: partial.path)
            try FeatureStore.migrate(queue)
            // Rows the migrations seed (the store's generation) come from the source instead.
            try queue.write { db in
                for table in tables.reversed() where table.seeded {
                    try db.execute(sql: "DELETE FROM \"\(table.name)\"")
                }
            }
            return SQLiteCopyWriter(path: path, partial: partial, queue: queue)
        } catch {
            FeatureStore.removeDatabaseFiles(at: partial)
            let reason = (error as? DatabaseError).map { $0.message ?? "SQLite error \($0.resultCode.rawValue)" }
            throw BackupError.cannotWrite(path: path, reason: reason ?? "\(error)")
        }
    }

    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws {
        let sql = """
            INSERT INTO "\(table.name)" (\(table.quotedColumns))
            VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))
            """
        try await FeatureStore.translatingErrorsAsync {
            try await queue.write { db in
                let statement = try db.cachedStatement(sql: sql)
                for row in rows {
                    statement.setUncheckedArguments(StatementArguments(row.map(SQLiteCopyReader.databaseValue)))
                    try statement.execute()
                }
            }
        }
    }

    /// Reads the copy back, to check it.
    var reader: SQLiteCopyReader { SQLiteCopyReader(reader: queue) }

    /// Moves the checked copy to its path; refuses a file that appeared there meanwhile.
    func finish() throws {
        try queue.close()
        // A hard link, unlike a rename, never replaces a file. Where the file system has no hard
        // links, a rename after a last look.
        if link(partial.path, path) != 0 {
            let failure = errno
            guard failure != EEXIST, !FileManager.default.fileExists(atPath: path) else {
                abandon()
                throw CopyError.destinationExists(path)
            }
            guard [EPERM, ENOTSUP, EOPNOTSUPP, EXDEV].contains(failure), rename(partial.path, path) == 0 else {
                abandon()
                throw BackupError.cannotWrite(path: path, reason: String(cString: strerror(failure)))
            }
        }
        FeatureStore.removeDatabaseFiles(at: partial)
    }

    func abandon() {
        try? queue.close()
        FeatureStore.removeDatabaseFiles(at: partial)
    }
}
