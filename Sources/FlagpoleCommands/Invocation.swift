import FlagpoleStore
import Foundation
import Synchronization

/// What one run of a command reads and writes besides its database: its variables, its working
/// directory and its standard streams.
///
/// The `flagpole` binary runs with the process's own (`Invocation.process`). A test runs commands
/// in one process, many at once, each with its own: `Flagpole.run(_:in:)` makes it the task's
/// `current` for the length of the command, so no command reads the process's variables or
/// writes its stdout directly (swift-format keeps its command line as thin over a library).
public struct Invocation: Sendable {
    /// The variables the command sees (`FLAGPOLE_DB`, `FLAGPOLE_ACTOR`, `FLAGPOLE_CLOCK_FILE`…).
    public var environment: [String: String]

    /// Where relative paths of arguments start; `nil`: the process's own working directory.
    public var workingDirectory: String?

    /// What `-` reads.
    public var standardInput: StandardInput

    /// Results.
    public let standardOutput: CommandOutput

    /// Diagnostics and progress.
    public let standardError: CommandOutput

    /// An invocation with its own buffers for output, reading `standardInput`.
    public init(
        environment: [String: String], workingDirectory: String?, standardInput: StandardInput = .bytes([])
    ) {
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.standardInput = standardInput
        standardOutput = CommandOutput()
        standardError = CommandOutput()
    }

    private init(process: ProcessInfo) {
        environment = process.environment
        workingDirectory = nil
        standardInput = .fileHandle(.standardInput)
        standardOutput = CommandOutput(.standardOutput, isTerminal: isatty(STDOUT_FILENO) == 1)
        standardError = CommandOutput(.standardError, isTerminal: isatty(STDERR_FILENO) == 1)
    }

    /// The process's own variables, working directory and streams.
    public static let process = Invocation(process: .processInfo)

    /// The invocation of the command running in this task.
    @TaskLocal public static var current = Invocation.process

    /// `path` as the command opens it: relative paths start at `workingDirectory`.
    public func resolve(_ path: String) -> String {
        guard let workingDirectory, !path.hasPrefix("/") else { return path }
        return URL(fileURLWithPath: workingDirectory).appendingPathComponent(path).path
    }

    /// The time that scheduled work goes by: the instant in `$FLAGPOLE_CLOCK_FILE` when it is
    /// set (to rehearse a ramp, or to test one without waiting), else the system's.
    public var clock: WallClock {
        environment["FLAGPOLE_CLOCK_FILE"].map { WallClock.file(resolve($0)) } ?? .system
    }

    /// Who runs the command, recorded on the revisions it makes: the operator's own declaration
    /// for direct database access, `cli:` and `$FLAGPOLE_ACTOR`, else the login name, so that it
    /// is never mistaken for a member the server authenticated.
    public var actor: String {
        let name = environment["FLAGPOLE_ACTOR"] ?? environment["USER"] ?? ""
        return name.isEmpty ? "cli" : name.hasPrefix("cli:") ? name : "cli:\(name)"
    }
}

/// What a command's `-` reads: the process's standard input, or bytes a test gives.
public enum StandardInput: Sendable {
    case fileHandle(FileHandle)
    case bytes([UInt8])

    /// Everything there is to read.
    func readAll() -> [UInt8] {
        switch self {
        case .fileHandle(let handle): Array(handle.readDataToEndOfFile())
        case .bytes(let bytes): bytes
        }
    }
}

/// Standard output or error of one invocation: the process's file descriptor, or a buffer a
/// test reads once the command is over.
public final class CommandOutput: Sendable {
    private let handle: FileHandle?
    private let buffer = Mutex<[UInt8]>([])

    /// Whether a person is watching (progress is drawn only then).
    public let isTerminal: Bool

    init(_ handle: FileHandle? = nil, isTerminal: Bool = false) {
        self.handle = handle
        self.isTerminal = isTerminal
    }

    /// Writes `bytes` at once.
    public func write(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        if let handle {
            handle.write(Data(bytes))
        } else {
            buffer.withLock { $0.append(contentsOf: bytes) }
        }
    }

    /// Writes `text`.
    public func write(_ text: String) {
        write(Array(text.utf8))
    }

    /// What was written to a buffer so far.
    public var bytes: [UInt8] { buffer.withLock { $0 } }
}
