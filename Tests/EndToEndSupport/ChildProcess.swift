import Foundation

/// A child process the harness may SIGKILL at any moment: its output goes to files, so a
/// killed child leaves no half-read pipe behind.
public final class ChildProcess {
    /// How the child ended.
    public enum Ending: Equatable, Sendable {
        case exited(Int32)
        case killed
    }

    public let process = Process()
    public let started: Date
    private let outURL: URL
    private let errURL: URL

    /// Starts `executable arguments…` in `directory`, with `stdin` written to its standard input
    /// (none: `/dev/null`).
    public init(
        _ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String] = [:],
        stdin: [UInt8]? = nil
    ) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var processEnvironment = ProcessInfo.processInfo.environment
        processEnvironment.merge(environment) { _, new in new }
        process.environment = processEnvironment
        let run = UUID().uuidString
        outURL = directory.appendingPathComponent(".stdout-\(run)")
        errURL = directory.appendingPathComponent(".stderr-\(run)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        started = Date()
        if let input, let stdin {
            input.fileHandleForWriting.write(Data(stdin))
            try input.fileHandleForWriting.close()
        }
    }

    public var pid: Int32 { process.processIdentifier }

    public var isRunning: Bool { process.isRunning }

    /// SIGKILL: no handler runs, no buffer is flushed, locks go with the process.
    public func kill() {
        _ = Foundation.kill(pid, SIGKILL)
    }

    /// Waits for the child and reads what it printed.
    public func finish() -> (ending: Ending, stdout: String, stderr: String) {
        let (ending, out, err) = finishWithBytes()
        return (ending, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// Waits for the child and reads what it printed, byte for byte.
    public func finishWithBytes() -> (ending: Ending, stdout: Data, stderr: Data) {
        process.waitUntilExitPromptly()
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = (try? Data(contentsOf: outURL)) ?? Data()
        let err = (try? Data(contentsOf: errURL)) ?? Data()
        let ending: Ending = process.terminationReason == .uncaughtSignal ? .killed : .exited(process.terminationStatus)
        return (ending, out, err)
    }
}
