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
    func move(
        _ assignment: Assignment, featureID: Int64, to variation: String, isOverride: Bool, reason: AssignmentReason
    ) throws {
        let update = try db.cachedStatement(
            sql: """
                UPDATE assignments SET variation = ?, is_override = ?, revision = ?, assigned_at = ?
                WHERE feature_id = ? AND point = ? AND user_id = ?
                """)
        update.setUncheckedArguments([
            variation, isOverride, revision, time, featureID, assignment.point, assignment.user.rawValue,
        ])
        try update.execute()
        try appendEvent(
            featureID: featureID, user: assignment.user.rawValue, previous: assignment.variation, variation: variation,
            point: assignment.point, reason: reason)
    }

    /// Records a user never assigned before directly under an override.
    func recordOverride(user: String, featureID: Int64, point: Double, variation: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at)
                VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)
                """
        ).execute(arguments: [scope.tenant.id, scope.id, featureID, user, point, variation, revision, time])
        try appendEvent(
            featureID: featureID, user: user, previous: nil, variation: variation, point: point, reason: .override)
    }

    /// Records the first assignment of a user not yet recorded in a test, with a `first` event:
    /// one user's worth of `FirstAssignments`, without its staging table.
    /// Records `assignment` as `user`'s first in a test, with a `first` event, unless the user
    /// is recorded already (another request or process came first): then nothing is written
    /// and the recorded group is returned (`isNew` false), so the winner of a race is what
    /// everyone answers.
    func recordFirst(
        _ assignment: RecordedAssignment, of user: UserID, featureID: Int64
    ) throws -> (assignment: RecordedAssignment, isNew: Bool) {
        // Apps' first fetches run these two for every test of every new user: bound through
        // SQLite's C API, as bulk assignment's are.
        let insert = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision, assigned_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (feature_id, point, user_id) DO NOTHING
                """)
        let event = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, variation, point, revision, created_at, reason)
                VALUES (?1, ?2, ?3, ?4, ?6, ?5, ?7, ?8, 'first')
                """)
        for statement in [insert, event] {
            statement.bind(scope.tenant.id, at: 1)
            statement.bind(scope.id, at: 2)
            statement.bind(featureID, at: 3)
            statement.bind(user.rawValue, at: 4)
            statement.bind(assignment.point, at: 5)
            statement.bind(assignment.variation, at: 6)
            statement.bind(Int64(assignment.revision), at: 7)
            statement.bind(time, at: 8)
        }
        guard try insert.execute() == 1 else {
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT point, variation, is_override, revision FROM assignments WHERE feature_id = ? AND point = ? AND user_id = ?
                        """), arguments: [featureID, assignment.point, user.rawValue])!
            return (RecordedAssignment(point: row[0], variation: row[1], isOverride: row[2], revision: row[3]), false)
        }
        try event.execute()
        return (assignment, true)
    }

    /// Releases the QA overrides that `next` leaves without meaning: every one when the feature
    /// is disabled or no longer a test with variations, else those whose variation owns no
    /// points any more. Each released user goes to the group of their point, with an
    /// `override-cleared` event, so the users re-evaluation skips are only overrides the app
    /// can still land in. Returns how many were released.
    func releaseOverrides(featureID: Int64, under next: Feature) throws -> Int {
        let ranges = next.assignmentRanges
        let clientRanges = VariationRanges(of: next)
        let overridden = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT user_id, point, variation, revision FROM assignments WHERE feature_id = ? AND is_override = 1
                    """), arguments: [featureID])
        var released = 0
        for row in overridden {
            let assignment = Assignment(
                user: UserID(rawValue: row[0]), feature: next.name, variation: row[2], point: row[1], revision: row[3],
                isOverride: true)
            let isReachable =
                next.isEnabled && next.isBucketed && clientRanges.point(in: assignment.variation, preferring: 0) != nil
            guard !isReachable else { continue }
            try move(
                assignment, featureID: featureID, to: ranges.variation(at: assignment.point)!, isOverride: false,
                reason: .overrideCleared)
            released += 1
        }
        return released
    }

    /// Moves the recorded users of a feature (QA overrides aside) from the groups of `old` to
    /// those of `new`, with an event for each one who changes group. Returns the moves, pair by
    /// pair.
    ///
    /// Only points whose owner changes are visited, through the point index: a bias change that
    /// moves 10 % of a million users reads those 10 %, not the million.
    func reevaluate(
        featureID: Int64, from old: VariationRanges, to new: VariationRanges, reason: AssignmentReason
    ) throws -> [RecordedMove] {
        let record = try db.cachedStatement(
            sql: """
                INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
                    point, revision, reason, created_at)
                SELECT tenant_id, environment_id, feature_id, user_id, variation, ?, point, ?, ?, ?
                FROM assignments \(Self.movingUsers)
                """)
        let update = try db.cachedStatement(
            sql: """
                UPDATE assignments SET variation = ?, revision = ?, assigned_at = ? \(Self.movingUsers)
                """)
        var moves = MoveTally()
        for interval in old.changedIntervals(to: new) {
            let target: StatementArguments = [featureID, interval.lower, interval.upper, interval.to]
            record.setUncheckedArguments([interval.to, revision, reason.rawValue, time] + target)
            try record.execute()
            moves.add(RecordedMove(from: interval.from, to: interval.to, users: db.changesCount))
            update.setUncheckedArguments([interval.to, revision, time] + target)
            try update.execute()
        }
        return moves.moves
    }

    /// The users of one feature whose point lies in a range (`lower ..< upper`) owned by another
    /// variation than theirs, overrides aside; arguments: feature id, lower, upper, the range's
    /// variation. With every other user in the group of their point, these are all in the
    /// range's previous owner.
    static let movingUsers = """
        WHERE feature_id = ? AND point >= ? AND point < ? AND variation <> ? AND is_override = 0
        """

    func appendEvent(
        featureID: Int64, user: String, previous: String?, variation: String, point: Double, reason: AssignmentReason
    ) throws {
        let insert = try db.cachedStatement(
            sql: """
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

