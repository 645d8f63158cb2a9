import Foundation

/// Where a test's writers write: a SQLite file, or a PostgreSQL database.
public enum Backend: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// The command-line client of `database`: a SQLite file's path, or a PostgreSQL URL.
    public func shell(on database: String) -> any DatabaseShell {
        switch self {
        case .sqlite: return SQLiteShell(databasePath: database)
        case .postgres: return PostgresShell(url: database)
        }
    }

    /// Its client's name, for failures.
    public var client: String {
        switch self {
        case .sqlite: "sqlite3"
        case .postgres: "psql"
        }
    }
}

/// A database's own command-line client (`sqlite3`, `psql`): an independent reader of what
/// flagpole wrote, sharing none of its code. Rows come back as JSON objects, decoded by
/// `JSONSerialization`.
public protocol DatabaseShell {
    /// Which SQL the database speaks, for the few statements written for each.
    var backend: Backend { get }

    /// The rows of each statement, run one after the other by one client process (starting
    /// a process costs more than most of these queries).
    func batch(_ statements: [String]) throws -> [[[String: Any]]]

    /// The first column of the first row, as text.
    func text(_ sql: String) throws -> String

    /// Runs statements that return nothing.
    func execute(_ sql: String) throws
}

extension DatabaseShell {
    /// The line each client prints after a statement's rows in `batch`.
    public static var statementEnd: String { "--8<-- end of statement --8<--" }

    /// The rows of each statement in what `batch`'s script printed: one JSON array of objects
    /// per statement, each followed by `statementEnd` (nothing at all: no rows).
    public func rowsOfEachStatement(in output: Data) throws -> [[[String: Any]]] {
        try String(decoding: output, as: UTF8.self).components(separatedBy: Self.statementEnd + "\n").dropLast().map {
            text in
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { return [] }
            return try JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [[String: Any]] ?? []
        }
    }

    /// What `child`, the client running `script`, printed; a `ShellFailure` with what it said
    /// when it exits with an error.
    public func output(of child: ChildProcess, running script: String) throws -> Data {
        let (_, output, errors) = child.finishWithBytes()
        guard child.process.terminationStatus == 0 else {
            throw ShellFailure(
                client: backend.client, script: script, status: child.process.terminationStatus,
                stderr: String(decoding: errors, as: UTF8.self))
        }
        return output
    }

    /// The rows of one statement.
    public func rows(_ sql: String) throws -> [[String: Any]] {
        try batch([sql])[0]
    }

    /// An integer result.
    public func int(_ sql: String) throws -> Int {
        let value = try text(sql)
        guard let number = Int(value) else {
            throw ShellFailure(client: backend.client, script: sql, status: 0, stderr: "not an integer: \(value)")
        }
        return number
    }
}

/// A script a database's client did not run through.
public struct ShellFailure: Error, CustomStringConvertible {
    public let client: String
    public let script: String
    public let status: Int32
    public let stderr: String
    public var description: String { "\(client) exited \(status) on `\(script.prefix(300))`: \(stderr)" }
}

/// The `sqlite3` shell on a database file. Waits up to 10 s for locks, as the store does.
public struct SQLiteShell: DatabaseShell {
    public let databasePath: String

    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    public var backend: Backend { .sqlite }

    /// The rows of each statement, run one after the other by one `sqlite3` process (starting
    /// a process costs more than most of these queries).
    public func batch(_ statements: [String]) throws -> [[[String: Any]]] {
        let script = ".mode json\n" + statements.map { "\($0);\n.print \(Self.statementEnd)\n" }.joined()
        return try rowsOfEachStatement(in: run(script))
    }

    /// The first column of the first row, as text.
    public func text(_ sql: String) throws -> String {
        String(decoding: try run(".mode list\n\(sql);\n"), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Runs statements that return nothing.
    public func execute(_ sql: String) throws {
        _ = try run("\(sql);\n")
    }

    /// Runs a script of statements and dot-commands, read from standard input.
    private func run(_ script: String) throws -> Data {
        let child = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "-bail", "-batch", databasePath],
            in: URL(fileURLWithPath: databasePath).deletingLastPathComponent(),
            stdin: Array(".timeout 10000\n\(script)".utf8))
        return try output(of: child, running: script)
    }
}
