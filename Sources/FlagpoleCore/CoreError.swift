/// The errors of FlagpoleCore, worded for the person who can fix them.
public enum CoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A tenant slug or environment name breaks the slug rules.
    case invalidSlug(kind: String, value: String, reason: String)

    public var description: String {
        switch self {
        case .invalidSlug(let kind, let value, let reason):
            "\"\(value)\" is not a valid \(kind): \(reason) (for example \"my-app\")."
        }
    }
}
