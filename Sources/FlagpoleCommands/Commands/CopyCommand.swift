import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation
import Synchronization

/// `flagpole copy --from PATH_OR_URL --to PATH_OR_URL`.
struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a whole database between SQLite and PostgreSQL, and check the copy.",
        discussion: """
            The source is read in one read transaction, so the copy is the store as it was at one moment, \
            while servers keep writing to it. The destination is a SQLite path where no file exists yet, or an \
            empty PostgreSQL database (the migrations it lacks are applied first). Every table is written, read \
            back and compared with its source, row count and SHA-256 of its rows in key order, before the copy \
            is kept: the SQLite file appears only then, the PostgreSQL transaction commits only then. A copy \
            that fails keeps no data. Each side is a SQLite path or a URL postgres://USER:PASSWORD@HOST:PORT/NAME.
            """)

    @Option(help: ArgumentHelp("The database to copy.", valueName: "path-or-url"))
    var from: String

    @Option(help: ArgumentHelp("The new database.", valueName: "path-or-url"))
    var to: String

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let source = try DatabaseOptions.address(from)
        let destination = try DatabaseOptions.address(to)
        let started = ContinuousClock.now
        let report: CopyReport
        do {
            report = try await FeatureStore.copy(from: source, to: destination, progress: Self.progressLine())
            Self.clearProgressLine()
        } catch {
            Self.clearProgressLine()
            throw error
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        if output.json {
            Console.json([
                "from": .string(source.description), "to": .string(destination.description),
                "rows": .number(Double(report.rows)), "seconds": .number(seconds),
                "tables": .array(
                    report.tables.map { table in
                        .object([
                            "name": .string(table.name), "rows": .number(Double(table.rows)),
                            "sha256": .string(table.sha256),
                        ])
                    }),
            ])
            return
        }
        let width = report.tables.map(\.name.count).max() ?? 0
        for table in report.tables {
            Console.out(
                "\(table.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(String(table.rows).leftPadded(10))  \(table.sha256.prefix(16))"
            )
        }
        let perSecond = seconds > 0 ? Int(Double(report.rows) / seconds) : report.rows
        Console.out(
            "Copied \(report.rows) rows in \(report.tables.count) tables from \(source) to \(destination) in \(String(format: "%.1f", seconds)) s (\(perSecond) rows/s); every table read back and matched its source."
        )
    }

    /// On a terminal, one line that says which table is being copied and how many of its rows
    /// are written, rewritten in place; nothing when stderr is a file or a pipe.
    static func progressLine() -> @Sendable (String, Int) -> Void {
        let errors = Invocation.current.standardError
        guard errors.isTerminal else { return { _, _ in } }
        let written = Mutex<(table: String, rows: Int)>(("", 0))
        return { table, rows in
            let line = written.withLock { state in
                state = state.table == table ? (table, state.rows + rows) : (table, rows)
                return "\r\u{1B}[Kcopying \(table): \(state.rows) rows"
            }
            errors.write(line)
        }
    }

    static func clearProgressLine() {
        let errors = Invocation.current.standardError
        if errors.isTerminal { errors.write("\r\u{1B}[K") }
    }
}
