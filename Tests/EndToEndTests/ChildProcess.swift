import Foundation

/// A child process the harness may SIGKILL at any moment: its output goes to files, so a
/// killed child leaves no half-read pipe behind.
final class ChildProcess {
    /// How the child ended.
    enum Ending: Equatable {
        case exited(Int32)
        case killed
    }

    let process = Process()
    let started: Date
    private let outURL: URL
    private let errURL: URL

    /// Starts `executable arguments…` in `directory`.
    init(_ executable: URL, _ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws {
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
        process.standardInput = FileHandle.nullDevice
        try process.run()
        started = Date()
    }

    var pid: Int32 { process.processIdentifier }

    var isRunning: Bool { process.isRunning }

    /// SIGKILL: no handler runs, no buffer is flushed, locks go with the process.
    func kill() {
        _ = Foundation.kill(pid, SIGKILL)
    }

    /// Waits for the child and reads what it printed.
    func finish() -> (ending: Ending, stdout: String, stderr: String) {
        process.waitUntilExitPromptly()
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = (try? Data(contentsOf: outURL)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let err = (try? Data(contentsOf: errURL)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let ending: Ending = process.terminationReason == .uncaughtSignal ? .killed : .exited(process.terminationStatus)
        return (ending, out, err)
    }
}
