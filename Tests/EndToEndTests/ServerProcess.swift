import Foundation

/// `flagpole serve` running as a real process on a free port, for end-to-end tests.
final class ServerProcess {
    let process = Process()
    let baseURL: String
    private let output = Pipe()

    /// Starts the server on `cli`'s database and waits (up to 30 s) for it to print its address.
    init(_ cli: CLI, arguments: [String] = []) throws {
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--port", "0", "--db", cli.databasePath, "--log-level", "warning"] + arguments
        process.currentDirectoryURL = cli.directory
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var printed = Data()
        while Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the process closed its output: it exited
            printed.append(chunk)
            let text = String(decoding: printed, as: UTF8.self)
            if let match = text.firstMatch(of: /Listening on (http:\/\/127\.0\.0\.1:[0-9]+)/) {
                baseURL = String(match.1)
                return
            }
        }
        process.terminate()
        throw ServerDidNotStart(output: String(decoding: printed, as: UTF8.self))
    }

    struct ServerDidNotStart: Error {
        let output: String
    }

    /// Sends SIGTERM and waits for the exit status.
    func stop() -> Int32 {
        process.terminate()
        process.waitUntilExitPromptly()
        return process.terminationStatus
    }

    /// Sends SIGKILL, as a crash or the OOM killer would, and waits for the process to go.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExitPromptly()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// curl, as an operator would run it.
enum Curl {
    struct Result {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Starts a request without waiting for it: the body goes to `bodyFile`, the status (`000`
    /// when no answer came) to standard output.
    static func start(_ arguments: [String], bodyFile: URL) throws -> ChildProcess {
        try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["curl", "--silent", "--output", bodyFile.path, "--write-out", "%{http_code}"] + arguments,
            in: bodyFile.deletingLastPathComponent())
    }

    static func run(_ arguments: [String], stdin: [UInt8]? = nil) throws -> Result {
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
