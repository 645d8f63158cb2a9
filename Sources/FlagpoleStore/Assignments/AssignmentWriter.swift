import FlagpoleCore
import Foundation

/// Writes changes of recorded users' groups (moves under overrides, re-evaluations after a
/// revision) with their events, inside one transaction; first assignments are
/// `FirstAssignments`'. Re-evaluation can move millions of rows: it moves them a range of
/// points at a time, each in one statement. The statements every new user's first fetch runs
/// are bound through SQLite's C API on SQLite.
struct AssignmentWriter {
    let db: Transaction
    let scope: EnvironmentScope
    /// The revision the groups are computed under.
    let revision: Int
    /// Unix milliseconds, as the per-user tables keep time.
    let time: Int64

    init(db: Transaction, scope: EnvironmentScope, revision: Int, now: Date) {
        self.db = db
        self.scope = scope
        self.revision = revision
        self.time = now.unixMilliseconds
    }

    /// Moves a recorded user to `variation`, setting or clearing the override mark, with an event.
    func move(
        _ assignment: Assignment, featureID: Int64, to variation: String, isOverride: Bool, reason: AssignmentReason
    ) throws {
        db.noteUserChange(assignment.user, in: scope)
        try db.execute(
            """
            UPDATE assignments SET variation = ?, is_override = ?, revision = ?, assigned_at = ?
            WHERE feature_id = ? AND point = ? AND user_id = ?
            """,
            [variation, isOverride, revision, time, featureID, assignment.point, assignment.user.rawValue],
            cached: true)
        try appendEvent(
            featureID: featureID, user: assignment.user.rawValue, previous: assignment.variation, variation: variation,
            point: assignment.point, reason: reason)
    }

    /// Records a user never assigned before directly under an override.
    func recordOverride(user: String, featureID: Int64, point: Double, variation: String) throws {
        db.noteUserChange(UserID(rawValue: user), in: scope)
        try db.execute(
            """
            INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at, pinned)
            VALUES (?, ?, ?, ?, ?, ?, TRUE, ?, ?, FALSE)
            """, [scope.tenant.id, scope.id, featureID, user, point, variation, revision, time], cached: true)
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
        db.noteUserChange(user, in: scope)
        let key = PendingFirst.Key(featureID: featureID, point: assignment.point, user: user)
        if db.memo[PrerecordedFirsts.self]?.take(key, assignment) == true {
            return (assignment, true)
        }
        // The assignment, and only when it is new its `first` event and its minute's count: the
        // statements `appendEvent` runs, chained (one round trip on PostgreSQL).
        let isNew = try db.run(
            ChainedInsert(
                sql: """
                    INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision,
                        assigned_at, rule, pinned, app_point)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feature_id, point, user_id) DO NOTHING
                    """,
                arguments: [
                    scope.tenant.id, scope.id, featureID, user.rawValue, assignment.point, assignment.variation,
                    assignment.revision, time, assignment.rule, assignment.isPinned, assignment.appPoint,
                ],
                followers: [
                    ChainedInsert.Follower(
                        statement: Self.insertingEvents,
                        values: [
                            scope.tenant.id, scope.id, featureID, user.rawValue, nil, assignment.variation,
                            assignment.point, assignment.revision, AssignmentReason.first.rawValue, time,
                            assignment.rule,
                        ]),
                    ChainedInsert.Follower(
                        statement: Self.addingUsers,
                        values: [scope.tenant.id, scope.id, featureID, time / 60_000, assignment.variation, 1]),
                ]))
        guard isNew else {
            return (try recorded(user, featureID: featureID, point: assignment.point)!, false)
        }
        return (assignment, true)
    }

