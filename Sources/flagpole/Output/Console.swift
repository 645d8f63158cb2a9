import FlagpoleCore
import Foundation

/// Where the CLI writes: results to stdout, diagnostics and progress to stderr.
enum Console {
    static func out(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func out(bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints `value` as JSON on stdout, in the 4-space layout.
    static func json(_ value: JSONValue) {
        out(bytes: JSONWriter().bytes(of: value))
    }
}