/// Recorded users moving from one variation to another.
struct RecordedMove: Hashable, Sendable {
    var from: String
    var to: String
    var users: Int
}

/// A variation users leave and the one they join.
struct MovePair: Hashable {
    var from: String
    var to: String
}

/// Recorded moves summed by pair, in the order pairs first appear; pairs are found by a
/// dictionary, as a test with many variations yields many of them.
struct MoveTally {
    private(set) var moves: [RecordedMove] = []
    private var positions: [MovePair: Int] = [:]

    /// Adds `move`'s users to its pair.
    mutating func add(_ move: RecordedMove) {
        let pair = MovePair(from: move.from, to: move.to)
        if let index = positions[pair] {
            moves[index].users += move.users
        } else if move.users > 0 {
            positions[pair] = moves.count
            moves.append(move)
        }
    }
}

extension VariationRanges {
    /// The points whose variation differs between `self` and `next` (names compared exactly, as
    /// the store records them), with their owner before and after: the only points a
    /// re-evaluation must visit, since every recorded user is kept in the group of their point.
    func changedIntervals(to next: VariationRanges) -> [(lower: Double, upper: Double, from: String, to: String)] {
        var intervals: [(lower: Double, upper: Double, from: String, to: String)] = []
        // Both lists run up [0, 100] in order: sweep them together rather than pair every
        // range with every other (a test may have tens of thousands of variations).
        var first = 0
        for oldIndex in ranges.indices {
            let old = bounds(of: oldIndex)
            guard old.lower < old.upper else { continue }
            while first < next.ranges.count && next.bounds(of: first).upper <= old.lower { first += 1 }
            for newIndex in next.ranges.indices[first...] {
                let new = next.bounds(of: newIndex)
                guard new.lower < old.upper else { break }
                guard ranges[oldIndex].name != next.ranges[newIndex].name else { continue }
                let lower = max(old.lower, new.lower)
                let upper = min(old.upper, new.upper)
                if lower < upper { intervals.append((lower, upper, ranges[oldIndex].name, next.ranges[newIndex].name)) }
            }
        }
        return intervals
    }
}

extension Database {
    /// The recorded users that moving a feature from `old` to `new` moves, pair by pair: the
    /// selection `AssignmentWriter.reevaluate` moves, counted without moving anyone.
    func pendingMoves(featureID: Int64, from old: VariationRanges, to new: VariationRanges) throws -> [RecordedMove] {
        let count = try cachedStatement(sql: "SELECT count(*) FROM assignments \(AssignmentWriter.movingUsers)")
        var moves = MoveTally()
        for interval in old.changedIntervals(to: new) {
            let users =
                try Int.fetchOne(count, arguments: [featureID, interval.lower, interval.upper, interval.to]) ?? 0
            moves.add(RecordedMove(from: interval.from, to: interval.to, users: users))
        }
        return moves.moves
    }

    /// How many users of a feature have a recorded group: the sum of its history's deltas, a
    /// few rows a minute, rather than a count of millions of assignments.
    func recordedUserCount(featureID: Int64) throws -> Int {
        try Int.fetchOne(
            cachedStatement(sql: "SELECT sum(users) FROM assignment_deltas WHERE feature_id = ?"),
            arguments: [featureID]) ?? 0
    }

    /// The recorded assignment of `user` in a feature, found by the point their id gives.
    func assignment(of user: UserID, in feature: StoredFeature) throws -> Assignment? {
        let row = try Row.fetchOne(
            cachedStatement(
                sql: """
                    SELECT point, variation, revision, is_override FROM assignments WHERE feature_id = ? AND point = ? AND user_id = ?
                    """),
            arguments: [feature.id, UserPoints(salt: feature.salt).point(for: user.rawValue), user.rawValue])
        return row.map { row in
            Assignment(
                user: user, feature: feature.feature.name, variation: row[1], point: row[0], revision: row[2],
                isOverride: row[3])
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