    /// Records, in one statement, the first assignments that a group commit's writes are about
    /// to record one by one (`recordFirst`) under heads still current, and keeps those it
    /// inserted in the transaction, where each write's `recordFirst` takes its own without a
    /// round trip. A user recorded already (another instance came first) is left to that
    /// `recordFirst`, which reads back the winner. PostgreSQL only: every round trip of a group
    /// commit holds the write lock, and a statement per new user was most of its time.
    static func prerecord(_ firsts: [PendingFirst], in db: Transaction) throws {
        guard !firsts.isEmpty else { return }
        let prerecorded = db.memo[PrerecordedFirsts.self] ?? PrerecordedFirsts()
        db.memo[PrerecordedFirsts.self] = prerecorded
        var seen = Set<PendingFirst.Key>()
        var candidates: [PrerecordCandidate] = []
        for first in firsts {
            guard try db.environments.isCurrent(first.head), seen.insert(first.key).inserted else { continue }
            candidates.append(PrerecordCandidate(ordinal: candidates.count, first: first))
        }
        let time = Date().unixMilliseconds
        for start in stride(from: 0, to: candidates.count, by: prerecordChunk) {
            let chunk = candidates[start..<min(start + prerecordChunk, candidates.count)]
            let inserted = try db.values(
                Int.self, prerecording,
                [
                    String(decoding: try JSONEncoder().encode(Array(chunk)), as: UTF8.self), time,
                    AssignmentReason.first.rawValue, time, time / 60_000, time,
                ], cached: true)
            for ordinal in inserted {
                let first = candidates[ordinal].first
                prerecorded.assignments[first.key] = first.assignment
            }
            noteStepsTaken(by: chunk, in: db)
        }
    }

    /// Notes the steps `prerecording` took for `chunk`, as its statement chose them: one per
    /// environment, naming every candidate user, or any user past `EnvironmentChange.userLimit`.
    private static func noteStepsTaken(by chunk: ArraySlice<PrerecordCandidate>, in db: Transaction) {
        var steps: [Int64: EnvironmentChange] = [:]
        for candidate in chunk {
            let scope = candidate.first.head.scope
            steps[scope.id, default: EnvironmentChange(scope: scope)].add(candidate.first.user)
        }
        for step in steps.values { db.noteStepTaken(step) }
    }

    /// Throws when a row `prerecord` inserted was taken by no write: the writes must record
    /// exactly the first assignments they announced, or a row would be committed that no caller
    /// reports. The group then runs again without prerecording.
    static func requireEveryPrerecordedTaken(in db: Transaction) throws {
        guard let left = db.memo[PrerecordedFirsts.self]?.assignments, !left.isEmpty else { return }
        throw StorageError.storage(
            reason: "\(left.count) first assignments recorded ahead were not taken by their writes")
    }

    /// Candidates per statement: its one JSON argument stays small.
    static let prerecordChunk = 1_000

    /// `prerecord`'s statement. Its candidates come as one JSON array (a statement of one text,
    /// prepared once, whatever their number); doubles written by Swift are read back by
    /// PostgreSQL as the same doubles. It also takes the step of each environment's change
    /// sequence that names the candidates, which the writes would otherwise take in one more
    /// round trip as they finish (`noteStepsTaken`). Arguments: the candidates, the time, the
    /// reason `first`, the time, the minute, the time.
    private static let prerecording = """
        WITH candidates AS (
            SELECT * FROM json_to_recordset(CAST(? AS json)) AS c (ordinal bigint, tenant_id bigint,
                environment_id bigint, feature_id bigint, user_id text COLLATE "C", point double precision,
                variation text COLLATE "C", revision bigint, rule text, pinned boolean, app_point double precision)),
        inserted AS (
            INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision,
                assigned_at, rule, pinned, app_point)
            SELECT tenant_id, environment_id, feature_id, user_id, point, variation, revision, ?, rule, pinned, app_point
            FROM candidates
            ON CONFLICT (feature_id, point, user_id) DO NOTHING
            RETURNING feature_id, point, user_id),
        new AS (
            SELECT c.* FROM inserted i
            JOIN candidates c ON c.feature_id = i.feature_id AND c.point = i.point AND c.user_id = i.user_id),
        event AS (\(insertingEvents("""
            SELECT tenant_id, environment_id, feature_id, user_id, NULL, variation, point, revision, ?, ?, rule
            FROM new ORDER BY ordinal
            """))),
        delta AS (\(addingUsers("""
            SELECT tenant_id, environment_id, feature_id, ?, variation, count(*) FROM new
            GROUP BY tenant_id, environment_id, feature_id, variation
            """))),
        step AS (\(EnvironmentTable.steppingChangeSequences("""
            SELECT environment_id, CASE WHEN count(DISTINCT user_id) > \(EnvironmentChange.userLimit) THEN NULL
                ELSE CAST(json_agg(DISTINCT user_id ORDER BY user_id) AS text) END AS users,
                FALSE AS delivery, CAST(? AS bigint) AS changed_at
            FROM candidates GROUP BY environment_id
            """)))
        SELECT ordinal FROM new
        """

