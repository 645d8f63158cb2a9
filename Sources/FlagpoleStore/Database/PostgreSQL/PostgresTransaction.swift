import FlagpoleCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// PostgreSQL's side of `SQLConnection`: one pooled connection inside a transaction the store
/// opened.
///
/// The store's operations are synchronous closures (SQLite's transactions run on GRDB's threads),
/// so this connection runs on a thread of its own (`PostgresStore`'s thread pool, never an event
/// loop) and waits for each statement's answer.
final class PostgresTransaction: SQLConnection {
    private let connection: PostgresConnection
    private let logger: Logger
    private var savepoints = 0

    /// Outside a transaction: one statement, which is its own snapshot (see
    /// `PostgresStore.read(expectingOneStatement:_:)`).
    private let isOneStatement: Bool
    private var statements = 0
    /// Whether work meant for one statement ran more: its answer must not be used.
    private(set) var ranMoreThanOneStatement = false

    init(_ connection: PostgresConnection, logger: Logger, isOneStatement: Bool = false) {
        self.connection = connection
        self.logger = logger
        self.isOneStatement = isOneStatement
    }

    /// Refuses a second statement outside a transaction: it would see another snapshot.
    private func countStatement() throws {
        guard isOneStatement else { return }
        statements += 1
        guard statements == 1 else {
            ranMoreThanOneStatement = true
            throw StorageError.storage(reason: "a read expected to be one statement ran more")
        }
    }

    func rows(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> [SQLRow] {
        try run(sql, arguments).rows
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> Int {
        try run(sql, arguments).changed
    }

    func text(of sql: DialectSQL) -> String { sql.postgres }

    func indexedBy(_ index: String) -> String { "" }

    func statement(_ sql: String, cached: Bool) throws -> any SQLStatement {
        PostgresStatement(self, sql: sql)
    }

    func run(_ insert: ChainedInsert) throws -> Bool {
        var sql = "WITH inserted AS (\(insert.sql) RETURNING 1)"
        var arguments = insert.arguments
        for (index, follower) in insert.followers.enumerated() {
            let source = "SELECT \(ChainedInsert.placeholders(follower.values.values.count)) FROM inserted"
            sql += ",\nfollower\(index) AS (\(follower.statement(source)))"
            arguments = arguments + follower.values
        }
        sql += "\nSELECT count(*) FROM inserted"
        return try value(Int.self, sql, arguments, cached: true) == 1
    }

    func inSavepoint<T>(_ work: () throws -> T) throws -> T {
        savepoints += 1
        defer { savepoints -= 1 }
        // Names repeat: a rollback goes to the latest savepoint of its name.
        let name = "flagpole_\(savepoints)"
        try execute("SAVEPOINT \(name)", [], cached: false)
        do {
            // Not released: a release is a round trip and frees nothing that matters (the
            // subtransaction stays part of the transaction), and the commit ends them all.
            return try work()
        } catch {
            try execute("ROLLBACK TO SAVEPOINT \(name)", [], cached: false)
            throw error
        }
    }

    /// Runs one statement, waiting for all of its rows.
    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> (rows: [SQLRow], changed: Int) {
        try countStatement()
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .boolean(let value): bindings.append(value)
            }
        }
        let query = PostgresQuery(unsafeSQL: PostgresPlaceholders.numbered(sql), binds: bindings)
        let result: PostgresQueryResult
        do {
            result = try connection.query(query, logger: logger).wait()
        } catch {
            throw PostgresSession.storageError(error)
        }
        var rows: [SQLRow] = []
        rows.reserveCapacity(result.rows.count)
        var columns: SQLColumns?
        for row in result.rows {
            let names = columns ?? SQLColumns(row.map(\.columnName))
            columns = names
            rows.append(SQLRow(columns: names, values: try row.map(Self.value(of:))))
        }
        return (rows, result.metadata.rows ?? 0)
    }

    /// A cell's value as SQLite would hold it: integers and booleans as themselves, `numeric`
    /// (what `sum` of integers gives) as an integer when it is one.
    private static func value(of cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .bool: return .boolean(try cell.decode(Bool.self))
            case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .numeric:
                let decimal = try cell.decode(Decimal.self)
                if decimal == decimal.rounded(), let integer = Int64(exactly: NSDecimalNumber(decimal: decimal)) {
                    return .integer(integer)
                }
                return .real(NSDecimalNumber(decimal: decimal).doubleValue)
            case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw StorageError.storage(
                reason: "column \(cell.columnName) holds a \(cell.dataType) Flagpole can't read: \(error)")
        }
    }
}

extension Decimal {
    fileprivate func rounded() -> Decimal {
        var value = self
        var result = Decimal()
        NSDecimalRound(&result, &value, 0, .plain)
        return result
    }
}

/// Statements are written with SQLite's `?` and `?NNN`; PostgreSQL numbers its parameters (`$1`,
/// `$2`, …).
enum PostgresPlaceholders {
    private static let cache = Mutex<[String: String]>([:])

    /// `sql` with each `?` outside quotes and comments numbered in order, and each `?NNN` as `$NNN`.
    static func numbered(_ sql: String) -> String {
        if let known = cache.withLock({ $0[sql] }) { return known }
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: Character?
        var inLineComment = false
        var previous: Character?
        // After a `?`: whether the placeholder's number is still to be written.
        var isNumbered = false
        for character in sql {
            defer { previous = character }
            if inLineComment {
                if character == "\n" { inLineComment = false }
            } else if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "-" && previous == "-" {
                inLineComment = true
            } else if character == "?" {
                result += "$"
                isNumbered = true
                continue
            }
            if isNumbered {
                isNumbered = false
                // `?NNN` keeps its number; a bare `?` takes the next.
                if !character.isASCII || !character.isNumber {
                    number += 1
                    result += "\(number)"
                }
            }
            result.append(character)
        }
        if isNumbered {
            number += 1
            result += "\(number)"
        }
        cache.withLock { cache in
            // Statements with lists of placeholders vary with their lengths: the cache keeps the
            // fixed texts and stops growing.
            if cache.count < 4_096 { cache[sql] = result }
        }
        return result
    }
}
