/// One change of a user's group, as the figures of tests read it.
struct AssignmentEventRow {
    var id: Int64
    var featureID: Int64
    var user: String
    var variation: String
    var revision: Int
    var reason: String
    var byRule: Bool
    var createdAt: Int64
}
