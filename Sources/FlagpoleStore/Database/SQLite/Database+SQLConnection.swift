import FlagpoleCore
import Foundation
import GRDB

/// SQLite's side of `SQLConnection`: GRDB's connection, inside a transaction the store opened.
extension Database: SQLConnection {
    func rows(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> [SQLRow] {
        let statement = try cached ? cachedStatement(sql: sql) : makeStatement(sql: sql)
        statement.arguments = StatementArguments(arguments.map(\.databaseValue))
        let columns = SQLColumns(statement.columnNames)
        let cursor = try Row.fetchCursor(statement)
        var rows: [SQLRow] = []
        while let row = try cursor.next() {
            rows.append(SQLRow(columns: columns, values: row.databaseValues.map(SQLValue.init)))
        }
        return rows
    }

    /// A statement with arguments is bound through SQLite's C API, without GRDB's boxed
    /// arguments (an import writes thousands of rows this way); one without may be a script of
    /// several statements, which GRDB runs.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> Int {
        guard !arguments.isEmpty else {
            let statement = try cached ? cachedStatement(sql: sql) : makeStatement(sql: sql)
            try statement.execute()
            return changesCount
        }
        return try bound(sql, arguments, cached: cached).execute()
    }

    func text(of sql: DialectSQL) -> String { sql.sqlite }

    func indexedBy(_ index: String) -> String { " INDEXED BY \(index)" }

    func statement(_ sql: String, cached: Bool) throws -> any SQLStatement {
        try cached ? RawStatement(cachedIn: self, sql: sql) : RawStatement(self, sql: sql)
    }

    func run(_ insert: ChainedInsert) throws -> Bool {
        guard try bound(insert.sql, insert.arguments.values, cached: true).execute() == 1 else { return false }
        for follower in insert.followers {
            let values = "VALUES (\(ChainedInsert.placeholders(follower.values.values.count)))"
            try bound(follower.statement(values), follower.values.values, cached: true).execute()
        }
        return true
    }

    /// `sql` with `arguments` bound through SQLite's C API.
    private func bound(_ sql: String, _ arguments: [SQLValue], cached: Bool) throws -> any SQLStatement {
        let statement = try statement(sql, cached: cached)
        for (index, value) in arguments.enumerated() { statement.bind(value, at: Int32(index + 1)) }
        return statement
    }

    func inSavepoint<T>(_ work: () throws -> T) throws -> T {
        var value: T?
        let body: () throws -> TransactionCompletion = {
            value = try work()
            return .commit
        }
        // GRDB's own savepoint, which returns nothing (this one returns `T`).
        let _: Void = try inSavepoint(body)
        return value!
    }
}

extension SQLValue {
    fileprivate var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        case .boolean(let value): (value ? 1 : 0).databaseValue
        }
    }

    fileprivate init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let value): self = .text(value)
        case .blob(let data): self = .blob(Array(data))
        }
    }
}
