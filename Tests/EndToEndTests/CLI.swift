import Foundation

/// The built `flagpole` binary, run as a user runs it, on a temporary directory of its own.
struct CLI {
    /// What one run printed and returned.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutBytes: [UInt8]
    }

    /// A fresh directory holding this test's database and files.
    let directory: URL

    /// The SQLite file in `directory`, or the PostgreSQL database the test gave.
    let databasePath: String

    init(database: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        databasePath = database ?? directory.appendingPathComponent("flagpole.sqlite").path
    }

    /// The binary SwiftPM built beside this test bundle.
    static let executable: URL = {
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
    var commandEnvironment: [String: String] { ["FLAGPOLE_DB": databasePath, "FLAGPOLE_ACTOR": "e2e"] }

    /// Runs `flagpole arguments…` in the test's directory with `--db`'s default pointing into it.
    @discardableResult
    func run(_ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]) throws -> Result {
        let child = try ChildProcess(
            Self.executable, arguments, in: directory,
            environment: commandEnvironment.merging(environment) { _, new in new }, stdin: stdin)
        let (_, out, err) = child.finishWithBytes()
        return Result(
            status: child.process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self),
            stdoutBytes: Array(out))
    }

    /// Starts `flagpole arguments…` without waiting for it, for a harness that may kill it.
    func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(Self.executable, arguments, in: directory, environment: commandEnvironment)
    }

    /// Runs and returns the JSON printed on stdout.
    func json(_ arguments: [String]) throws -> Any {
        let result = try run(arguments)
        return try JSONSerialization.jsonObject(with: Data(result.stdoutBytes))
    }

    /// Writes `text` to a file of the test's directory and returns its path.
    func write(_ text: String, to name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The path of a real fixture.
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/real/\(name)").path
    }
}
