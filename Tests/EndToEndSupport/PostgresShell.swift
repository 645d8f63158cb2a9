import FlagpoleTestSupport
import Foundation

/// `psql` on a PostgreSQL database's URL. Readers never wait for writers there: no lock
/// timeout to set.
public struct PostgresShell: DatabaseShell {
    public let url: String

    public init(url: String) {
        self.url = url
    }

    public var backend: Backend { .postgres }

    /// The rows of each statement, run one after the other by one `psql` process, as one
    /// JSON array each. They read one snapshot (a read-only repeatable-read transaction), so
    /// they agree with each other even while a writer commits. `json_agg` keeps the order of
    /// a sorted subquery, but breaks lines between rows: a marker line ends each statement.
    public func batch(_ statements: [String]) throws -> [[[String: Any]]] {
        let queries = statements.map {
            "SELECT coalesce(json_agg(t), '[]'::json) FROM (\n\($0)\n) t;\n\\echo \(Self.statementEnd)\n"
        }
        let script = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;\n\(queries.joined())COMMIT;\n"
        return try rowsOfEachStatement(in: run(script))
    }

    /// The first column of the first row, as text.
    public func text(_ sql: String) throws -> String {
        String(decoding: try run("\(sql);\n"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs statements that return nothing.
    public func execute(_ sql: String) throws {
        _ = try run("\(sql);\n")
    }

    /// Runs a script read from standard input, stopping at the first error; prints rows
    /// unaligned, without headers or status lines. Never prompts for a password: a URL that
    /// needs one it lacks fails.
    private func run(_ script: String) throws -> Data {
        let child = try ChildProcess(
            URL(fileURLWithPath: TestPostgres.psqlPath),
            ["-X", "-w", "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-d", url],
            in: FileManager.default.temporaryDirectory, environment: ["PGCLIENTENCODING": "UTF8"],
            stdin: Array(script.utf8))
        return try output(of: child, running: script)
    }
}
