import FlagpoleCore
import Foundation

/// A person of a tenant, as its listings show them.
public struct Member: Hashable, Sendable {
    /// Lowercase: what they sign in with. Flagpole sends no mail.
    public var email: String
    public var name: String
    /// Their role in the tenant listed.
    public var role: KeyRole
    public var joinedAt: Date
    /// Whether they have set a password (accepted their invitation).
    public var hasPassword: Bool
    /// When their unused invitation expires; `nil`: they have none.
    public var invitedUntil: Date? = nil

    /// How revisions name what the member changed: a person, never a key.
    public var actor: String { Member.actor(name: name, email: email) }

    static func actor(name: String, email: String) -> String { "\(name) <\(email)>" }
}

extension KeyRole {
    /// The roles a member can have in a tenant.
    public static let memberRoles: [KeyRole] = [.reader, .editor, .admin]

    /// A member's role as typed: admin, editor or reader.
    ///
    /// - throws: `MemberError.invalidRole`.
    public init(member text: String) throws {
        guard let role = KeyRole(rawValue: text), Self.memberRoles.contains(role) else {
            throw MemberError.invalidRole(text)
        }
        self = role
    }
}

/// What a member may do, read from their memberships on every request: a new role or a
/// removal takes effect at once.
public struct MemberGrants: Hashable, Sendable {
    public var email: String
    public var roles: [TenantSlug: KeyRole]

    public init(email: String, roles: [TenantSlug: KeyRole]) {
        self.email = email
        self.roles = roles
    }
}

/// Why a one-time link was made.
public enum MemberLinkPurpose: String, Hashable, Sendable {
    /// Sets the first password of someone added to a tenant.
    case invitation
    /// Sets a new password; only a server operator makes one.
    case reset
}

/// A one-time link just made: the only time its token exists outside the member's hands.
public struct MemberLink: Hashable, Sendable {
    /// Goes in the link (`/welcome/TOKEN`); the store keeps only its SHA-256.
    public var token: String
    public var email: String
    public var purpose: MemberLinkPurpose
    public var expiresAt: Date
}

/// A link presented to be used: whose it is, before the password is set.
public struct MemberLinkInfo: Hashable, Sendable {
    public var email: String
    public var name: String
    public var purpose: MemberLinkPurpose
    public var expiresAt: Date
}

/// A member's dashboard sign-in, as their list of sessions shows it.
public struct MemberSession: Hashable, Sendable {
    public var id: Int64
    public var address: String
    /// The browser's `User-Agent` when it signed in; `nil` for sessions from before schema 0018.
    public var browser: String?
    public var createdAt: Date
    public var expiresAt: Date
    /// Whether it is the session asking.
    public var isCurrent = false
}

/// How a sign-in with a password went.
public enum SignInOutcome: Hashable, Sendable {
    case opened(OpenedSession)
    /// Unknown address or wrong password: which one is not said.
    case refused
    /// Too many failures for the account or the address: nothing is checked until `until`.
    case lockedOut(until: Date)
}
