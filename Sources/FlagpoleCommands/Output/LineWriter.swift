import Foundation
import Synchronization

/// Standard output for commands that print a line per user. Lines are gathered and written at
/// once when the store's transaction is over: a reader slow to drain the pipe must not hold the
/// database's write lock, and no line is printed for a change that is then rolled back. About
/// 40 bytes per user.
final class LineWriter: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    /// The invocation's, taken when the writer is made: lines are written from the store's threads,
    /// which don't see the task's invocation.
    private let output = Invocation.current.standardOutput

    func write(_ line: String) {
        buffer.withLock { bytes in
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
    }

    /// Writes every gathered line.
    func flush() {
        buffer.withLock { bytes in
            guard !bytes.isEmpty else { return }
            output.write(bytes)
            bytes.removeAll()
        }
    }
}
