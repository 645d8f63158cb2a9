import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on `assignments`, `assignment_events` and
/// `assignment_deltas` (which every write of events keeps): users' recorded groups, every
/// change of them, and the per-minute net changes that counts and charts read.
///
/// Writes go through `AssignmentWriter` (moves, overrides, first assignments of a few users,
/// re-evaluation after a revision) and `FirstAssignments` (first assignments in bulk), both
/// below; a single event row is written by `AssignmentWriter.appendEvent` alone.
struct AssignmentTable {
    let db: Database

    /// The recorded assignment of `user` in a feature, found by the point their id gives.
    func assignment(of user: UserID, in feature: StoredFeature) throws -> Assignment? {
        let row = try Row.fetchOne(
            db.cachedStatement(
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

    /// Whether a feature has any recorded user.
    func hasRecordedUsers(featureID: Int64) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM assignments WHERE feature_id = ?)", arguments: [featureID]) ?? true
    }

    /// How many users of a feature have a recorded group: the sum of its history's deltas, a
    /// few rows a minute, rather than a count of millions of assignments.
    func recordedUserCount(featureID: Int64) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT sum(users) FROM assignment_deltas WHERE feature_id = ?"),
            arguments: [featureID]) ?? 0
    }

    /// How many assignments are recorded, in every tenant.
    func count() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM assignments") ?? 0
    }

    /// The recorded users that moving a feature from `old` to `new` moves, pair by pair: the
    /// selection `AssignmentWriter.reevaluate` moves, counted without moving anyone.
    func pendingMoves(
        featureID: Int64, from old: VariationRanges, to new: VariationRanges, followsRules: Bool = false
    ) throws -> [RecordedMove] {
        var moves = MoveTally()
        for interval in old.changedIntervals(to: new) {
            for selection in AssignmentWriter.movingSelections(
                featureID: featureID, interval: interval, followsRules: followsRules)
            {
                let count = try db.cachedStatement(sql: "SELECT count(*) FROM assignments \(selection.sql)")
                let users = try Int.fetchOne(count, arguments: selection.arguments) ?? 0
                moves.add(RecordedMove(from: interval.from, to: interval.to, users: users))
            }
        }
        return moves.moves
    }

    /// Users per variation of `stored`, now (the sum of its history's deltas) or as they stood at
    /// `time` (each user's last event at or before it). Variations come in the feature's order,
    /// then any others users are recorded in (`Disabled` while a test is off), by name.
    func counts(of stored: StoredFeature, at time: Date?) throws -> [VariationCount] {
        let rows =
            if let time {
                try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT variation, count(*) FROM (
                                SELECT variation, max(id) FROM assignment_events
                                WHERE feature_id = ? AND created_at <= ? GROUP BY user_id)
                            GROUP BY variation
                            """), arguments: [stored.id, time.unixMilliseconds])
            } else {
                try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT variation, sum(users) FROM assignment_deltas WHERE feature_id = ? GROUP BY variation HAVING sum(users) <> 0
                            """), arguments: [stored.id])
            }
        var users: [String: Int] = [:]
        for row in rows { users[row[0], default: 0] += row[1] }
        return stored.ordered(users)
    }

    /// Assignment events of an environment, newest first; `featureID` is `query.feature`'s.
    func events(
        in scope: EnvironmentScope, matching query: AssignmentEventQuery, featureID: Int64?
    ) throws -> [AssignmentEvent] {
        // The index of the narrowest filter, named: the planner, which has no statistics,
        // took the environment's for a feature's history and walked back through every
        // event of the other tests newer than the feature's last (a million, in the bench).
        let index =
            query.user != nil
            ? "assignment_events_by_user"
            : query.feature != nil ? "assignment_events_by_feature" : "assignment_events_by_environment"
        var sql = """
            SELECT e.id, e.user_id, f.name, e.previous_variation, e.variation, e.point, e.revision, e.reason, e.created_at,
                e.rule
            FROM assignment_events e INDEXED BY \(index) JOIN features f ON f.id = e.feature_id
            WHERE e.environment_id = ? AND e.tenant_id = ?
            """
        var arguments: StatementArguments = [scope.id, scope.tenant.id]
        func filter(_ condition: String, _ value: (any DatabaseValueConvertible)?) {
            guard let value else { return }
            sql += " AND \(condition)"
            arguments += [value]
        }
        filter("e.user_id = ?", query.user?.rawValue)
        filter("e.feature_id = ?", featureID)
        filter("e.created_at >= ?", query.since?.unixMilliseconds)
        filter("e.created_at < ?", query.until?.unixMilliseconds)
        filter("e.id < ?", query.before)
        sql += " ORDER BY e.id DESC LIMIT ?"
        arguments += [query.limit]
        // One statement per combination of filters, prepared once per connection.
        return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            AssignmentEvent(
                id: row[0], user: UserID(rawValue: row[1]), feature: row[2], previousVariation: row[3],
                variation: row[4],
                point: row[5], revision: row[6], reason: AssignmentReason(rawValue: row[7]) ?? .first,
                time: Date(unixMilliseconds: row[8]), rule: row[9])
        }
    }

    /// Users per variation of `stored` at `samples` evenly spaced times, from the minute of its
    /// first assignment to `now` (see `FeatureStore.assignmentTimeline`).
    func timeline(of stored: StoredFeature, samples: Int, now: Date) throws -> [AssignmentSnapshot] {
        let deltas = try Row.fetchCursor(
            db.cachedStatement(
                sql: "SELECT minute, variation, users FROM assignment_deltas WHERE feature_id = ? ORDER BY minute"),
            arguments: [stored.id])
        guard samples > 0, var next = try deltas.next() else { return [] }
        let start = Date(unixMilliseconds: (next["minute"] as Int64) * 60_000)
        let step = samples > 1 ? max(0, now.timeIntervalSince(start)) / Double(samples - 1) : 0
        var users: [String: Int] = [:]
        var isExhausted = false
        return try (0..<samples).map { index in
            let time = samples > 1 ? start.addingTimeInterval(step * Double(index)) : now
            let minute = time.unixMilliseconds / 60_000
            while !isExhausted, (next["minute"] as Int64) <= minute {
                users[next["variation"], default: 0] += next["users"]
                if let row = try deltas.next() { next = row } else { isExhausted = true }
            }
            return AssignmentSnapshot(time: time, counts: stored.ordered(users))
        }
    }

    /// What is recorded of `user` in the tests and unlock flags of `plan`, and whether `plan` is
    /// still current (the same revision and generation), in one statement (so one snapshot, in
    /// a transaction or not), stepped through SQLite's C API since every fetch of a user's
    /// document runs it. The plan's ids are valid while its generation is: only a restore
    /// changes them.
    func userSnapshot(of user: UserID, under plan: PinningPlan) throws -> (isCurrent: Bool, state: UserState) {
        let statement = try RawStatement(
            cachedIn: db,
            sql: """
                SELECT 0, NULL, (SELECT max(number) FROM revisions WHERE tenant_id = ?1 AND environment_id = ?2),
                    (SELECT generation FROM store_generation), NULL, NULL, NULL, NULL, NULL
                UNION ALL
                -- The primary key (feature_id, point, user_id) probed once per test, with the user's
                -- point scaled from its hash exactly as it was when recorded. CROSS JOIN fixes that
                -- order, where the planner alone may scan every assignment.
                SELECT 1, a.feature_id, a.point, a.variation, a.is_override, a.revision, a.rule, a.pinned, a.app_point
                FROM json_each(?4) test CROSS JOIN assignments a ON a.feature_id = json_extract(test.value, '$[0]')
                    AND a.point = json_extract(test.value, '$[1]') / 4294967296.0 * 100 AND a.user_id = ?3
                WHERE a.tenant_id = ?1 AND a.environment_id = ?2
                UNION ALL
                SELECT 2, feature_id, unlocked, NULL, NULL, NULL, NULL, NULL, NULL
                FROM unlocks WHERE tenant_id = ?1 AND environment_id = ?2 AND user_id = ?3
                UNION ALL
                SELECT 3, fingerprint, seen_hour, attributes, NULL, NULL, NULL, NULL, NULL
                FROM user_attributes WHERE environment_id = ?2 AND user_id = ?3 AND tenant_id = ?1
                """)
        statement.bind(plan.head.scope.tenant.id, at: 1)
        statement.bind(plan.head.scope.id, at: 2)
        statement.bind(user.rawValue, at: 3)
        // [[feature id, hash of the user's point], …]
        statement.bind(
            "[" + plan.tests.map { "[\($0.featureID),\($0.points.hash(for: user.rawValue))]" }.joined(separator: ",")
                + "]", at: 4)
        var isCurrent = false
        var state = UserState()
        try statement.forEachRow { row in
            switch row.int(0) {
            case 0:
                let revision = row.isNull(2) ? nil : Int(row.int(2))
                isCurrent = revision == plan.head.revision && row.int(3) == plan.head.generation
            case 1:
                state.assignments[row.int(1)] = RecordedAssignment(
                    point: row.double(2), variation: row.text(3), isOverride: row.int(4) != 0,
                    revision: Int(row.int(5)),
                    rule: row.isNull(6) ? nil : row.text(6), isPinned: row.int(7) != 0,
                    appPoint: row.isNull(8) ? nil : row.double(8))
            case 2:
                state.unlocks[row.int(1)] = row.int(2) != 0
            default:
                state.attributes = KeptAttributes(fingerprint: row.int(1), hour: row.int(2), json: row.text(3))
            }
        }
        return (isCurrent, state)
    }

    /// Hands `body` every recorded user of a feature, QA overrides aside, with their last
    /// attributes' canonical JSON (`nil`: none kept): what a change of rules is planned from.
    /// Stepped through SQLite's C API, since a plan may read millions of rows.
    func forEachUserWithAttributes(
        featureID: Int64, _ body: (UserID, RecordedAssignment, [UInt8]?) throws -> Void
    ) throws {
        let statement = try RawStatement(
            cachedIn: db,
            sql: """
                SELECT a.user_id, a.point, a.variation, a.rule, a.pinned, a.app_point, a.revision, u.attributes
                FROM assignments a LEFT JOIN user_attributes u ON u.environment_id = a.environment_id AND u.user_id = a.user_id
                WHERE a.feature_id = ?1 AND a.is_override = 0
                """)
        statement.bind(featureID, at: 1)
        try statement.forEachRow { row in
            let assignment = RecordedAssignment(
                point: row.double(1), variation: row.text(2), isOverride: false, revision: Int(row.int(6)),
                rule: row.isNull(3) ? nil : row.text(3), isPinned: row.int(4) != 0,
                appPoint: row.isNull(5) ? nil : row.double(5))
            try body(UserID(rawValue: row.text(0)), assignment, row.isNull(7) ? nil : row.bytes(7))
        }
    }

    /// Deletes everything recorded of `user` in an environment whose features (archived ones
    /// included) are `features`: their groups, whose users leave the history's counts now, and
    /// every event of theirs. Returns how many groups and events went.
    func forget(
        _ user: UserID, in scope: EnvironmentScope, features: [StoredFeature], now: Date
    ) throws -> (assignments: Int, events: Int) {
        let writer = writer(in: scope, revision: 0, now: now)
        var assignments = 0
        for stored in features {
            let point = UserPoints(salt: stored.salt).point(for: user.rawValue)
            guard
                let variation = try String.fetchOne(
                    db.cachedStatement(
                        sql: """
                            DELETE FROM assignments WHERE feature_id = ? AND point = ? AND user_id = ? RETURNING variation
                            """), arguments: [stored.id, point, user.rawValue])
            else { continue }
            try writer.addUsers(-1, to: variation, featureID: stored.id)
            assignments += 1
        }
        try db.execute(
            sql: "DELETE FROM assignment_events WHERE environment_id = ? AND user_id = ?",
            arguments: [scope.id, user.rawValue])
        return (assignments, db.changesCount)
    }

    /// The environment's events after `id`, oldest first, at most `limit`: what the figures of
    /// tests follow (`ExperimentLedger`).
    func events(in scope: EnvironmentScope, after id: Int64, limit: Int) throws -> [AssignmentEventRow] {
        let select = try RawStatement(
            cachedIn: db,
            sql: """
                SELECT id, feature_id, user_id, variation, revision, reason, rule, created_at FROM assignment_events
                WHERE environment_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3
                """)
        select.bind(scope.id, at: 1)
        select.bind(id, at: 2)
        select.bind(Int64(limit), at: 3)
        var rows: [AssignmentEventRow] = []
        try select.forEachRow { row in
            rows.append(
                AssignmentEventRow(
                    id: row.int(0), featureID: row.int(1), user: row.text(2), variation: row.text(3),
                    revision: Int(row.int(4)), reason: row.text(5), byRule: !row.isNull(6), createdAt: row.int(7)))
        }
        return rows
    }

    /// A writer of `scope`'s users' groups under `revision`.
    func writer(in scope: EnvironmentScope, revision: Int, now: Date) -> AssignmentWriter {
        AssignmentWriter(db: db, scope: scope, revision: revision, now: now)
    }
}

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

