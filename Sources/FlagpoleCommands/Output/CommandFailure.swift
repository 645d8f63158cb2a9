/// A failure of the command's work (not of its arguments): printed as the message, exit 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
