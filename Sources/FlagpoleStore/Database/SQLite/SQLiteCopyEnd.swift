import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Reads a SQLite database's tables for a copy, in key order, inside one read transaction:
/// every table as it was at one moment, however much other connections write meanwhile.
struct SQLiteCopyReader: CopySource {
    let reader: any DatabaseReader

    /// The file closes with the reader.
    func close() async {}

    func read(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    )
        async throws
    {
        try await FeatureStore.translatingErrorsAsync {
            try await reader.read { db in
                for table in tables {
                    // SQLite's C API: GRDB's rows copy and box every value, which would cost more
                    // than the rest of a copy.
                    let select = try RawStatement(
                        db, sql: "SELECT \(table.quotedColumns) FROM \"\(table.name)\" ORDER BY \(table.orderBy)")
                    var page: [[CopyValue]] = []
                    page.reserveCapacity(CopyTable.pageSize)
                    try select.forEachRawRow { row in
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
    static func values(of row: RawStatement.Row, in table: CopyTable) throws -> [CopyValue] {
        var values: [CopyValue] = []
        values.reserveCapacity(table.columns.count)
        for (index, column) in table.columns.enumerated() {
            let position = Int32(index)
            switch (column.kind, row.storageClass(position)) {
            case (_, SQLITE_NULL): values.append(.null)
            case (.integer, SQLITE_INTEGER): values.append(.integer(row.int(position)))
            case (.real, SQLITE_INTEGER), (.real, SQLITE_FLOAT): values.append(.real(row.double(position)))
            case (.text, SQLITE_TEXT): values.append(.text(row.text(position)))
            case (.blob, SQLITE_BLOB), (.blob, SQLITE_TEXT): values.append(.blob(row.bytes(position)))
            case (_, let storage):
                let found =
                    storage == SQLITE_TEXT
                    ? "the text \"\(row.text(position))\"" : "a \(Self.storageNames[storage] ?? "value")"
                throw CopyError.unexpectedValue(
                    table: table.name, column: column.name, value: found,
                    key: table.primaryKey.map { "\(table.columns[$0].name)=\(row.text(Int32($0)))" }.joined(
                        separator: ", "))
            }
        }
        return values
    }

    private static let storageNames: [Int32: String] = [
        SQLITE_INTEGER: "integer", SQLITE_FLOAT: "floating-point number", SQLITE_BLOB: "blob",
    ]
}

/// Writes a copy into a new SQLite file: a hidden file beside the destination, migrated, filled,
/// read back and checked, and only then moved to its path.
///
/// Nothing but this copy ever sees the hidden file, and a failed copy deletes it, so the load
/// takes the short way, as SQLite's own `.import` would: no journal, no flush per commit, foreign
/// keys checked once at the end (`PRAGMA foreign_key_check`), and the indexes of their own built
/// once over the loaded rows. The file is flushed to the disk before it is linked into place.
struct SQLiteCopyWriter: CopyDestination {
    let path: String
    let partial: URL
    let queue: DatabaseQueue
    /// The `CREATE INDEX` statements set aside for the load.
    let indexes: [String]

    /// - throws: `CopyError.destinationExists`, `BackupError.cannotWrite`.
    static func create(atPath path: String, tables: [CopyTable]) throws -> SQLiteCopyWriter {
        guard !FileManager.default.fileExists(atPath: path) else { throw CopyError.destinationExists(path) }
        let destination = URL(fileURLWithPath: path)
        let partial = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).partial-\(UUID().uuidString)")
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            let queue = try DatabaseQueue(path: partial.path, configuration: configuration)
            try FeatureStore.migrate(queue)
            let indexes = try queue.writeWithoutTransaction { db -> [String] in
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
                // Rows the migrations seed (the store's generation) come from the source instead.
                for table in tables.reversed() where table.seeded {
                    try db.execute(sql: "DELETE FROM \"\(table.name)\"")
                }
                return try Self.dropIndexes(db)
            }
            return SQLiteCopyWriter(path: path, partial: partial, queue: queue, indexes: indexes)
        } catch {
            FeatureStore.removeDatabaseFiles(at: partial)
            let reason = (error as? DatabaseError).map { $0.message ?? "SQLite error \($0.resultCode.rawValue)" }
            throw BackupError.cannotWrite(path: path, reason: reason ?? "\(error)")
        }
    }

    private static func dropIndexes(_ db: Database) throws -> [String] {
        let indexes = try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        for index in indexes { try db.execute(sql: "DROP INDEX \"\(index["name"] as String)\"") }
        return indexes.map { $0["sql"] }
    }

    /// Builds the indexes set aside, and checks every foreign key of the loaded rows.
    func finishLoading() async throws {
        try await FeatureStore.translatingErrorsAsync {
            try await queue.writeWithoutTransaction { db in
                for index in indexes { try db.execute(sql: index) }
                if let broken = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                    let rowid: Int64? = broken["rowid"]
                    let parent: String = broken["parent"]
                    throw CopyError.verificationFailed(
                        table: broken["table"], expected: "every row's foreign keys found",
                        found: "row \(rowid.map(String.init) ?? "?") pointing to a missing row of \(parent)")
                }
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
            }
        }
    }

    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws {
        let sql = """
            INSERT INTO "\(table.name)" (\(table.quotedColumns))
            VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))
            """
        try await FeatureStore.translatingErrorsAsync {
            try await queue.write { db in
                let insert = try RawStatement(cachedIn: db, sql: sql)
                for row in rows {
                    for (index, value) in row.enumerated() {
                        let position = Int32(index + 1)
                        switch value {
                        case .null: insert.bindNull(at: position)
                        case .integer(let integer): insert.bind(integer, at: position)
                        case .real(let real): insert.bind(real, at: position)
                        case .text(let text): insert.bind(text, at: position)
                        case .blob(let bytes): insert.bind(bytes, at: position)
                        }
                    }
                    try insert.execute()
                }
            }
        }
    }

    /// Reads the copy back, to check it.
    func readBack(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    ) async throws {
        try await SQLiteCopyReader(reader: queue).read(tables, consume)
    }

    /// Moves the checked copy to its path; refuses a file that appeared there meanwhile.
    func keep() throws {
        try queue.close()
        // Written without flushes: flushed once, whole, before it takes the destination's name.
        do {
            let file = try FileHandle(forUpdating: partial)
            try file.synchronize()
            try file.close()
        } catch {
            abandon()
            throw BackupError.cannotWrite(path: path, reason: "\(error)")
        }
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
