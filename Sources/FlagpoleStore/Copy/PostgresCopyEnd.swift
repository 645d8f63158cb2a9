import Foundation
import PostgresNIO

/// A PostgreSQL database as one end of a copy, on one session: the source reads inside one
/// `REPEATABLE READ` transaction, the destination writes inside one transaction and reads its
/// rows back before committing.
struct PostgresCopyEnd: Sendable {
    let session: PostgresSession
    /// `table.column` of the columns PostgreSQL keeps as `boolean` (SQLite's 0 and 1).
    let booleans: Set<String>

    static func open(_ session: PostgresSession) async throws -> PostgresCopyEnd {
        let rows = try await session.rows(
            """
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND data_type = 'boolean'
            """)
        let booleans = try rows.map { row in
            let (table, column) = try row.decode((String, String).self)
            return "\(table).\(column)"
        }
        return PostgresCopyEnd(session: session, booleans: Set(booleans))
    }

    private func isBoolean(_ table: CopyTable, _ column: CopyTable.Column) -> Bool {
        booleans.contains("\(table.name).\(column.name)")
    }

    // MARK: Reading

    /// Every table's rows in key order, page by page. Text keys are ordered in the "C"
    /// collation, whatever the database's default: SQLite's order, byte by byte.
    func read(
        _ tables: [CopyTable], _ consume: @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    )
        async throws
    {
        for table in tables {
            let columns = table.columns.map { column in
                isBoolean(table, column) ? "\"\(column.name)\"::int::int8" : "\"\(column.name)\""
            }
            let order = table.primaryKey.map { position in
                let column = table.columns[position]
                return column.kind == .text ? "\"\(column.name)\" COLLATE \"C\"" : "\"\(column.name)\""
            }
            let sql = """
                SELECT \(columns.joined(separator: ", ")) FROM "\(table.name)" ORDER BY \(order.joined(separator: ", "))
                """
            try await PostgresSession.translating {
                var page: [[CopyValue]] = []
                page.reserveCapacity(CopyTable.pageSize)
                for try await row in try await session.connection.query(
                    PostgresQuery(unsafeSQL: sql), logger: session.logger)
                {
                    page.append(try Self.values(of: row, in: table))
                    if page.count == CopyTable.pageSize {
                        try await consume(table, page)
                        page.removeAll(keepingCapacity: true)
                    }
                }
                if !page.isEmpty { try await consume(table, page) }
            }
        }
    }

    private static func values(of row: PostgresRow, in table: CopyTable) throws -> [CopyValue] {
        let cells = row.makeRandomAccess()
        return try table.columns.indices.map { index in
            let cell = cells[index]
            switch table.columns[index].kind {
            case .integer: return try cell.decode(Int64?.self).map(CopyValue.integer) ?? .null
            case .real: return try cell.decode(Double?.self).map(CopyValue.real) ?? .null
            case .text: return try cell.decode(String?.self).map(CopyValue.text) ?? .null
            case .blob:
                return try cell.decode(ByteBuffer?.self).map { CopyValue.blob(Array($0.readableBytesView)) } ?? .null
            }
        }
    }

    // MARK: Writing

    /// Refuses a database that holds tables of another application: a mistyped URL must not
    /// add Flagpole's schema beside them.
    static func refuseOtherTables(_ session: PostgresSession, tables: [CopyTable]) async throws {
        let ours = Set(tables.map(\.name) + ["flagpole_migrations"])
        let present = try await session.rows(
            """
            SELECT table_name::text FROM information_schema.tables
            WHERE table_schema = current_schema() ORDER BY table_name
            """
        ).map { try $0.decode(String.self) }
        if let other = present.first(where: { !ours.contains($0) }) {
            throw CopyError.otherApplication(address: session.address.description, table: other)
        }
    }

    /// Refuses a destination that holds rows besides those its migrations seed.
    func checkEmpty(_ tables: [CopyTable]) async throws {
        for table in tables where !table.seeded {
            let rows = try await session.rows(
                PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \"\(table.name)\")"))
            if try rows.first?.decode(Bool.self) == true {
                throw CopyError.destinationNotEmpty(address: session.address.description, table: table.name)
            }
        }
        for table in tables.reversed() where table.seeded {
            try await session.execute(PostgresQuery(unsafeSQL: "DELETE FROM \"\(table.name)\""))
        }
    }

    /// Appends a page of rows with `COPY … FROM STDIN`, in its text format.
    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws {
        var text = ""
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { text += "\t" }
                append(value, of: table, column: index, to: &text)
            }
            text += "\n"
        }
        let buffer = ByteBuffer(string: text)
        try await PostgresSession.translating {
            try await session.connection.copyFrom(
                table: table.name, columns: table.columns.map(\.name), logger: session.logger
            ) { writer in
                try await writer.write(buffer)
            }
        }
    }

    private func append(_ value: CopyValue, of table: CopyTable, column index: Int, to text: inout String) {
        switch value {
        case .null:
            text += "\\N"
        case .integer(let integer):
            text += isBoolean(table, table.columns[index]) ? (integer == 0 ? "f" : "t") : String(integer)
        case .real(let real):
            // Swift writes the shortest text that reads back as the same double, as PostgreSQL reads it.
            text += "\(real)"
        case .text(let string):
            // No U+0000 to refuse: the store never keeps one, and SQLite's text is read up to it.
            for character in string.unicodeScalars {
                switch character {
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                default: text.unicodeScalars.append(character)
                }
            }
        case .blob(let bytes):
            // bytea's hex form, its backslash escaped for COPY.
            text += "\\\\x"
            for byte in bytes {
                text.unicodeScalars.append(Self.hexDigits[Int(byte >> 4)])
                text.unicodeScalars.append(Self.hexDigits[Int(byte & 0xF)])
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".unicodeScalars)

    /// Moves each identity column's sequence past the largest id copied, so the next row the
    /// store inserts gets a new id.
    func advanceSequences() async throws {
        let identities = try await session.rows(
            """
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND is_identity = 'YES'
            """)
        for row in identities {
            let (table, column) = try row.decode((String, String).self)
            try await session.execute(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT setval(pg_get_serial_sequence('"\(table)"', '\(column)'),
                                      coalesce(max("\(column)"), 1), max("\(column)") IS NOT NULL)
                        FROM "\(table)"
                        """))
        }
    }
}
