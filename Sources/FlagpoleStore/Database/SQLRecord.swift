/// A record of a table, read from the columns its table home selects. Its `Column` enum lists
/// them once, in order: every SELECT of the record writes `columns`, and `init(row:)` reads each
/// column by its case, so the list and the reading cannot drift apart.
protocol SQLRecord {
    associatedtype Column: RawRepresentable, CaseIterable, Equatable
    where Column.RawValue == String, Column.AllCases == [Column]

    init(row: SQLRecordRow<Column>)
}

extension SQLRecord {
    /// The columns every SELECT of the record reads, in `Column`'s order.
    static var columns: String { Column.allCases.map(\.rawValue).joined(separator: ", ") }

    /// A row selected with `columns`.
    init(row: SQLRow) {
        self.init(row: SQLRecordRow(row: row))
    }
}

/// A row selected with a record's `columns`, read by column.
struct SQLRecordRow<Column: RawRepresentable & CaseIterable & Equatable> where Column.AllCases == [Column] {
    let row: SQLRow
    /// The columns in their SELECT order, made once per row: `allCases` builds an array each call.
    private let columns = Column.allCases

    init(row: SQLRow) {
        self.row = row
    }

    subscript<T: SQLDecodable>(_ column: Column) -> T {
        row[columns.firstIndex(of: column)!]
    }
}
