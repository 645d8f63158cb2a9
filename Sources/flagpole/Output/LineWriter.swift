import Foundation
import Synchronization

/// Standard output for commands that print a line per user: lines are gathered and written
/// in blocks, since a write per line would cost a million system calls for a million users.
final class LineWriter: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private static let blockSize = 1 << 16

    func write(_ line: String) {
        buffer.withLock { bytes in
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
            if bytes.count >= Self.blockSize { Self.emit(&bytes) }
        }
    }

    func flush() {
        buffer.withLock { Self.emit(&$0) }
    }

    private static func emit(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        FileHandle.standardOutput.write(Data(bytes))
        bytes.removeAll(keepingCapacity: true)
    }
}