extension Database {
    /// Users' recorded groups and their history.
    var assignments: AssignmentTable { AssignmentTable(db: self) }
}

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
                INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at, pinned)
                VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, 0)
                """
        ).execute(arguments: [scope.tenant.id, scope.id, featureID, user, point, variation, revision, time])
        try appendEvent(
            featureID: featureID, user: user, previous: nil, variation: variation, point: point, reason: .override)
    }

    /// Records `assignment` as `user`'s first in a test, with a `first` event, unless the user
    /// is recorded already (another request or process came first): then nothing is written
    /// and the recorded group is returned (`isNew` false), so the winner of a race is what
    /// everyone answers.
    func recordFirst(
        _ assignment: RecordedAssignment, of user: UserID, featureID: Int64
    ) throws -> (assignment: RecordedAssignment, isNew: Bool) {
        // Apps' first fetches run this for every test of every new user: bound through
        // SQLite's C API, as bulk assignment's statements are.
        let insert = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision,
                    assigned_at, rule, pinned, app_point)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (feature_id, point, user_id) DO NOTHING
                """)
        insert.bind(scope.tenant.id, at: 1)
        insert.bind(scope.id, at: 2)
        insert.bind(featureID, at: 3)
        insert.bind(user.rawValue, at: 4)
        insert.bind(assignment.point, at: 5)
        insert.bind(assignment.variation, at: 6)
        insert.bind(Int64(assignment.revision), at: 7)
        insert.bind(time, at: 8)
        insert.bind(assignment.rule, at: 9)
        insert.bind(assignment.isPinned, at: 10)
        insert.bind(assignment.appPoint, at: 11)
        guard try insert.execute() == 1 else {
            return (try recorded(user, featureID: featureID, point: assignment.point)!, false)
        }
        try appendEvent(
            featureID: featureID, user: user.rawValue, previous: nil, variation: assignment.variation,
            point: assignment.point, reason: .first, revision: assignment.revision, rule: assignment.rule)
        return (assignment, true)
    }

    /// The recorded group of `user` in a feature, whose point for them is `point`.
    func recorded(_ user: UserID, featureID: Int64, point: Double) throws -> RecordedAssignment? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT point, variation, is_override, revision, rule, pinned, app_point FROM assignments
                    WHERE feature_id = ? AND point = ? AND user_id = ?
                    """), arguments: [featureID, point, user.rawValue]
        ).map { row in
            RecordedAssignment(
                point: row[0], variation: row[1], isOverride: row[2], revision: row[3], rule: row[4], isPinned: row[5],
                appPoint: row[6])
        }
    }

    /// Marks `assignment` as given to a FeatureFlags app, which keeps `appPoint` (`nil`: the
    /// user's own point) from now on.
    func pin(_ assignment: RecordedAssignment, of user: UserID, featureID: Int64, appPoint: Double?) throws {
        try db.cachedStatement(
            sql: "UPDATE assignments SET pinned = 1, app_point = ? WHERE feature_id = ? AND point = ? AND user_id = ?"
        ).execute(arguments: [appPoint, featureID, assignment.point, user.rawValue])
    }

    /// Moves a recorded user to what a rule (or, with none, their point) now decides, with an
    /// event when the variation changes; a change of rule alone is noted without one.
    func redecide(
        _ assignment: RecordedAssignment, of user: UserID, featureID: Int64, to decision: PinningPlan.Decision,
        reason: AssignmentReason
    ) throws {
        let update = try RawStatement(
            cachedIn: db,
            sql: """
                UPDATE assignments SET variation = ?1, rule = ?2, revision = ?3, assigned_at = ?4
                WHERE feature_id = ?5 AND point = ?6 AND user_id = ?7
                """)
        update.bind(decision.variation, at: 1)
        update.bind(decision.rule, at: 2)
        update.bind(Int64(revision), at: 3)
        update.bind(time, at: 4)
        update.bind(featureID, at: 5)
        update.bind(assignment.point, at: 6)
        update.bind(user.rawValue, at: 7)
        _ = try update.execute()
        guard decision.variation != assignment.variation else { return }
        try appendEvent(
            featureID: featureID, user: user.rawValue, previous: assignment.variation, variation: decision.variation,
            point: assignment.point, reason: reason, rule: decision.rule)
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
    /// pair. With `followsRules`, the users whose client follows rules (unpinned) are left to
    /// `TargetingReevaluation`, which decides them by rule and point at once.
    ///
    /// Only points whose owner changes are visited, through the point index: a bias change that
    /// moves 10 % of a million users reads those 10 %, not the million. The few apps that keep a
    /// rule's point other than their own (`app_point`) are visited through theirs.
    func reevaluate(
        featureID: Int64, from old: VariationRanges, to new: VariationRanges, reason: AssignmentReason,
        followsRules: Bool = false
    ) throws -> [RecordedMove] {
        let lastEvent = try Int64.fetchOne(db, sql: "SELECT max(id) FROM assignment_events") ?? 0
        var moves = MoveTally()
        for interval in old.changedIntervals(to: new) {
            for selection in Self.movingSelections(featureID: featureID, interval: interval, followsRules: followsRules)
            {
                let record = try db.cachedStatement(
                    sql: Self.insertingEvents(
                        """
                        SELECT tenant_id, environment_id, feature_id, user_id, variation, ?, point, ?, ?, ?, NULL
                        FROM assignments \(selection.sql)
                        """))
                record.setUncheckedArguments([interval.to, revision, reason.rawValue, time] + selection.arguments)
                try record.execute()
                moves.add(RecordedMove(from: interval.from, to: interval.to, users: db.changesCount))
                let update = try db.cachedStatement(
                    sql: """
                        UPDATE assignments SET variation = ?, rule = NULL, revision = ?, assigned_at = ? \(selection.sql)
                        """)
                update.setUncheckedArguments([interval.to, revision, time] + selection.arguments)
                try update.execute()
            }
        }
        // The deltas of the events just written, by the variations' bytes as the rows hold them
        // (a name respelled in NFD is the same to the app, not to the table).
        let pairs = try Row.fetchAll(
            db,
            sql: """
                SELECT previous_variation, variation, count(*) FROM assignment_events
                WHERE id > ? GROUP BY previous_variation, variation
                """, arguments: [lastEvent])
        for pair in pairs {
            try addUsers(pair[2], to: pair[1], featureID: featureID)
            if let previous: String = pair[0] { try addUsers(-(pair[2] as Int), to: previous, featureID: featureID) }
        }
        return moves.moves
    }

    /// The users of one feature whose point lies in a range (`lower ..< upper`) owned by another
    /// variation than theirs, among those in the group of their point: overrides aside, rules'
    /// users aside unless an app keeps their point (a rule no longer moves them), and, when the
    /// last argument is true, every user whose client follows rules. Arguments: feature id,
    /// lower, upper, the range's variation, that flag. With every other user in the group of
    /// their point, these are all in the range's previous owner.
    static let movingUsers = """
        WHERE feature_id = ? AND point >= ? AND point < ? AND variation <> ? AND is_override = 0
            AND app_point IS NULL AND (pinned = 1 OR (rule IS NULL AND NOT ?))
        """

    /// The same for the apps that keep a point other than their own (a rule's): by that point.
    static let movingAppPoints = """
        WHERE feature_id = ? AND app_point >= ? AND app_point < ? AND variation <> ? AND is_override = 0
            AND app_point IS NOT NULL
        """

    /// Both selections, each with its arguments for one interval.
    static func movingSelections(
        featureID: Int64, interval: (lower: Double, upper: Double, from: String, to: String), followsRules: Bool
    ) -> [(sql: String, arguments: StatementArguments)] {
        let target: StatementArguments = [featureID, interval.lower, interval.upper, interval.to]
        return [(movingUsers, target + [followsRules]), (movingAppPoints, target)]
    }

    /// The one statement that writes `assignment_events`, over rows from `source` (a `VALUES`
    /// list or a `SELECT`) in this column order: tenant, environment, feature, user, previous
    /// variation, variation, point, revision, reason, time, rule. A single change
    /// (`appendEvent`), a re-evaluation's moves and bulk first assignments all write their
    /// events through it.
    static func insertingEvents(_ source: String) -> String {
        """
        INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
            point, revision, reason, created_at, rule)
        \(source)
        """
    }

    /// Writes one event. Every first fetch of a new user runs it, so it is bound through
    /// SQLite's C API.
    func appendEvent(
        featureID: Int64, user: String, previous: String?, variation: String, point: Double, reason: AssignmentReason,
        revision: Int? = nil, rule: String? = nil
    ) throws {
        let insert = try RawStatement(
            cachedIn: db,
            sql: Self.insertingEvents("VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"))
        insert.bind(scope.tenant.id, at: 1)
        insert.bind(scope.id, at: 2)
        insert.bind(featureID, at: 3)
        insert.bind(user, at: 4)
        insert.bind(previous, at: 5)
        insert.bind(variation, at: 6)
        insert.bind(point, at: 7)
        insert.bind(Int64(revision ?? self.revision), at: 8)
        insert.bind(reason.rawValue, at: 9)
        insert.bind(time, at: 10)
        insert.bind(rule, at: 11)
        _ = try insert.execute()
        try addUsers(1, to: variation, featureID: featureID)
        if let previous { try addUsers(-1, to: previous, featureID: featureID) }
    }

    // MARK: Deltas

    /// Adds `users` to the net change of `variation`'s users in this writer's minute: what every
    /// write of events does beside them (migration 0006), so the history's counts and charts
    /// never replay the events. The one statement that writes `assignment_deltas`.
    func addUsers(_ users: Int, to variation: String, featureID: Int64) throws {
        guard users != 0 else { return }
        let upsert = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = users + excluded.users
                """)
        upsert.bind(scope.tenant.id, at: 1)
        upsert.bind(scope.id, at: 2)
        upsert.bind(featureID, at: 3)
        upsert.bind(time / 60_000, at: 4)
        upsert.bind(variation, at: 5)
        upsert.bind(Int64(users), at: 6)
        try upsert.execute()
    }
}

