import ArgumentParser
import FlagpoleCore

/// `--user ID` (required).
struct UserOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The user's id, as the app's backend knows it.", valueName: "id"))
    var user: String

    /// The validated id.
    func id() throws -> UserID {
        try Self.id(user)
    }

    func validate() throws {
        _ = try id()
    }

    /// Validates a user id given as text.
    ///
    /// - throws: `ValidationError` when it breaks the rules.
    static func id(_ text: String) throws -> UserID {
        do {
            return try UserID(validating: text)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
