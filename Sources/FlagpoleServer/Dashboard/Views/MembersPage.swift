import FlagpoleCore
import FlagpoleStore
import Foundation

/// What `members.mustache` shows: a tenant's members, their roles and the forms that change them.
struct MembersPage: Sendable {
    var chrome: Chrome
    var tenant: String
    var settingsURL: String
    var membersURL: String
    var csrf: String
    var members: [MemberRow]
    /// The invitation just made, shown on this answer only.
    var link: LinkView?
    /// The member whose removal waits for a confirmation.
    var removing: MemberRow?
    var form = MemberFormView(email: "", name: "", role: KeyRole.editor.rawValue, error: nil)
    // Stored: the templates read a value's stored properties only.
    var hasMembers = false
    var roleChoices: [Choice] = []

    mutating func refresh() {
        hasMembers = !members.isEmpty
        roleChoices = KeyRole.memberRoles.map {
            Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0.rawValue == form.role)
        }
    }
}

/// One member of the list, with their role's form.
struct MemberRow: Sendable {
    var email: String
    var name: String
    var role: String
    var joined: String
    var state: String
    var isPending: Bool
    var roleURL: String
    var removeURL: String
    var invitationURL: String
    var roleChoices: [Choice]

    init(_ member: Member, urls: TenantURLs) {
        email = member.email
        name = member.name
        role = member.role.rawValue
        joined = member.joinedAt.formatted(.iso8601)
        isPending = !member.hasPassword
        state =
            member.hasPassword
            ? "active"
            : member.invitedUntil.map { "invited, link expires \($0.formatted(.iso8601))" }
                ?? "invited, link expired"
        roleURL = urls.member(member.email) + "/role"
        removeURL = urls.member(member.email) + "/remove"
        invitationURL = urls.member(member.email) + "/invitation"
        roleChoices = KeyRole.memberRoles.map {
            Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0 == member.role)
        }
    }
}

/// An invitation or reset link just made.
struct LinkView: Sendable {
    var email: String
    var url: String
    var expires: String

    init(_ link: MemberLink, server: String) {
        email = link.email
        url = link.url(server: server)
        expires = link.expiresAt.formatted(.iso8601)
    }
}

/// The add-member form as typed, and why it was refused.
struct MemberFormView: Sendable {
    var email: String
    var name: String
    var role: String
    var error: String?
}
