import Foundation

/// `flagpole serve` running as a real process on a free port, for end-to-end tests.
public final class ServerProcess {
    public let process = Process()
    public let baseURL: String
    private let output = Pipe()

    /// Starts the server on `cli`'s database and waits (up to 30 s) for it to print its address.
    ///
    /// - parameter log: a file that keeps everything the server prints, at `--log-level debug`,
    ///   for a test that reads the log of the whole run; without it the server logs warnings only.
    /// - parameter environment: variables added to the test's (`FLAGPOLE_CLOCK_FILE`).
    public init(_ cli: CLI, arguments: [String] = [], log: URL? = nil, environment: [String: String] = [:]) throws {
        process.executableURL = CLI.executable
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.arguments =
            ["serve", "--port", "0", "--db", cli.databasePath, "--log-level", log == nil ? "warning" : "debug"]
            + arguments
        process.currentDirectoryURL = cli.directory
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let file = try FileHandle(forWritingTo: log)
            process.standardOutput = file
            process.standardError = file
        } else {
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var printed = Data()
        while Date() < deadline {
            if let log {
                // A file never says "no more": read it again until the address is in it.
                printed = (try? Data(contentsOf: log)) ?? Data()
                if !process.isRunning { break }
            } else {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }  // the process closed its output: it exited
                printed.append(chunk)
            }
            let text = String(decoding: printed, as: UTF8.self)
            if let match = text.firstMatch(of: /Listening on (http:\/\/127\.0\.0\.1:[0-9]+)/) {
                baseURL = String(match.1)
                return
            }
            if log != nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        process.terminate()
        throw ServerDidNotStart(output: String(decoding: printed, as: UTF8.self))
    }

    public struct ServerDidNotStart: Error {
        public let output: String
    }

    /// Sends SIGTERM and waits for the exit status.
    public func stop() -> Int32 {
        process.terminate()
        process.waitUntilExitPromptly()
        return process.terminationStatus
    }

    /// Sends SIGKILL, as a crash or the OOM killer would, and waits for the process to go.
    public func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExitPromptly()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// curl, as an operator would run it.
public enum Curl {
    public struct Result: Sendable {
        public var status: Int
        /// By lowercased name.
        public var headers: [String: String]
        public var body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }

        public func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(body)) }
    }

    /// Starts a request without waiting for it: the body goes to `bodyFile`, the status (`000`
    /// when no answer came) to standard output.
    public static func start(_ arguments: [String], bodyFile: URL) throws -> ChildProcess {
        try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["curl", "--silent", "--output", bodyFile.path, "--write-out", "%{http_code}"] + arguments,
            in: bodyFile.deletingLastPathComponent())
    }

    /// One request as an app makes it: `method` to `url` with `headers`, and `body` as JSON.
    public static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil
    ) throws -> Result {
        var arguments = ["-X", method]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if body != nil { arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"] }
        return try run(arguments + [url], stdin: body.map { Array($0.utf8) })
    }

    public static func run(_ arguments: [String], stdin: [UInt8]? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let headerFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "curl-headers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: headerFile) }
        process.arguments = ["curl", "--silent", "--show-error", "--dump-header", headerFile.path] + arguments
        let out = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin)) }
        try input.fileHandleForWriting.close()
        let body = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExitPromptly()
        let lines = (try? String(contentsOf: headerFile, encoding: .utf8))?.components(separatedBy: "\r\n") ?? []
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Result(status: status, headers: headers, body: Array(body))
    }
}