/// Records users' first assignments to one test, with a `first` event each: the hot path of
/// bulk assignment.
///
/// Users are staged in a temporary table with one prepared insert each, then copied into
/// `assignments` and `assignment_events` by one `INSERT … SELECT` per table, so SQLite does
/// the bulk of the work in its own loop, as the `sqlite3` shell's `.import` then `INSERT …
/// SELECT` would. Points are staged as the doubles `UserPoints` computes, bound as they are.
struct FirstAssignments {
    /// Users per batch when some may be recorded already: large enough to amortise the set
    /// statements, small enough for the batch to stay in cache.
    static let batchSize = 4096

    private let feature: StoredFeature
    private let points: UserPoints
    private let ranges: VariationRanges
    private let revision: Int
    /// Whether the test had recorded users when this began. Without any (the first import of a
    /// user base), the only users already recorded are those listed earlier in the same call.
    private let hadRecordedUsers: Bool
    private let clear: RawStatement
    private let stage: RawStatement
    private let known: RawStatement
    private let unstage: RawStatement
    private let insert: RawStatement
    private let event: RawStatement
    /// Adds the users recorded to the history's deltas.
    private let deltas: AssignmentWriter

    init(_ db: Database, scope: EnvironmentScope, feature: StoredFeature, revision: Int, now: Date) throws {
        self.feature = feature
        deltas = AssignmentWriter(db: db, scope: scope, revision: revision, now: now)
        self.points = UserPoints(salt: feature.salt)
        self.ranges = feature.feature.assignmentRanges
        self.revision = revision
        hadRecordedUsers = try db.assignments.hasRecordedUsers(featureID: feature.id)
        try db.execute(
            sql: """
                CREATE TEMP TABLE IF NOT EXISTS staged_points (user_id TEXT NOT NULL, point REAL NOT NULL, variation TEXT NOT NULL)
                """)
        clear = try RawStatement(db, sql: "DELETE FROM temp.staged_points")
        stage = try RawStatement(
            db, sql: "INSERT INTO temp.staged_points (user_id, point, variation) VALUES (?1, ?2, ?3)")
        known = try RawStatement(
            db,
            sql: """
                SELECT s.user_id, a.point, a.variation, a.revision, a.is_override
                FROM temp.staged_points s
                JOIN assignments a ON a.feature_id = ?1 AND a.point = s.point AND a.user_id = s.user_id
                """)
        unstage = try RawStatement(
            db,
            sql: """
                DELETE FROM temp.staged_points
                WHERE EXISTS (
                    SELECT 1 FROM assignments a
                    WHERE a.feature_id = ?1 AND a.point = staged_points.point AND a.user_id = staged_points.user_id)
                """)
        let columns = "?1, ?2, ?3, ?4, ?5, user_id, point, variation"
        insert = try RawStatement(
            db,
            sql: """
                INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation, pinned)
                SELECT \(columns), 0 FROM temp.staged_points
                """)
        event = try RawStatement(
            db,
            sql: AssignmentWriter.insertingEvents(
                """
                SELECT ?1, ?2, ?3, user_id, NULL, variation, point, ?4, 'first', ?5, NULL
                FROM temp.staged_points
                """))
        for statement in [insert, event] {
            statement.bind(scope.tenant.id, at: 1)
            statement.bind(scope.id, at: 2)
            statement.bind(feature.id, at: 3)
            statement.bind(Int64(revision), at: 4)
            statement.bind(now.unixMilliseconds, at: 5)
        }
        known.bind(feature.id, at: 1)
        unstage.bind(feature.id, at: 1)
    }

