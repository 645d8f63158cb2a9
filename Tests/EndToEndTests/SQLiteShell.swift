import Foundation

/// The `sqlite3` shell on a database file: an independent reader of what flagpole wrote,
/// sharing none of its code. Waits up to 10 s for locks, as the store does.
struct SQLiteShell {
    let databasePath: String

    struct Failure: Error, CustomStringConvertible {
        let script: String
        let status: Int32
        let stderr: String
        var description: String { "sqlite3 exited \(status) on `\(script.prefix(300))`: \(stderr)" }
    }

    /// The rows of one statement, as `sqlite3 -json` prints them.
    func rows(_ sql: String) throws -> [[String: Any]] {
        try batch([sql])[0]
    }

    /// The rows of each statement, run one after the other by one `sqlite3` process (starting
    /// a process costs more than most of these queries).
    func batch(_ statements: [String]) throws -> [[[String: Any]]] {
        let marker = "--8<-- end of statement --8<--"
        let script = ".mode json\n" + statements.map { "\($0);\n.print \(marker)\n" }.joined()
        let output = String(decoding: try run(script), as: UTF8.self)
        return try output.components(separatedBy: marker + "\n").dropLast().map { text in
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { return [] }
            return try JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [[String: Any]] ?? []
        }
    }

    /// The first column of the first row, as text.
    func text(_ sql: String) throws -> String {
        String(decoding: try run(".mode list\n\(sql);\n"), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// An integer result.
    func int(_ sql: String) throws -> Int {
        let value = try text(sql)
        guard let number = Int(value) else { throw Failure(script: sql, status: 0, stderr: "not an integer: \(value)") }
        return number
    }

    /// Runs statements that return nothing.
    func execute(_ sql: String) throws {
        _ = try run("\(sql);\n")
    }

    /// Runs a script of statements and dot-commands, read from standard input.
    private func run(_ script: String) throws -> Data {
        let child = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "-bail", "-batch", databasePath],
            in: URL(fileURLWithPath: databasePath).deletingLastPathComponent(),
            stdin: Array(".timeout 10000\n\(script)".utf8))
        let (_, output, errors) = child.finishWithBytes()
        guard child.process.terminationStatus == 0 else {
            throw Failure(
                script: script, status: child.process.terminationStatus, stderr: String(decoding: errors, as: UTF8.self)
            )
        }
        return output
    }
}
