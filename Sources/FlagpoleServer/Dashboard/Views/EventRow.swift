import FlagpoleStore

/// One assignment event in a table: who moved from which group to which, and why.
struct EventRow: Sendable {
    var time: ShownTime
    var user: String
    var userURL: String
    var feature: String
    var from: String
    var to: String
    var reason: String
    var revision: Int

    init(_ event: AssignmentEvent, urls: EnvironmentURLs) {
        time = ShownTime(event.time)
        user = event.user.rawValue
        userURL = urls.user(event.user.rawValue)
        feature = event.feature
        from = event.previousVariation ?? "–"
        to = event.variation
        reason = event.reason.rawValue
        revision = event.revision
    }
}
