import Foundation
import Synchronization

/// A progress bar on stderr for long operations, drawn only when stderr is a terminal so logs
/// and pipes stay clean.
final class ProgressBar: Sendable {
    private let title: String
    private let total: Int
    private let isVisible: Bool
    /// The invocation's, taken when the bar is made: it advances on the store's threads.
    private let errors = Invocation.current.standardError
    /// Units done, and the last percentage drawn.
    private let state = Mutex<(done: Int, drawn: Int)>((0, -1))

    init(_ title: String, total: Int) {
        self.title = title
        self.total = total
        isVisible = total > 0 && errors.isTerminal
    }

    /// Counts one more unit done; redraws at most once per percent.
    func advance() {
        guard isVisible else { return }
        state.withLock { state in
            state.done += 1
            let percent = state.done * 100 / total
            guard percent != state.drawn else { return }
            state.drawn = percent
            let width = 30
            let filled = width * percent / 100
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            errors.write("\r\(title) \(bar) \(percent) % (\(state.done) of \(total))")
        }
    }

    /// Clears the bar's line.
    func finish() {
        guard isVisible else { return }
        errors.write("\r\u{1B}[2K")
    }
}

/// A line on stderr saying what a long set-based operation is doing (SQLite moves the users in
/// a few statements, so there is no count to draw a bar from), shown only on a terminal.
struct StatusLine {
    private let errors = Invocation.current.standardError

    init(_ text: String) {
        if errors.isTerminal { errors.write("\(text)…") }
    }

    func finish() {
        if errors.isTerminal { errors.write("\r\u{1B}[2K") }
    }
}
