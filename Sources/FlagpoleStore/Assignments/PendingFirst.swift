import FlagpoleCore

/// A first assignment a group commit's write will record (`AssignmentWriter.recordFirst`), known
/// before the write runs: see `AssignmentWriter.prerecord`.
struct PendingFirst: Sendable {
    /// The head the write records under: nothing is recorded unless it is still current.
    var head: EnvironmentHead
    var featureID: Int64
    var user: UserID
    var assignment: RecordedAssignment

    /// The assignment's primary key.
    struct Key: Hashable {
        var featureID: Int64
        var point: Double
        var user: UserID
    }

    var key: Key { Key(featureID: featureID, point: assignment.point, user: user) }
}

/// First assignments a transaction recorded ahead of the writes that record them (see
/// `AssignmentWriter.prerecord`), each until its write takes it: kept in the transaction's memo.
final class PrerecordedFirsts {
    var assignments: [PendingFirst.Key: RecordedAssignment] = [:]

    /// Whether `assignment` was recorded ahead under `key`; if so its write takes it, and reports
    /// it new, exactly once.
    func take(_ key: PendingFirst.Key, _ assignment: RecordedAssignment) -> Bool {
        guard assignments[key] == assignment else { return false }
        assignments[key] = nil
        return true
    }
}
