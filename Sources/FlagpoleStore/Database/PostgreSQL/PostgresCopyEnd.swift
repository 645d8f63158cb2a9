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
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
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
        let booleans = table.columns.map { isBoolean(table, $0) }
        var buffer = ByteBufferAllocator().buffer(capacity: rows.count * 128)
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                Self.write(value, isBoolean: booleans[index], to: &buffer)
            }
            buffer.writeInteger(UInt8(ascii: "\n"))
        }
        try await PostgresSession.translating {
            try await session.connection.copyFrom(
                table: table.name, columns: table.columns.map(\.name), logger: session.logger
            ) { writer in
                try await writer.write(buffer)
            }
        }
    }

    /// One value in `COPY`'s text format, written as bytes: a page is millions of them.
    private static func write(_ value: CopyValue, isBoolean: Bool, to buffer: inout ByteBuffer) {
        switch value {
        case .null:
            buffer.writeStaticString("\\N")
        case .integer(let integer):
            if isBoolean {
                buffer.writeInteger(integer == 0 ? UInt8(ascii: "f") : UInt8(ascii: "t"))
            } else {
                buffer.writeString(String(integer))
            }
        case .real(let real):
            // Swift writes the shortest text that reads back as the same double, as PostgreSQL reads it.
            buffer.writeString(real.description)
        case .text(var string):
            // No U+0000 to refuse: the store never keeps one, and SQLite's text is read up to it.
            string.withUTF8 { bytes in
                var start = 0
                for index in bytes.indices {
                    let escaped: UInt8
                    switch bytes[index] {
                    case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
                    case UInt8(ascii: "\n"): escaped = UInt8(ascii: "n")
                    case UInt8(ascii: "\r"): escaped = UInt8(ascii: "r")
                    case UInt8(ascii: "\t"): escaped = UInt8(ascii: "t")
                    default: continue
                    }
                    buffer.writeBytes(bytes[start..<index])
                    buffer.writeInteger(UInt8(ascii: "\\"))
                    buffer.writeInteger(escaped)
                    start = index + 1
                }
                buffer.writeBytes(bytes[start...])
            }
        case .blob(let bytes):
            // bytea's hex form, its backslash escaped for COPY.
            buffer.writeStaticString("\\\\x")
            for byte in bytes {
                buffer.writeInteger(hexDigits[Int(byte >> 4)])
                buffer.writeInteger(hexDigits[Int(byte & 0xF)])
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The foreign keys and the indexes of their own, which a load sets aside and puts back as
    /// `pg_restore` does: each index built once over the loaded rows, each key checked in one
    /// pass, rather than both kept up row by row. All of it inside the copy's transaction.
    struct SetAside: Sendable {
        var foreignKeys: [(table: String, name: String, definition: String)]
        var indexes: [String]
    }

    func setAsideKeysAndIndexes() async throws -> SetAside {
        let foreignKeys = try await session.rows(
            """
            SELECT conrelid::regclass::text, conname::text, pg_get_constraintdef(oid)
            FROM pg_constraint WHERE contype = 'f' AND connamespace = current_schema()::regnamespace
            """
        ).map { try $0.decode((String, String, String).self) }
        let indexes = try await session.rows(
            """
            SELECT i.relname::text, pg_get_indexdef(x.indexrelid)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
            WHERE t.relnamespace = current_schema()::regnamespace
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))
            """
        ).map { try $0.decode((String, String).self) }
        for (table, name, _) in foreignKeys {
            try await session.execute(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) DROP CONSTRAINT \"\(name)\""))
        }
        for (name, _) in indexes {
            try await session.execute(PostgresQuery(unsafeSQL: "DROP INDEX \"\(name)\""))
        }
        return SetAside(
            foreignKeys: foreignKeys.map { (table: $0.0, name: $0.1, definition: $0.2) }, indexes: indexes.map(\.1))
    }

    /// Builds the indexes, then adds the keys back under their own names, checking every row.
    func putBack(_ setAside: SetAside) async throws {
        for definition in setAside.indexes {
            try await session.execute(PostgresQuery(unsafeSQL: definition))
        }
        for key in setAside.foreignKeys {
            try await session.execute(
                PostgresQuery(unsafeSQL: "ALTER TABLE \(key.table) ADD CONSTRAINT \"\(key.name)\" \(key.definition)"))
        }
    }

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

/// A PostgreSQL database as a copy's source: one session in one `REPEATABLE READ, READ ONLY`
/// transaction, so the copy is the store at one moment while servers keep writing.
extension PostgresCopyEnd: CopySource {
    /// - throws: `StorageError.databaseTooNew`, `StorageError.databaseNeedsMigration`.
    static func openSource(_ address: PostgresAddress) async throws -> PostgresCopyEnd {
        let session = try await PostgresSession.open(address)
        do {
            let status = try await PostgresSchema.status(session)
            guard status.unknown.isEmpty else { throw StorageError.databaseTooNew(unknownMigrations: status.unknown) }
            guard status.pending.isEmpty else {
                throw StorageError.databaseNeedsMigration(path: address.description, pending: status.pending)
            }
            try await session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try await PostgresCopyEnd.open(session)
        } catch {
            await session.close()
            throw error
        }
    }

    func close() async {
        await session.close()
    }
}

/// An empty PostgreSQL database as a copy's destination: one session in one transaction, its
/// keys and indexes set aside while the rows load.
struct PostgresCopyDestination: CopyDestination {
    let end: PostgresCopyEnd
    let setAside: PostgresCopyEnd.SetAside

    /// The schema, when the database lacks it, is written in the copy's transaction: a copy that
    /// fails leaves the database as it found it.
    ///
    /// - throws: `CopyError` (a database that is not empty, or holds other tables).
    static func open(_ address: PostgresAddress, tables: [CopyTable]) async throws -> PostgresCopyDestination {
        let session = try await PostgresSession.open(address)
        do {
            try await session.execute("BEGIN")
            try await PostgresCopyEnd.refuseOtherTables(session, tables: tables)
            _ = try await PostgresSchema.applyPending(session)
            let end = try await PostgresCopyEnd.open(session)
            try await end.checkEmpty(tables)
            return PostgresCopyDestination(end: end, setAside: try await end.setAsideKeysAndIndexes())
        } catch {
            try? await session.execute("ROLLBACK")
            await session.close()
            throw error
        }
    }

    func insert(_ rows: [[CopyValue]], into table: CopyTable) async throws {
        try await end.insert(rows, into: table)
    }

    func finishLoading() async throws {
        try await end.putBack(setAside)
        try await end.advanceSequences()
    }

    func readBack(
        _ tables: [CopyTable], _ consume: @escaping @Sendable (CopyTable, [[CopyValue]]) async throws -> Void
    ) async throws {
        try await end.read(tables, consume)
    }

    func keep() async throws {
        try await end.session.execute("COMMIT")
        await end.session.close()
    }

    func abandon() async {
        try? await end.session.execute("ROLLBACK")
        await end.session.close()
    }
}
