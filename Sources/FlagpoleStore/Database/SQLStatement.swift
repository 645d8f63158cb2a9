import Foundation

/// One prepared statement, bound by position and run once or stepped a row at a time, whichever
/// backend runs it: the tables write a statement's text and its binding once. SQLite's binds
/// straight through its C API (`RawStatement`), which the per-user hot paths need; PostgreSQL's
/// keeps the values and sends them with the statement (`PostgresStatement`).
///
/// Placeholders are `?` (numbered in order) or `?NNN` (a value bound once and used where the
/// number appears): both backends read both, PostgreSQL as `$N`. One statement uses one kind.
protocol SQLStatement {
    func bind(_ value: Int64, at index: Int32)
    func bind(_ value: Int64?, at index: Int32)
    func bind(_ value: Int?, at index: Int32)
    func bind(_ value: Double, at index: Int32)
    func bind(_ value: Double?, at index: Int32)
    func bind(_ value: String?, at index: Int32)
    func bind(_ value: Bool?, at index: Int32)
    func bind(_ bytes: [UInt8], at index: Int32)
    func bind(_ value: SQLValue, at index: Int32)

    /// Runs the statement, handing each row it returns to `body`.
    func forEachRow(_ body: (SQLStatementRow) throws -> Void) throws

    /// Runs a statement that returns no rows; returns how many rows it changed.
    @discardableResult
    func execute() throws -> Int

    /// Runs an `INSERT` of one row into a table keyed by `id`, written without `RETURNING`, and
    /// returns the new row's id: SQLite's last rowid (its `RETURNING` buffers the row, which an
    /// import of thousands of features pays for), PostgreSQL's `RETURNING id`.
    func executeReturningID() throws -> Int64
}

/// The columns of a row a statement is stepping through. On SQLite it reads the statement's
/// current row in place (valid only inside `forEachRow`'s body); on PostgreSQL, the row's values.
/// Booleans read as integers (0, 1) on both, as SQLite stores them.
struct SQLStatementRow {
    enum Storage {
        case sqlite(RawStatement.Row)
        case values([SQLValue])
    }

    let storage: Storage

    func int(_ column: Int32) -> Int64 {
        switch storage {
        case .sqlite(let row): row.int(column)
        case .values(let values):
            switch values[Int(column)] {
            case .integer(let value): value
            case .boolean(let value): value ? 1 : 0
            case .real(let value): Int64(value)
            default: 0
            }
        }
    }

    func double(_ column: Int32) -> Double {
        switch storage {
        case .sqlite(let row): row.double(column)
        case .values(let values):
            switch values[Int(column)] {
            case .real(let value): value
            case .integer(let value): Double(value)
            default: 0
            }
        }
    }

    func text(_ column: Int32) -> String {
        switch storage {
        case .sqlite(let row): row.text(column)
        case .values(let values):
            if case .text(let value) = values[Int(column)] { value } else { "" }
        }
    }

    /// A text or blob column's bytes.
    func bytes(_ column: Int32) -> [UInt8] {
        switch storage {
        case .sqlite(let row): row.bytes(column)
        case .values(let values):
            switch values[Int(column)] {
            case .blob(let bytes): bytes
            case .text(let text): Array(text.utf8)
            default: []
            }
        }
    }

    func isNull(_ column: Int32) -> Bool {
        switch storage {
        case .sqlite(let row): row.isNull(column)
        case .values(let values): values[Int(column)] == .null
        }
    }

    func bool(_ column: Int32) -> Bool { int(column) != 0 }

    func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    func optionalBytes(_ column: Int32) -> [UInt8]? { isNull(column) ? nil : bytes(column) }
}

/// A statement that each dialect needs its own text of: each backend runs its own. Every one is
/// listed, with why, in docs/POSTGRES.md ("Statements with a text per dialect").
struct DialectSQL: Sendable {
    let sqlite: String
    let postgres: String
}

extension SQLConnection {
    /// The backend's text of `sql`, prepared (see `statement(_:cached:)`).
    func statement(_ sql: DialectSQL, cached: Bool) throws -> any SQLStatement {
        try statement(text(of: sql), cached: cached)
    }

    /// The rows of the backend's text of `sql`.
    func rows(_ sql: DialectSQL, _ arguments: SQLArguments = [], cached: Bool = false) throws -> [SQLRow] {
        try rows(text(of: sql), arguments.values, cached: cached)
    }
}

/// An insert that may find its row recorded already (`… ON CONFLICT DO NOTHING`), and the inserts
/// that follow from it only when it inserted (its event, its counts): see `SQLConnection.run(_:)`.
struct ChainedInsert {
    /// The insert, without `RETURNING`.
    var sql: String
    var arguments: SQLArguments

    /// An insert whose rows come from a source its text takes: `VALUES (?, …)` on SQLite,
    /// `SELECT ?, … FROM inserted` in PostgreSQL's chain. `values` are one row's.
    struct Follower {
        var statement: (_ source: String) -> String
        var values: SQLArguments
    }

    var followers: [Follower]

    /// `count` placeholders, comma-separated.
    static func placeholders(_ count: Int) -> String {
        repeatElement("?", count: count).joined(separator: ", ")
    }
}
