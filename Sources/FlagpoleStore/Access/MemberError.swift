import FlagpoleCore
import Foundation

/// Why an operation on members failed, worded for the person who can fix it. None of them
/// repeats a password or a token.
public enum MemberError: FlagpoleError, Equatable {
    case invalidEmail(String)
    case invalidName(String)
    case invalidRole(String)
    case memberNotFound(email: String, tenant: TenantSlug)
    /// No one has this address, in any tenant.
    case unknownMember(email: String)
    /// A session that is not (or no longer) the signed-in member's.
    case sessionNotFound
    case alreadyMember(email: String, tenant: TenantSlug)
    /// An invitation is only for a member who never set a password; others need a reset.
    case alreadyAccepted(email: String)
    case passwordTooShort(minimum: Int)
    /// Refused before hashing, so a huge password costs the server nothing.
    case passwordTooLong(maximumBytes: Int)
    case wrongPassword
    case linkNotFound
    case linkUsed(at: Date)
    case linkExpired(at: Date)
    /// A member's key may do no more than the member.
    case keyAboveMember(KeyRole, member: KeyRole)
    case memberKeyNeedsTenant

    public var description: String {
        switch self {
        case .invalidEmail(let text):
            "\"\(text.prefix(80))\" is not an e-mail address: write it as name@example.com (it is what the member signs in with)."
        case .invalidName(let reason):
            "The member's name \(reason). Give the name colleagues know them by, 1 to 100 characters."
        case .invalidRole(let text):
            "\"\(text.prefix(40))\" is not a member's role: use admin, editor or reader."
        case .memberNotFound(let email, let tenant):
            "\(email) is not a member of \(tenant). List the members with `flagpole member list --tenant \(tenant)`."
        case .unknownMember(let email):
            "No one signs in as \(email). Add them to a tenant with `flagpole member add`."
        case .sessionNotFound:
            "That session is not one of yours, or it has ended already. Reload the page to see your sessions."
        case .alreadyMember(let email, let tenant):
            "\(email) is a member of \(tenant) already. Change their role with `flagpole member role`."
        case .alreadyAccepted(let email):
            "\(email) has set a password already: an invitation would replace it. A server operator makes a reset link with `flagpole member reset \(email)`."
        case .passwordTooShort(let minimum):
            "The password is too short: use at least \(minimum) characters (a few unrelated words are easy to remember)."
        case .passwordTooLong(let maximum):
            "The password is longer than \(maximum) bytes, which is more than any password needs. Use a shorter one."
        case .wrongPassword:
            "The current password is not right. Type it again; if it is lost, ask a server operator for a reset link."
        case .linkNotFound:
            "This link is not one Flagpole made, or it was replaced by a newer one. Ask an admin for a new link."
        case .linkUsed(let time):
            "This link was used on \(time.iso8601) and works only once. Sign in, or ask an admin for a new link."
        case .linkExpired(let time):
            "This link expired on \(time.iso8601): links last 72 hours. Ask an admin for a new one."
        case .keyAboveMember(let role, let member):
            "A member's key can do no more than the member: they are \(member.rawValue), the key would be \(role.rawValue). Pick a lower role, or change theirs first."
        case .memberKeyNeedsTenant:
            "A member's key belongs to a tenant they are a member of: pass --tenant."
        }
    }

    public var code: String {
        switch self {
        case .memberNotFound, .unknownMember, .sessionNotFound, .linkNotFound: "not_found"
        case .alreadyMember: "exists"
        case .alreadyAccepted: "accepted"
        case .linkUsed, .linkExpired: "gone"
        case .passwordTooLong: "too_large"
        case .wrongPassword: "forbidden"
        default: "invalid"
        }
    }
}
