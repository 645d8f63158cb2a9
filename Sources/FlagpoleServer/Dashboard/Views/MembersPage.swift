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
    var joined: ShownTime
    var state: String
    /// When an invited member's link expires.
    var linkExpires: ShownTime?
    var isPending: Bool
    var roleURL: String
    var removeURL: String
    var invitationURL: String
    var roleChoices: [Choice]

    init(_ member: Member, urls: TenantURLs) {
        email = member.email
        name = member.name
        role = member.role.rawValue
        joined = ShownTime(member.joinedAt)
        isPending = !member.hasPassword
        linkExpires = member.hasPassword ? nil : member.invitedUntil.map(ShownTime.init)
        state = member.hasPassword ? "active" : linkExpires == nil ? "invited, link expired" : "invited"
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
    var expires: ShownTime

    init(_ link: MemberLink, server: String) {
        email = link.email
        url = link.url(server: server)
        expires = ShownTime(link.expiresAt)
    }
}

/// The add-member form as typed, and why it was refused.
struct MemberFormView: Sendable {
    var email: String
    var name: String
    var role: String
    var error: String?
}
