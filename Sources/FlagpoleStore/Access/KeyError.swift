import FlagpoleCore

/// Why an operation on API keys failed, worded for the person who can fix it.
public enum KeyError: FlagpoleError {
    case keyNotFound(prefix: String)
    /// Server keys are server admins, and tenant keys never are.
    case invalidKeyRole(KeyRole, owner: KeyOwner)
    /// Only a delivery key is scoped to one environment.
    case scopedKeyNotDelivery(KeyRole)

    public var description: String {
        switch self {
        case .keyNotFound(let prefix):
            "There is no key \"\(prefix)\" here. List keys with `flagpole key list`."
        case .invalidKeyRole(let role, let owner):
            owner == .server
                ? "A server-wide key is always a server admin (not \(role.rawValue)). Drop --role, or pass --tenant to make a tenant key."
                : "A tenant key cannot be a server admin. Use admin, editor, reader or delivery, or make a server key with --server-admin."
        case .scopedKeyNotDelivery(let role):
            "Only a delivery key is scoped to one environment, not \(role.rawValue). Pass --role delivery, or drop --env."
        }
    }

    public var code: String {
        switch self {
        case .keyNotFound: "not_found"
        case .invalidKeyRole, .scopedKeyNotDelivery: "invalid"
        }
    }
}
