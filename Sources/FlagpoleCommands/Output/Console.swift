import FlagpoleCore
import Foundation

/// Where the CLI writes: results to stdout, diagnostics and progress to stderr, of the current
/// invocation.
enum Console {
    static func out(_ text: String = "") {
        Invocation.current.standardOutput.write(text + "\n")
    }

    static func out(bytes: [UInt8]) {
        Invocation.current.standardOutput.write(bytes)
    }

    static func error(_ text: String) {
        Invocation.current.standardError.write(text + "\n")
    }

    /// Prints `value` as JSON on stdout, in the 4-space layout.
    static func json(_ value: JSONValue) {
        out(bytes: JSONWriter().bytes(of: value))
    }
}
