import FlagpoleCore
import Foundation

/// One connection inside a transaction the store opened, whichever backend it runs on: what the
/// tables' homes speak. SQLite's is GRDB's `Database`; PostgreSQL's is `PostgresTransaction`.
///
/// Statements are written once, in the SQL both backends accept, with `?` or `?NNN` placeholders
/// (the PostgreSQL side numbers them), and bound by position (`statement(_:cached:)`). What
/// differs between the backends is theirs to say: a text per dialect (`DialectSQL`, each listed
/// in docs/POSTGRES.md), an index hint, and how an insert and its followers are chained. What is
/// the same on both (what a transaction remembers and what it changed) is `Transaction`'s.
protocol SQLConnection: AnyObject {
    /// Runs one statement and returns its rows. `cached` keeps the prepared statement for the
    /// next call (SQLite): for statements with a fixed text, run often.
    func rows(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> [SQLRow]

    /// Runs one statement and returns how many rows it inserted, changed or deleted.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> Int

    /// Runs `work` in a savepoint: when it throws, its writes are undone and the transaction
    /// goes on.
    func inSavepoint<T>(_ work: () throws -> T) throws -> T

    /// `sql` prepared for binding by position (see `SQLStatement`). `cached` keeps it for the
    /// next call on this connection (SQLite): for statements with a fixed text, run often.
    func statement(_ sql: String, cached: Bool) throws -> any SQLStatement

    /// This backend's text of a statement whose dialects differ.
    func text(of sql: DialectSQL) -> String

    /// ` INDEXED BY index` where the planner takes such a hint (SQLite, which keeps no
    /// statistics), else nothing: to follow a table's name in a statement.
    func indexedBy(_ index: String) -> String

    /// Runs `insert` and, only when it inserted its row, the inserts that follow from it:
    /// in one round trip on PostgreSQL (writable CTEs), statement by statement on SQLite.
    /// Returns whether the row was inserted.
    func run(_ insert: ChainedInsert) throws -> Bool
}

extension SQLConnection {
    /// The rows of one statement.
    func rows(_ sql: String, _ arguments: SQLArguments = [], cached: Bool = false) throws -> [SQLRow] {
        try rows(sql, arguments.values, cached: cached)
    }

    /// The first row of one statement, if any.
    func row(_ sql: String, _ arguments: SQLArguments = [], cached: Bool = false) throws -> SQLRow? {
        try rows(sql, arguments.values, cached: cached).first
    }

    /// The first column of the first row, `nil` when there is no row (or it holds NULL).
    func value<T: SQLDecodable>(
        _ type: T.Type = T.self, _ sql: String, _ arguments: SQLArguments = [], cached: Bool = false
    ) throws -> T? {
        guard let row = try row(sql, arguments, cached: cached) else { return nil }
        return row.values[0] == .null ? nil : T(sqlValue: row.values[0])
    }

    /// The first column of every row (NULLs left out).
    func values<T: SQLDecodable>(
        _ type: T.Type = T.self, _ sql: String, _ arguments: SQLArguments = [], cached: Bool = false
    ) throws -> [T] {
        try rows(sql, arguments.values, cached: cached).compactMap { row in
            row.values[0] == .null ? nil : T(sqlValue: row.values[0])
        }
    }

    /// Runs one statement and returns how many rows it inserted, changed or deleted.
    @discardableResult
    func execute(_ sql: String, _ arguments: SQLArguments = [], cached: Bool = false) throws -> Int {
        try execute(sql, arguments.values, cached: cached)
    }

    /// Runs an `INSERT … RETURNING id` and returns the id.
    func insertReturningID(_ sql: String, _ arguments: SQLArguments = []) throws -> Int64 {
        guard let id = try value(Int64.self, sql, arguments) else {
            throw StorageError.storage(reason: "an insert returned no id: \(sql)")
        }
        return id
    }
}

/// A value as both backends store it. Booleans are their own case so that PostgreSQL's `boolean`
/// columns get a boolean; SQLite stores them as 0 and 1.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case boolean(Bool)
}

/// The arguments of one statement: `[a, b, nil]`, each value anything `SQLBindable`.
struct SQLArguments: ExpressibleByArrayLiteral, Sendable {
    var values: [SQLValue]

    init(arrayLiteral elements: (any SQLBindable)?...) {
        values = elements.map { $0?.sqlValue ?? .null }
    }

    init(_ elements: [(any SQLBindable)?]) {
        values = elements.map { $0?.sqlValue ?? .null }
    }

    init(values: [SQLValue]) {
        self.values = values
    }

    static func + (lhs: SQLArguments, rhs: SQLArguments) -> SQLArguments {
        SQLArguments(values: lhs.values + rhs.values)
    }

    mutating func append(_ value: (any SQLBindable)?) {
        values.append(value?.sqlValue ?? .null)
    }
}

/// A Swift value a statement can bind.
protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

