import FlagpoleCore
import Foundation
import GRDB

/// Writes changes of recorded users' groups (moves under overrides, re-evaluations after a
/// revision) with their events, inside one transaction; first assignments are
/// `FirstAssignments`'. Re-evaluation can move millions of rows: its statements are prepared
/// once per connection and bound without GRDB's per-call argument checks.
struct AssignmentWriter {
    let db: Database
    let scope: EnvironmentScope
    /// The revision the groups are computed under.
    let revision: Int
    /// Unix milliseconds, as the per-user tables keep time.
    let time: Int64

    init(db: Database, scope: EnvironmentScope, revision: Int, now: Date) {
        self.db = db
        self.scope = scope
        self.revision = revision
        self.time = now.unixMilliseconds
    }

    /// Moves a recorded user to `variation`, setting or clearing the override mark, with an event.
    func move(_ assignment: Assignment, featureID: Int64, to variation: String, isOverride: Bool, reason: AssignmentReason) throws {
        let update = try db.cachedStatement(sql: """
            UPDATE assignments SET variation = ?, is_override = ?, revision = ?, assigned_at = ?
            WHERE feature_id = ? AND user_id = ?
            """)
        update.setUncheckedArguments([variation, isOverride, revision, time, featureID, assignment.user.rawValue])
        try update.execute()
        try appendEvent(
            featureID: featureID, user: assignment.user.rawValue, previous: assignment.variation, variation: variation,
            point: assignment.point, reason: reason)
    }

    /// Records a user never assigned before directly under an override.
    func recordOverride(user: String, featureID: Int64, point: Double, variation: String) throws {
        try db.cachedStatement(sql: """
            INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at)
            VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)
            """).execute(arguments: [scope.tenant.id, scope.id, featureID, user, point, variation, revision, time])
        try appendEvent(featureID: featureID, user: user, previous: nil, variation: variation, point: point, reason: .override)
    }

    /// Moves the recorded users of a feature (QA overrides aside) from the groups of `old` to
    /// those of `new`, with an event for each one who changes group. Returns how many changed.
    ///
    /// Only points whose owner changes are visited, through the point index: a bias change that
    /// moves 10 % of a million users reads those 10 %, not the million.
    func reevaluate(featureID: Int64, from old: VariationRanges, to new: VariationRanges, reason: AssignmentReason) throws -> Int {
        let record = try db.cachedStatement(sql: """
            INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
                point, revision, reason, created_at)
            SELECT tenant_id, environment_id, feature_id, user_id, variation, ?, point, ?, ?, ?
            FROM assignments \(Self.movingUsers)
            """)
        let update = try db.cachedStatement(sql: """
            UPDATE assignments SET variation = ?, revision = ?, assigned_at = ? \(Self.movingUsers)
            """)
        var moved = 0
        for interval in old.changedIntervals(to: new) {
            let target: StatementArguments = [featureID, interval.lower, interval.upper, interval.variation]
            record.setUncheckedArguments([interval.variation, revision, reason.rawValue, time] + target)
            try record.execute()
            moved += db.changesCount
            update.setUncheckedArguments([interval.variation, revision, time] + target)
            try update.execute()
        }
        return moved
    }

    /// The users of one feature whose point lies in a range (`lower ..< upper`) owned by another
    /// variation than theirs; arguments: feature id, lower, upper, the range's variation.
    static let movingUsers = """
        WHERE feature_id = ? AND point >= ? AND point < ? AND variation <> ? AND is_override = 0
        """

    func appendEvent(featureID: Int64, user: String, previous: String?, variation: String, point: Double, reason: AssignmentReason) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
                point, revision, reason, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.setUncheckedArguments([
            scope.tenant.id, scope.id, featureID, user, previous, variation, point, revision, reason.rawValue, time,
        ])
        try insert.execute()
    }
}

extension VariationRanges {
    /// The points whose variation differs between `self` and `next` (names compared exactly, as
    /// the store records them), each with its variation under `next`: the only points a
    /// re-evaluation must visit, since every recorded user is kept in the group of their point.
    func changedIntervals(to next: VariationRanges) -> [(lower: Double, upper: Double, variation: String)] {
        var intervals: [(lower: Double, upper: Double, variation: String)] = []
        for oldIndex in ranges.indices {
            let old = bounds(of: oldIndex)
            for newIndex in next.ranges.indices where ranges[oldIndex].name != next.ranges[newIndex].name {
                let new = next.bounds(of: newIndex)
                let lower = max(old.lower, new.lower)
                let upper = min(old.upper, new.upper)
                if lower < upper { intervals.append((lower, upper, next.ranges[newIndex].name)) }
            }
        }
        return intervals
    }
}

extension Database {
    /// The recorded users of a feature that moving from `old` to `new` moves, by pair of
    /// variations: the same selection `AssignmentWriter.reevaluate` moves.
    func pendingMoves(featureID: Int64, from old: VariationRanges, to new: VariationRanges) throws -> [(from: String, to: String, users: Int)] {
        let count = try cachedStatement(sql: """
            SELECT variation, count(*) FROM assignments \(AssignmentWriter.movingUsers) GROUP BY variation ORDER BY variation
            """)
        var moves: [(from: String, to: String, users: Int)] = []
        for interval in old.changedIntervals(to: new) {
            let rows = try Row.fetchCursor(count, arguments: [featureID, interval.lower, interval.upper, interval.variation])
            while let row = try rows.next() {
                if let index = moves.firstIndex(where: { $0.from == row[0] && $0.to == interval.variation }) {
                    moves[index].users += row[1]
                } else {
                    moves.append((row[0], interval.variation, row[1]))
                }
            }
        }
        return moves
    }

    /// The recorded assignment of `user` in a feature.
    func assignment(of user: UserID, in feature: StoredFeature) throws -> Assignment? {
        let row = try Row.fetchOne(cachedStatement(sql: """
            SELECT point, variation, revision, is_override FROM assignments WHERE feature_id = ? AND user_id = ?
            """), arguments: [feature.id, user.rawValue])
        return row.map { row in
            Assignment(user: user, feature: feature.feature.name, variation: row[1], point: row[0], revision: row[2], isOverride: row[3])
        }
    }
}

extension Date {
    /// Milliseconds since 1970, as the per-user tables keep time.
    var unixMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    init(unixMilliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(unixMilliseconds) / 1000)
    }
}
