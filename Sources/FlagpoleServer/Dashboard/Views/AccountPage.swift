import FlagpoleStore

/// What `account.mustache` shows: who is signed in, their tenants and sessions, and the password form.
struct AccountPage: Sendable {
    var chrome: Chrome
    var csrf: String
    var actor: String
    /// A member signed in with their password; a key's session has no password or session list.
    var isMember: Bool
    var sessions: [SessionRow]
    var tenants: [String]
    var passwordError: String?
    /// Whether a session besides this browser's is open: "Sign out everywhere else" ends them.
    var hasOtherSessions = false
}

/// One of the member's sessions.
struct SessionRow: Sendable {
    var address: String
    var created: ShownTime
    var expires: ShownTime
    var endURL: String
    /// This browser's: signed out with the header's button, not from the list.
    var isCurrent: Bool

    init(_ session: MemberSession, endURL: String) {
        address = session.address
        created = ShownTime(session.createdAt)
        expires = ShownTime(session.expiresAt)
        self.endURL = endURL
        isCurrent = session.isCurrent
    }
}
