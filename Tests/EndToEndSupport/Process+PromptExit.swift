import Foundation

extension Process {
    /// Waits for the process to exit, within a millisecond of it doing so.
    ///
    /// On Linux, Foundation's `waitUntilExit()` runs the run loop in 50 ms steps, so each
    /// child costs up to 50 ms of waiting after it has exited: seconds over a test's hundreds
    /// of commands, minutes over thousands. `isRunning` is updated as soon as Foundation reaps
    /// the child, so polling it is prompt; `waitUntilExit()` then returns at once.
    public func waitUntilExitPromptly() {
        while isRunning {
            usleep(500)
        }
        waitUntilExit()
    }
}
