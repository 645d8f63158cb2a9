/// Why a file is not strict JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    /// The byte offset of the offending character.
    public var offset: Int
    /// What is wrong, in one sentence.
    public var message: String
    /// How to fix it, in one sentence.
    public var fix: String

    /// Creates an error at byte `offset` with its message and fix.
    public init(offset: Int, message: String, fix: String) {
        self.offset = offset
        self.message = message
        self.fix = fix
    }
}
