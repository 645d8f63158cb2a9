/// What the dashboard refuses before reaching the store.
enum DashboardError: Error, Sendable {
    /// No session, or one that expired, was signed out or whose key was revoked.
    case signInRequired(next: String)
    /// A form without this session's CSRF token: from another site, or an older session.
    case forgedForm
    /// A form the dashboard's own pages can't have sent (a missing field, a bad number).
    case badForm(String)
}