/// A Swift value a row's column can be read as. Reading a column as a type its value can't be
/// is a programming error (the schema decides the types), and traps, as GRDB's rows do.
protocol SQLDecodable {
    init(sqlValue: SQLValue)
}

/// One row of a result: its values in the statement's column order, and their names.
struct SQLRow: Sendable {
    let columns: SQLColumns
    let values: [SQLValue]

    /// The value of column `index`, as `T`.
    subscript<T: SQLDecodable>(_ index: Int) -> T {
        T(sqlValue: values[index])
    }

    /// The value of the column named `name` (case-insensitive, as SQL's names are), as `T`.
    subscript<T: SQLDecodable>(_ name: String) -> T {
        guard let index = columns.index(of: name) else {
            fatalError("no column \(name) among \(columns.names)")
        }
        return T(sqlValue: values[index])
    }

    /// Whether column `index` holds NULL.
    func isNull(_ index: Int) -> Bool {
        values[index] == .null
    }
}

/// The column names of a result, shared by its rows.
final class SQLColumns: Sendable {
    let names: [String]
    private let lowercased: [String]

    init(_ names: [String]) {
        self.names = names
        self.lowercased = names.map { $0.lowercased() }
    }

    func index(of name: String) -> Int? {
        lowercased.firstIndex(of: name.lowercased())
    }
}

// MARK: Conformances

extension Optional: SQLBindable where Wrapped: SQLBindable {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    init(sqlValue: SQLValue) {
        self = sqlValue == .null ? nil : Wrapped(sqlValue: sqlValue)
    }
}

extension Int64: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .integer(self) }

    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .integer(let value): self = value
        case .boolean(let value): self = value ? 1 : 0
        case .real(let value) where value.rounded() == value: self = Int64(value)
        default: fatalError("\(sqlValue) is not an integer")
        }
    }
}

extension Int: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .integer(Int64(self)) }

    init(sqlValue: SQLValue) {
        self = Int(Int64(sqlValue: sqlValue))
    }
}

extension Int32: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .integer(Int64(self)) }

    init(sqlValue: SQLValue) {
        self = Int32(Int64(sqlValue: sqlValue))
    }
}

extension Double: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .real(self) }

    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: fatalError("\(sqlValue) is not a number")
        }
    }
}

extension Bool: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .boolean(self) }

    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .boolean(let value): self = value
        case .integer(let value): self = value != 0
        default: fatalError("\(sqlValue) is not a boolean")
        }
    }
}

extension String: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .text(self) }

    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .text(let value): self = value
        case .blob(let bytes): self = String(decoding: bytes, as: UTF8.self)
        default: fatalError("\(sqlValue) is not text")
        }
    }
}

extension Data: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .blob(Array(self)) }

    init(sqlValue: SQLValue) {
        self = Data([UInt8](sqlValue: sqlValue))
    }
}

extension Array: SQLBindable where Element == UInt8 {
    var sqlValue: SQLValue { .blob(self) }
}

extension Array: SQLDecodable where Element == UInt8 {
    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .blob(let bytes): self = bytes
        case .text(let text): self = Array(text.utf8)
        default: fatalError("\(sqlValue) is not a blob")
        }
    }
}

/// Dates are text, `yyyy-MM-dd HH:mm:ss.SSS` in UTC: what GRDB writes, so both backends and
/// every file written before keep one format.
extension Date: SQLBindable, SQLDecodable {
    var sqlValue: SQLValue { .text(SQLDateFormat.string(from: self)) }

    init(sqlValue: SQLValue) {
        switch sqlValue {
        case .text(let text):
            guard let date = SQLDateFormat.date(from: text) else { fatalError("\(text) is not a date") }
            self = date
        case .real(let seconds): self = Date(timeIntervalSince1970: seconds)
        case .integer(let seconds): self = Date(timeIntervalSince1970: Double(seconds))
        default: fatalError("\(sqlValue) is not a date")
        }
    }
}

/// The one format of stored dates.
enum SQLDateFormat {
    private static let withMilliseconds: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return formatter
    }()

    static func string(from date: Date) -> String {
        withMilliseconds.string(from: date)
    }

    /// Reads `yyyy-MM-dd HH:mm:ss[.SSS]` digit by digit: every import reads the three dates of
    /// each of an environment's features, and a `DateFormatter` takes microseconds a date.
    static func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 19 || bytes.count == 23 else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = Int(bytes[index]) - 48
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x20, bytes[13] == 0x3A, bytes[16] == 0x3A,
                bytes.count == 19 || bytes[19] == 0x2E,
                let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
                let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                let milliseconds = bytes.count == 23 ? number(20..<23) : 0,
                (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
            else { return nil }
            let seconds =
                (daysSince1970(year: year, month: month, day: day) * 86_400) + hour * 3_600 + minute * 60 + second
            return Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1_000)
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
