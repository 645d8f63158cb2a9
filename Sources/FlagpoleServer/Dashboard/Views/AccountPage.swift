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
    /// "Firefox on macOS", from the browser's `User-Agent`; "an unknown browser" when it sent
    /// none or one not recognised, or signed in before Flagpole kept it.
    var browser: String
    var created: ShownTime
    var expires: ShownTime
    var endURL: String
    /// This browser's: signed out with the header's button, not from the list.
    var isCurrent: Bool

    init(_ session: MemberSession, endURL: String) {
        address = session.address
        browser = BrowserName(userAgent: session.browser).description
        created = ShownTime(session.createdAt)
        expires = ShownTime(session.expiresAt)
        self.endURL = endURL
        isCurrent = session.isCurrent
    }
}

/// A browser as a person recognises it, read from its `User-Agent`: the family and the system,
/// enough to tell the phone from the laptop in a list of sessions. Tokens are checked in the
/// order that tells browsers apart (Edge and Opera also say "Chrome"; Chrome also says "Safari").
struct BrowserName: CustomStringConvertible {
    var family: String?
    var system: String?

    init(userAgent: String?) {
        let agent = userAgent ?? ""
        family = Self.families.first { agent.contains($0.token) }?.name
        system = Self.systems.first { agent.contains($0.token) }?.name
    }

    var description: String {
        switch (family, system) {
        case (let family?, let system?): "\(family) on \(system)"
        case (let family?, nil): family
        case (nil, let system?): "a browser on \(system)"
        case (nil, nil): "an unknown browser"
        }
    }

    private static let families: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"),
        ("CriOS/", "Chrome"), ("Chrome/", "Chrome"), ("Safari/", "Safari"), ("curl/", "curl"),
    ]

    private static let systems: [(token: String, name: String)] = [
        ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"),
        ("Mac OS X", "macOS"), ("Windows", "Windows"), ("Linux", "Linux"),
    ]
}
