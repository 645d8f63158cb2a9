import FlagpoleCore
import Foundation

/// Who a change of rules or segments moves in one test, counted from the recorded users and
/// their last attributes: those whose client follows rules (OFREP, configs.json, a FeatureFlags
/// app not yet given its group) move; FeatureFlags apps that already keep a point don't, and are
/// counted apart.
public struct TargetingPlan: Hashable, Sendable {
    /// A pair of variations, with how many users it concerns and a few of them.
    public struct Move: Hashable, Sendable {
        public var from: String
        public var to: String
        public var users: Int
        /// Up to `TargetingPlan.exampleCount` of the users, the first found.
        public var examples: [UserID]
    }

    public var feature: String
    /// Recorded users who change group, pair by pair.
    public var moves: [Move]
    /// FeatureFlags apps this change of rules would place elsewhere but which keep the point they
    /// cached: their group and the history stay as they are. An app the rules before the change
    /// already placed where these would is not counted again: a plan counts what its change does.
    public var keptByApps: [Move]
    /// Recorded users of the test (QA overrides aside), and how many of them have attributes on record.
    public var recordedUsers: Int
    public var usersWithAttributes: Int

    /// Users who change group.
    public var movingUsers: Int { moves.reduce(0) { $0 + $1.users } }

    static let exampleCount = 5
}

/// Re-decides the recorded users of one test under a revision's rules and segments (see
/// `TargetingPlan`); with a writer, moves those whose client follows rules, with an event each.
///
/// It reads every recorded user of the test with their last attributes: a rule can match anyone,
/// so nothing narrower than the test's users can be read. Moves are collected, then written, so
/// the table is not written under its own cursor.
struct TargetingReevaluation {
    let db: Transaction
    let test: PinningPlan.Test
    let segments: SegmentLookup
    /// The test's rules and the segments before the change, when the change is one of rules or
    /// segments: apps they already placed elsewhere were counted by the change that did.
    var previous: (test: PinningPlan.Test, segments: SegmentLookup)? = nil

    func run(writer: AssignmentWriter?, reason: AssignmentReason = .rules) throws -> TargetingPlan {
        var moves = Tally()
        var kept = Tally()
        var pending: [(user: UserID, assignment: RecordedAssignment, decision: PinningPlan.Decision)] = []
        var recorded = 0
        var withAttributes = 0
        try db.assignments.forEachUserWithAttributes(featureID: test.featureID) { user, assignment, json in
            recorded += 1
            var attributes: [String: AttributeValue] = [:]
            if let json {
                withAttributes += 1
                attributes = UserAttributes(stored: json)?.values ?? [:]
            }
            let context = EvaluationContext(user: user, attributes: attributes)
            let decision = test.decision(for: context, point: assignment.point, segments: segments)
            if assignment.isPinned {
                let before = previous?.test.decision(
                    for: context, point: assignment.point, segments: previous!.segments)
                if decision.variation != assignment.variation, before?.variation != decision.variation {
                    kept.add(from: assignment.variation, to: decision.variation, user: user)
                }
            } else if decision != PinningPlan.Decision(variation: assignment.variation, rule: assignment.rule) {
                if decision.variation != assignment.variation {
                    moves.add(from: assignment.variation, to: decision.variation, user: user)
                }
                // A plan only counts: nothing to keep for a write.
                if writer != nil { pending.append((user, assignment, decision)) }
            }
        }
        if let writer {
            for (user, assignment, decision) in pending {
                try writer.redecide(assignment, of: user, featureID: test.featureID, to: decision, reason: reason)
            }
        }
        return TargetingPlan(
            feature: test.name, moves: moves.moves, keptByApps: kept.moves, recordedUsers: recorded,
            usersWithAttributes: withAttributes)
    }

    /// Moves summed by pair, in the order pairs first appear, with their first few users.
    private struct Tally {
        private(set) var moves: [TargetingPlan.Move] = []
        private var positions: [MovePair: Int] = [:]

        mutating func add(from: String, to: String, user: UserID) {
            let pair = MovePair(from: from, to: to)
            if let index = positions[pair] {
                moves[index].users += 1
                if moves[index].examples.count < TargetingPlan.exampleCount { moves[index].examples.append(user) }
            } else {
                positions[pair] = moves.count
                moves.append(TargetingPlan.Move(from: from, to: to, users: 1, examples: [user]))
            }
        }
    }
}