    /// Hands each user's assignment to `report`, in order: users new to the test are recorded,
    /// in the group of their point (`isNew`); the others keep their recorded group and nothing
    /// is written for them.
    func record(_ users: [UserID], report: (_ assignment: Assignment, _ isNew: Bool) throws -> Void) throws {
        guard hadRecordedUsers else {
            try recordAllNew(users, report: report)
            return
        }
        for start in stride(from: 0, to: users.count, by: Self.batchSize) {
            try recordBatch(users[start..<min(start + Self.batchSize, users.count)], report: report)
        }
    }

    /// A test without recorded users: every user is new at their first listing, so all are
    /// staged, then copied at once.
    private func recordAllNew(_ users: [UserID], report: (Assignment, Bool) throws -> Void) throws {
        try clear.execute()
        var listed = Set<UserID>(minimumCapacity: users.count)
        var added: [String: Int] = [:]
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing {
                try stage(assignment)
                added[assignment.variation, default: 0] += 1
            }
            // A second listing reads as recorded, in the group just computed: nothing can move
            // a user within this transaction.
            try report(assignment, isFirstListing)
        }
        try insert.execute()
        try event.execute()
        try addDeltas(added)
    }

    /// The `first` events just copied, in the history's deltas.
    private func addDeltas(_ added: [String: Int]) throws {
        for (variation, users) in added { try deltas.addUsers(users, to: variation, featureID: feature.id) }
    }

    /// Some users may be recorded already: the batch is staged, those recorded are read back and
    /// unstaged, the rest copied.
    private func recordBatch(_ users: ArraySlice<UserID>, report: (Assignment, Bool) throws -> Void) throws {
        try clear.execute()
        var listed = Set<UserID>()
        var computed: [(assignment: Assignment, isFirstListing: Bool)] = []
        computed.reserveCapacity(users.count)
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing { try stage(assignment) }
            computed.append((assignment, isFirstListing))
        }
        var recorded: [UserID: Assignment] = [:]
        try known.forEachRow { row in
            let user = UserID(rawValue: row.text(0))
            recorded[user] = Assignment(
                user: user, feature: feature.feature.name, variation: row.text(2), point: row.double(1),
                revision: Int(row.int(3)), isOverride: row.int(4) != 0)
        }
        if !recorded.isEmpty { try unstage.execute() }
        if listed.count > recorded.count {
            try insert.execute()
            try event.execute()
        }
        var added: [String: Int] = [:]
        for (assignment, isFirstListing) in computed {
            if let before = recorded[assignment.user] {
                try report(before, false)
            } else {
                if isFirstListing { added[assignment.variation, default: 0] += 1 }
                try report(assignment, isFirstListing)
            }
        }
        try addDeltas(added)
    }

    /// The user's group by their point.
    private func assignment(of user: UserID) -> Assignment {
        let point = points.point(for: user.rawValue)
        let assignment = Assignment(
            user: user, feature: feature.feature.name, variation: ranges.variation(at: point)!, point: point,
            revision: revision, isOverride: false)
        return assignment
    }

    private func stage(_ assignment: Assignment) throws {
        stage.bind(assignment.user.rawValue, at: 1)
        stage.bind(assignment.point, at: 2)
        stage.bind(assignment.variation, at: 3)
        try stage.execute()
    }
}
