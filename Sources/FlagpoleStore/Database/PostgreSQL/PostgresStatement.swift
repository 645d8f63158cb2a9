/// PostgreSQL's side of `SQLStatement`: the values bound, by position, sent with the statement
/// when it runs. Nothing is prepared ahead: PostgresNIO prepares each statement as it sends it.
final class PostgresStatement: SQLStatement {
    private let connection: PostgresTransaction
    private let sql: String
    private var values: [SQLValue] = []

    init(_ connection: PostgresTransaction, sql: String) {
        self.connection = connection
        self.sql = sql
    }

    private func set(_ value: SQLValue, at index: Int32) {
        let position = Int(index) - 1
        if values.count <= position { values += Array(repeating: .null, count: position + 1 - values.count) }
        values[position] = value
    }

    func bind(_ value: Int64, at index: Int32) { set(.integer(value), at: index) }
    func bind(_ value: Int64?, at index: Int32) { set(value.map(SQLValue.integer) ?? .null, at: index) }
    func bind(_ value: Int?, at index: Int32) { set(value.map { .integer(Int64($0)) } ?? .null, at: index) }
    func bind(_ value: Double, at index: Int32) { set(.real(value), at: index) }
    func bind(_ value: Double?, at index: Int32) { set(value.map(SQLValue.real) ?? .null, at: index) }
    func bind(_ value: String?, at index: Int32) { set(value.map(SQLValue.text) ?? .null, at: index) }
    func bind(_ value: Bool?, at index: Int32) { set(value.map(SQLValue.boolean) ?? .null, at: index) }
    func bind(_ bytes: [UInt8], at index: Int32) { set(.blob(bytes), at: index) }
    func bind(_ value: SQLValue, at index: Int32) { set(value, at: index) }

    func forEachRow(_ body: (SQLStatementRow) throws -> Void) throws {
        for row in try connection.rows(sql, values, cached: true) {
            try body(SQLStatementRow(storage: .values(row.values)))
        }
    }

    @discardableResult
    func execute() throws -> Int {
        try connection.execute(sql, values, cached: true)
    }

    func executeReturningID() throws -> Int64 {
        guard let id = try connection.rows(sql + " RETURNING id", values, cached: true).first?.values.first,
            case .integer(let value) = id
        else { throw StorageError.storage(reason: "an insert returned no id: \(sql)") }
        return value
    }
}
