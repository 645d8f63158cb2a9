/// What `welcome.mustache` shows: whose link it is and the password form, or why it can't be used.
struct WelcomePage: Sendable {
    var chrome: Chrome
    var csrf: String
    var token: String
    var name: String
    var email: String
    var isReset: Bool
    var expires: String
    var hasLink: Bool
    var error: String?
}