    /// The recorded group of `user` in a feature, whose point for them is `point`.
    func recorded(_ user: UserID, featureID: Int64, point: Double) throws -> RecordedAssignment? {
        try db.row(
            """
            SELECT point, variation, is_override, revision, rule, pinned, app_point FROM assignments
            WHERE feature_id = ? AND point = ? AND user_id = ?
            """, [featureID, point, user.rawValue], cached: true
        ).map { row in
            RecordedAssignment(
                point: row[0], variation: row[1], isOverride: row[2], revision: row[3], rule: row[4], isPinned: row[5],
                appPoint: row[6])
        }
    }

    /// Marks `assignment` as given to a FeatureFlags app, which keeps `appPoint` (`nil`: the
    /// user's own point) from now on.
    func pin(_ assignment: RecordedAssignment, of user: UserID, featureID: Int64, appPoint: Double?) throws {
        db.noteUserChange(user, in: scope)
        try db.execute(
            "UPDATE assignments SET pinned = TRUE, app_point = ? WHERE feature_id = ? AND point = ? AND user_id = ?",
            [appPoint, featureID, assignment.point, user.rawValue], cached: true)
    }

    /// Moves a recorded user to what a rule (or, with none, their point) now decides, with an
    /// event when the variation changes; a change of rule alone is noted without one.
    func redecide(
        _ assignment: RecordedAssignment, of user: UserID, featureID: Int64, to decision: PinningPlan.Decision,
        reason: AssignmentReason
    ) throws {
        db.noteUserChange(user, in: scope)
        let update = try db.statement(
            """
            UPDATE assignments SET variation = ?, rule = ?, revision = ?, assigned_at = ?
            WHERE feature_id = ? AND point = ? AND user_id = ?
            """, cached: true)
        update.bind(decision.variation, at: 1)
        update.bind(decision.rule, at: 2)
        update.bind(Int64(revision), at: 3)
        update.bind(time, at: 4)
        update.bind(featureID, at: 5)
        update.bind(assignment.point, at: 6)
        update.bind(user.rawValue, at: 7)
        try update.execute()
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
        // By the primary key, as SQLite walks it: the order of the events.
        let overridden = try db.rows(
            """
            SELECT user_id, point, variation, revision FROM assignments WHERE feature_id = ? AND is_override
            ORDER BY point, user_id
            """, [featureID], cached: true)
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
        // (Writes are serialized on both backends, so every event after this one is this call's.)
        let lastEvent = try db.value(Int64.self, "SELECT max(id) FROM assignment_events") ?? 0
        var moves = MoveTally()
        for interval in old.changedIntervals(to: new) {
            for selection in Self.movingSelections(featureID: featureID, interval: interval, followsRules: followsRules)
            {
                // Events in the order of the index walked: SQLite walks it in that order anyway
                // (no sort), PostgreSQL may read the table in its own.
                let recording: SQLArguments = [interval.to, revision, reason.rawValue, time]
                let recorded = try db.execute(
                    Self.insertingEvents(
                        """
                        SELECT tenant_id, environment_id, feature_id, user_id, variation, ?, point, ?, ?, ?, NULL
                        FROM assignments \(selection.sql) \(selection.order)
                        """), recording + selection.arguments, cached: true)
                moves.add(RecordedMove(from: interval.from, to: interval.to, users: recorded))
                let moving: SQLArguments = [interval.to, revision, time]
                try db.execute(
                    "UPDATE assignments SET variation = ?, rule = NULL, revision = ?, assigned_at = ? \(selection.sql)",
                    moving + selection.arguments, cached: true)
            }
        }
        // The deltas of the events just written, by the variations' bytes as the rows hold them
        // (a name respelled in NFD is the same to the app, not to the table).
        let pairs = try db.rows(
            """
            SELECT previous_variation, variation, count(*) FROM assignment_events
            WHERE id > ? GROUP BY previous_variation, variation
            """, [lastEvent])
        for pair in pairs {
            let users: Int = pair[2]
            try addUsers(users, to: pair[1], featureID: featureID)
            if let previous: String = pair[0] { try addUsers(-users, to: previous, featureID: featureID) }
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
        WHERE feature_id = ? AND point >= ? AND point < ? AND variation <> ? AND NOT is_override
            AND app_point IS NULL AND (pinned OR (rule IS NULL AND NOT ?))
        """

    /// The same for the apps that keep a point other than their own (a rule's): by that point.
    static let movingAppPoints = """
        WHERE feature_id = ? AND app_point >= ? AND app_point < ? AND variation <> ? AND NOT is_override
            AND app_point IS NOT NULL
        """

    /// Both selections, each with its arguments for one interval and the order of the index
    /// it walks (the primary key, or `assignments_at_app_points`, which ends with the key).
    static func movingSelections(
        featureID: Int64, interval: (lower: Double, upper: Double, from: String, to: String), followsRules: Bool
    ) -> [(sql: String, order: String, arguments: SQLArguments)] {
        let target: SQLArguments = [featureID, interval.lower, interval.upper, interval.to]
        return [
            (movingUsers, "ORDER BY point, user_id", target + [followsRules]),
            (movingAppPoints, "ORDER BY app_point, point, user_id", target),
        ]
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

    /// Writes one event, with its minute's counts.
    func appendEvent(
        featureID: Int64, user: String, previous: String?, variation: String, point: Double, reason: AssignmentReason,
        revision: Int? = nil, rule: String? = nil
    ) throws {
        let insert = try db.statement(Self.insertingEvents("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"), cached: true)
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
        try insert.execute()
        try addUsers(1, to: variation, featureID: featureID)
        if let previous { try addUsers(-1, to: previous, featureID: featureID) }
    }

    // MARK: Deltas

    /// The one statement that writes `assignment_deltas`, adding the users of `source`'s rows
    /// (tenant, environment, feature, minute, variation, users) to their minute's.
    static func addingUsers(_ source: String) -> String {
        """
        INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
        \(source)
        ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = assignment_deltas.users + excluded.users
        """
    }

    /// Adds `users` to the net change of `variation`'s users in this writer's minute: what every
    /// write of events does beside them (migration 0006), so the history's counts and charts
    /// never replay the events.
    func addUsers(_ users: Int, to variation: String, featureID: Int64) throws {
        guard users != 0 else { return }
        let upsert = try db.statement(Self.addingUsers("VALUES (?, ?, ?, ?, ?, ?)"), cached: true)
        upsert.bind(scope.tenant.id, at: 1)
        upsert.bind(scope.id, at: 2)
        upsert.bind(featureID, at: 3)
        upsert.bind(time / 60_000, at: 4)
        upsert.bind(variation, at: 5)
        upsert.bind(Int64(users), at: 6)
        try upsert.execute()
    }
}
