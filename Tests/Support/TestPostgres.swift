import Foundation

/// A real PostgreSQL server for the tests that run on it, and a new empty database per test.
///
/// The server is `$FLAGPOLE_TEST_POSTGRES` when set (a URL whose user may create databases), else
/// one `Scripts/postgres` starts for this test process on first use, from Debian's `postgresql`
/// package; its watchdog stops it and deletes its files once the process has exited. Without
/// either, the tests that need it fail and say how to install it: a skipped backend is untested.
public enum TestPostgres {
    /// The URL of a new database, named after `label` (letters and digits) and a random suffix:
    /// empty, or a copy of the database at `template`'s URL (`CREATE DATABASE … TEMPLATE` copies
    /// its files, far faster than running its migrations again; nobody may be connected to it).
    public static func newDatabase(_ label: String = "test", copying template: String? = nil) throws -> String {
        let base = try server.get()
        let name =
            "\(label.filter { $0.isLetter || $0.isNumber }.lowercased())_\(UUID().uuidString.prefix(8).lowercased())"
        let source = template.flatMap { URLComponents(string: $0)?.path.dropFirst() }.map { " TEMPLATE \"\($0)\"" }
        _ = try run(
            psqlPath, ["-v", "ON_ERROR_STOP=1", "-q", "-d", base, "-c", "CREATE DATABASE \"\(name)\"\(source ?? "")"])
        return replacingDatabase(of: base, with: name)
    }

    /// Runs SQL on the database at `url` with `psql`, and returns what it printed, unaligned.
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        try run(psqlPath, ["-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-d", url, "-c", sql])
    }

    /// A server of the test's own, which it may stop and start again (`pause`, `resume`) without
    /// disturbing the other tests; stopped and deleted when the test process ends.
    public struct OwnServer: Sendable {
        public let url: String
        let directory: String

        public init() throws {
            let output = try TestPostgres.run(
                TestPostgres.script, ["start", "--owner-pid", String(getpid())]
            ).split(separator: "\n")
            guard output.count >= 2, output[0].hasPrefix("postgres://") else {
                throw TestPostgresError(message: "Scripts/postgres printed no URL: \(output)")
            }
            url = String(output[0])
            directory = String(output[1])
        }

        /// Stops the server, keeping its data: to clients, the database is gone.
        public func pause() throws {
            _ = try TestPostgres.run(TestPostgres.script, ["pause", directory])
        }

        /// Starts it again on the same port.
        public func resume() throws {
            _ = try TestPostgres.run(TestPostgres.script, ["resume", directory])
        }
    }

    private static var script: String { repository.appendingPathComponent("Scripts/postgres").path }

    private static let server: Result<String, TestPostgresError> = {
        if let url = ProcessInfo.processInfo.environment["FLAGPOLE_TEST_POSTGRES"], !url.isEmpty {
            return .success(url)
        }
        do {
            let output = try run(script, ["start", "--owner-pid", String(getpid())])
            guard let url = output.split(separator: "\n").first, url.hasPrefix("postgres://") else {
                return .failure(TestPostgresError(message: "Scripts/postgres printed no URL: \(output)"))
            }
            return .success(String(url))
        } catch let error as TestPostgresError {
            return .failure(
                TestPostgresError(
                    message:
                        "These tests run on a real PostgreSQL server and none could be started: \(error.message) Install it (apt-get install postgresql), or set FLAGPOLE_TEST_POSTGRES to the URL of a server where this user may create databases."
                ))
        } catch {
            return .failure(TestPostgresError(message: "\(error)"))
        }
    }()

    private static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Debian's psql, or the one on PATH: for tests that run it themselves.
    public static var psqlPath: String {
        let candidates = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in candidates.sorted().reversed() {
            let path = "/usr/lib/postgresql/\(version)/bin/psql"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/psql"
    }

    static func replacingDatabase(of url: String, with name: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/\(name)"
        return components.string ?? url
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw TestPostgresError(message: "cannot run \(executable): \(error).")
        }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestPostgresError(
                message:
                    "\(executable) \(arguments.joined(separator: " ")) failed: \(String(decoding: complaint, as: UTF8.self))"
            )
        }
        return String(decoding: printed, as: UTF8.self)
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
