import FlagpoleCommands
import Foundation

/// `flagpole`, as a user runs it, on a temporary directory of its own: in process by default
/// (`run`), the command tree given this test's variables, directory and streams, so that tests
/// run commands side by side in one process; the built binary (`runBinary`, `start`) where a
/// process is the point: exit codes, pipes, signals, kills.
public struct CLI: Sendable {
    /// What one run printed and returned.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var stdoutBytes: [UInt8]

        public init(status: Int32, stdout: [UInt8], stderr: [UInt8]) {
            self.status = status
            self.stdout = String(decoding: stdout, as: UTF8.self)
            self.stderr = String(decoding: stderr, as: UTF8.self)
            stdoutBytes = stdout
        }
    }

    /// A fresh directory holding this test's database and files.
    public let directory: URL

    /// The SQLite file in `directory`, or the PostgreSQL database the test gave.
    public let databasePath: String

    public init(database: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        databasePath = database ?? directory.appendingPathComponent("flagpole.sqlite").path
    }

    /// The binary SwiftPM built beside this test bundle.
    public static let executable: URL = {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        // On Linux the runner is .build/<config>/<Package>PackageTests.xctest; look beside it and above.
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("flagpole")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        fatalError("the flagpole binary is not built next to \(testBinary.path); run `swift build` first")
    }()

    /// The variables every command gets: `--db`'s default points into the test's directory.
    /// In process they are all the command sees: nothing of the test process's own leaks in.
    public var commandEnvironment: [String: String] { ["FLAGPOLE_DB": databasePath, "FLAGPOLE_ACTOR": "e2e"] }

    /// Runs `flagpole arguments…` in process, in the test's directory, with `--db`'s default
    /// pointing into it; `stdin` is what `-` reads.
    @discardableResult
    public func run(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]
    ) async
        -> Result
    {
        let invocation = Invocation(
            environment: commandEnvironment.merging(environment) { _, new in new }, workingDirectory: directory.path,
            standardInput: .bytes(stdin ?? []))
        let status = await Flagpole.run(arguments, in: invocation)
        return Result(
            status: status, stdout: invocation.standardOutput.bytes, stderr: invocation.standardError.bytes)
    }

    /// A command that was expected to succeed and did not, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public let arguments: [String]
        public let result: Result

        public init(_ arguments: [String], _ result: Result) {
            self.arguments = arguments
            self.result = result
        }

        public var description: String {
            "flagpole \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)"
        }
    }

    /// Runs in process, as `run`, and throws `Failure` unless the command exits 0: for setup.
    @discardableResult
    public func succeed(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]
    ) async throws
        -> Result
    {
        let result = await run(arguments, stdin: stdin, environment: environment)
        guard result.status == 0 else { throw Failure(arguments, result) }
        return result
    }

    /// Runs the built binary, `flagpole arguments…`, as a process in the test's directory, with
    /// the test process's variables and `--db`'s default pointing into the directory.
    @discardableResult
    public func runBinary(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]
    ) throws
        -> Result
    {
        let child = try ChildProcess(
            Self.executable, arguments, in: directory,
            environment: commandEnvironment.merging(environment) { _, new in new }, stdin: stdin)
        let (_, out, err) = child.finishWithBytes()
        return Result(status: child.process.terminationStatus, stdout: Array(out), stderr: Array(err))
    }

    /// Starts the built binary without waiting for it, for a harness that may kill it.
    public func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(
            Self.executable, arguments, in: directory,
            environment: commandEnvironment.merging(environment) { _, new in new })
    }

    /// Runs in process and returns the JSON printed on stdout.
    public func json(_ arguments: [String]) async throws -> Any {
        let result = await run(arguments)
        return try JSONSerialization.jsonObject(with: Data(result.stdoutBytes))
    }

    /// Writes `text` to a file of the test's directory and returns its path.
    public func write(_ text: String, to name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The path of a real fixture.
    public static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/real/\(name)").path
    }
}
