import Dispatch
import FlagpoleCore
import Synchronization

/// The bytes of a revision: rendered already, or being rendered on another thread while the
/// import's transaction does what does not need them (reading the environment, writing its
/// features). Rendering a large file takes about as long as writing its features, and the
/// machine has a second core.
final class Rendering: Sendable {
    private let bytes = Mutex<[UInt8]?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Bytes rendered already.
    init(_ bytes: [UInt8]) {
        self.bytes.withLock { $0 = bytes }
        done.signal()
    }

    /// Starts rendering `document` on a global queue.
    init(rendering document: FeaturesDocument) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let rendered = document.rendered()
            bytes.withLock { $0 = rendered }
            done.signal()
        }
    }

    /// The bytes, once rendered: waits for them. Call it from a thread of GRDB's or a command's,
    /// never from Swift concurrency's pool, which it would block.
    var value: [UInt8] {
        done.wait()
        // Each reader passes the signal on, so every later reader finds the bytes at once.
        defer { done.signal() }
        return bytes.withLock { $0! }
    }
}
