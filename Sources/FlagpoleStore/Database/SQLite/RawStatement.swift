import GRDB
import GRDBSQLite

/// A statement bound and stepped through SQLite's C API.
///
/// Bulk assignment runs a few statements per user for millions of users. GRDB's arguments box
/// every value in an existential and its rows copy every column, which costs more than SQLite's
/// own insert; here values go straight to `sqlite3_bind_*`. Only for statements prepared with
/// `Database.makeStatement` and never run through GRDB, so GRDB's view of them stays true.
struct RawStatement: SQLStatement {
    private let statement: Statement
    private let db: Database

    init(_ db: Database, sql: String) throws {
        self.db = db
        self.statement = try db.makeStatement(sql: sql)
    }

    /// The connection's cached statement for `sql`, for a statement run on every request: its
    /// SQL must be run through `RawStatement` only.
    init(cachedIn db: Database, sql: String) throws {
        self.db = db
        self.statement = try db.cachedStatement(sql: sql)
    }

    private var handle: SQLiteStatement { statement.sqliteStatement }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
    }

    func bind(_ value: String?, at index: Int32) {
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        value.withUTF8 { text in
            _ = text.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(handle, index, $0.baseAddress, Int32(text.count), Self.transient)
            }
        }
    }

    func bind(_ value: Int64?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ value: Int?, at index: Int32) {
        bind(value.map(Int64.init), at: index)
    }

    func bind(_ value: Double?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ value: Bool?, at index: Int32) {
        bind(value.map { $0 ? 1 : 0 } as Int64?, at: index)
    }

    func bind(_ bytes: [UInt8], at index: Int32) {
        // An empty array may have no address, which SQLite would bind as NULL.
        guard !bytes.isEmpty else {
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        bytes.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// Binds a value as both backends hold them; a boolean as 0 or 1.
    func bind(_ value: SQLValue, at index: Int32) {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let integer): bind(integer, at: index)
        case .real(let double): bind(double, at: index)
        case .text(let text): bind(text, at: index)
        case .blob(let bytes): bind(bytes, at: index)
        case .boolean(let flag): bind(Int64(flag ? 1 : 0), at: index)
        }
    }

    func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Binds a value GRDB converted, such as a `Date` in GRDB's storage format.
    func bind(_ value: DatabaseValue, at index: Int32) {
        switch value.storage {
        case .null: sqlite3_bind_null(handle, index)
        case .int64(let integer): bind(integer, at: index)
        case .double(let double): bind(double, at: index)
        case .string(let string): bind(string, at: index)
        case .blob(let data):
            _ = data.withUnsafeBytes {
                sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient)
            }
        }
    }

    /// Runs a statement, handing each row it returns to `body`.
    func forEachRow(_ body: (SQLStatementRow) throws -> Void) throws {
        try forEachRawRow { try body(SQLStatementRow(storage: .sqlite($0))) }
    }

    /// Runs a statement, handing each row it returns to `body` as SQLite's own.
    func forEachRawRow(_ body: (Row) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_ROW: try body(Row(handle))
            case SQLITE_DONE: return
            default: throw error(code)
            }
        }
    }

    /// Runs a statement that returns no rows; returns how many rows it changed.
    @discardableResult
    func execute() throws -> Int {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else { throw error(code) }
        return Int(sqlite3_changes(db.sqliteConnection))
    }

    func executeReturningID() throws -> Int64 {
        try execute()
        return sqlite3_last_insert_rowid(db.sqliteConnection)
    }

    /// The columns of the current row.
    struct Row {
        fileprivate let handle: SQLiteStatement

        fileprivate init(_ handle: SQLiteStatement) {
            self.handle = handle
        }

        func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
        func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
        func text(_ column: Int32) -> String { String(cString: sqlite3_column_text(handle, column)) }
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
        /// The column's storage class: `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`, `SQLITE_BLOB`, `SQLITE_NULL`.
        func storageClass(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }
        /// A text or blob column's bytes.
        func bytes(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let start = sqlite3_column_blob(handle, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: start, count: count))
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }

    /// Tells SQLite to copy bound text, which lives only for the duration of the call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
