import Crypto
import Foundation
import GRDB

/// A table as `flagpole copy` moves it: its columns by meaning, its primary key, which both
/// backends order the same way (PostgreSQL's text columns sort in the "C" collation, SQLite's
/// bytes), so rows read from either side come in the same order and hash to the same checksum.
struct CopyTable: Sendable {
    var name: String
    var columns: [Column]
    /// Positions in `columns`, in the key's order.
    var primaryKey: [Int]
    /// Whether the migrations write rows into it (the store's generation): a destination's
    /// own rows there give way to the source's.
    var seeded: Bool

    struct Column: Sendable {
        var name: String
        var kind: Kind
    }

    /// What a column holds, whatever each backend calls it. Booleans are integers 0 and 1 here, as
    /// in SQLite; PostgreSQL's `boolean` columns are converted on the way in and out.
    enum Kind: Sendable {
        case integer, real, text, blob
    }

    /// Rows handed on at once: enough that a page costs little more than its rows, few enough
    /// that a page of the largest rows stays a few megabytes.
    static let pageSize = 5_000

    var quotedColumns: String { columns.map { "\"\($0.name)\"" }.joined(separator: ", ") }
    var orderBy: String { primaryKey.map { "\"\(columns[$0].name)\"" }.joined(separator: ", ") }

    /// The tables of this version's schema, parents before children, read from SQLite's catalog of
    /// a database migrated in memory: the schema test keeps PostgreSQL's the same, so one list
    /// serves both backends.
    static func all() throws -> [CopyTable] {
        let queue = try DatabaseQueue()
        try FeatureStore.migrate(queue)
        return try queue.read { db in
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master
                    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
                    ORDER BY rowid
                    """)
            var parents: [String: Set<String>] = [:]
            var tables: [String: CopyTable] = [:]
            for name in names {
                var columns: [Column] = []
                var keyed: [(order: Int, position: Int)] = []
                for row in try Row.fetchAll(
                    db, sql: "SELECT name, type, pk FROM pragma_table_info(?)", arguments: [name])
                {
                    let type: String = row["type"]
                    let kind: Kind =
                        switch type.uppercased() {
                        case "INTEGER": .integer
                        case "REAL": .real
                        case "TEXT": .text
                        default: .blob
                        }
                    let order: Int = row["pk"]
                    if order > 0 { keyed.append((order, columns.count)) }
                    columns.append(Column(name: row["name"], kind: kind))
                }
                tables[name] = CopyTable(
                    name: name, columns: columns, primaryKey: keyed.sorted { $0.order < $1.order }.map(\.position),
                    seeded: try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \"\(name)\")") ?? false)
                parents[name] = Set(
                    try String.fetchAll(db, sql: "SELECT \"table\" FROM pragma_foreign_key_list(?)", arguments: [name])
                ).subtracting([name])
            }
            // Creation order, with each table moved after the tables its foreign keys name.
            var ordered: [CopyTable] = []
            var placed: Set<String> = []
            func place(_ name: String) {
                guard !placed.contains(name) else { return }
                placed.insert(name)
                for parent in (parents[name] ?? []).sorted() { place(parent) }
                ordered.append(tables[name]!)
            }
            names.forEach(place)
            return ordered
        }
    }
}

/// One value of a row in transit, in the kind of its column.
enum CopyValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A table's row count and the SHA-256 of its rows in key order, the same for the same rows
/// whichever backend they were read from: each value typed and length-prefixed, so no two
/// different rows encode alike.
struct TableChecksum: Sendable {
    private var hash = SHA256()
    private(set) var rows = 0
    /// A page's encoding, hashed at once: one update per value would cost more than the hash.
    private var buffer: [UInt8] = []

    mutating func add(_ page: [[CopyValue]]) {
        rows += page.count
        buffer.removeAll(keepingCapacity: true)
        for row in page {
            for value in row {
                switch value {
                case .null:
                    buffer.append(0)
                case .integer(let integer):
                    buffer.append(1)
                    append(UInt64(bitPattern: integer))
                case .real(let real):
                    buffer.append(2)
                    append(real.bitPattern)
                case .text(let text):
                    buffer.append(3)
                    append(UInt64(text.utf8.count))
                    buffer.append(contentsOf: text.utf8)
                case .blob(let bytes):
                    buffer.append(4)
                    append(UInt64(bytes.count))
                    buffer.append(contentsOf: bytes)
                }
            }
        }
        hash.update(data: buffer)
    }

    private mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    var hex: String { hash.finalize().map { String(format: "%02x", $0) }.joined() }
}
