import FlagpoleCore
import Foundation

/// Why a trigger could not be made, changed or called. None of them repeats a token.
public enum TriggerError: FlagpoleError, Equatable {
    case invalidName(String)
    case invalidAction(String)
    case triggerNotFound(EnvironmentPath, prefix: String)
    /// The token is no trigger's (or not a token at all).
    case unknownToken
    case revoked(at: Date)

    /// How long after acting a trigger only records its calls.
    public static let quietPeriod = 60

    public var description: String {
        switch self {
        case .invalidName(let reason):
            "The trigger's name \(reason). Name it after the alert that calls it, 1 to 100 characters."
        case .invalidAction(let text):
            "\"\(text.prefix(40))\" is not what a trigger does: use pause, rollback or disable."
        case .triggerNotFound(let path, let prefix):
            "\(path) has no trigger \(prefix). List them with `flagpole trigger list --tenant \(path.tenant) --env \(path.environment)`."
        case .unknownToken:
            "This is not a trigger's URL, or its token was mistyped. Copy the URL `flagpole trigger create` printed."
        case .revoked(let time):
            "This trigger was revoked on \(time.iso8601) and does nothing. Make a new one with `flagpole trigger create`."
        }
    }

    public var code: String {
        switch self {
        case .triggerNotFound, .unknownToken: "not_found"
        case .revoked: "gone"
        default: "invalid"
        }
    }
}
