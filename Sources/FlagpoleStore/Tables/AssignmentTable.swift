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
///
/// The statements every fetch of a user's document or every user of a bulk assignment runs are
/// bound through SQLite's C API (`RawStatement`) on SQLite; on PostgreSQL the same SQL (or its
/// PostgreSQL spelling, where the dialects differ) goes through the connection.
struct AssignmentTable {
    let db: any SQLConnection

    /// The recorded assignment of `user` in a feature, found by the point their id gives.
    func assignment(of user: UserID, in feature: StoredFeature) throws -> Assignment? {
        try db.row(
            """
            SELECT point, variation, revision, is_override FROM assignments WHERE feature_id = ? AND point = ? AND user_id = ?
            """,
            [feature.id, UserPoints(salt: feature.salt).point(for: user.rawValue), user.rawValue], cached: true
        ).map { row in
            Assignment(
                user: user, feature: feature.feature.name, variation: row[1], point: row[0], revision: row[2],
                isOverride: row[3])
        }
    }

    /// Whether a feature has any recorded user.
    func hasRecordedUsers(featureID: Int64) throws -> Bool {
        try db.value(
            Bool.self, "SELECT EXISTS (SELECT 1 FROM assignments WHERE feature_id = ?)", [featureID]) ?? true
    }

    /// How many users of a feature have a recorded group: the sum of its history's deltas, a
    /// few rows a minute, rather than a count of millions of assignments.
    func recordedUserCount(featureID: Int64) throws -> Int {
        try db.value(
            Int.self, "SELECT sum(users) FROM assignment_deltas WHERE feature_id = ?", [featureID], cached: true) ?? 0
    }

    /// How many assignments are recorded, in every tenant.
    func count() throws -> Int {
        try db.value(Int.self, "SELECT count(*) FROM assignments") ?? 0
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
                let users =
                    try db.value(
                        Int.self, "SELECT count(*) FROM assignments \(selection.sql)", selection.arguments,
                        cached: true) ?? 0
                moves.add(RecordedMove(from: interval.from, to: interval.to, users: users))
            }
        }
        return moves.moves
    }

    /// How many of the users `pendingMoves` counts were placed by a rule: FeatureFlags apps that
    /// keep the point a rule gave them, which a change of ranges moves out of the rule's group.
    func pendingMovesPlacedByRules(
        featureID: Int64, from old: VariationRanges, to new: VariationRanges, followsRules: Bool = false
    ) throws -> Int {
        var users = 0
        for interval in old.changedIntervals(to: new) {
            for selection in AssignmentWriter.movingSelections(
                featureID: featureID, interval: interval, followsRules: followsRules)
            {
                users +=
                    try db.value(
                        Int.self, "SELECT count(*) FROM assignments \(selection.sql) AND rule IS NOT NULL",
                        selection.arguments, cached: true) ?? 0
            }
        }
        return users
    }

    /// Users per variation of `stored`, now (the sum of its history's deltas) or as they stood at
    /// `time` (each user's last event at or before it). Variations come in the feature's order,
    /// then any others users are recorded in (`Disabled` while a test is off), by name.
    func counts(of stored: StoredFeature, at time: Date?) throws -> [VariationCount] {
        let rows: [SQLRow]
        if let time {
            // Each user's variation in their last event: SQLite takes `variation` from the row of
            // max(id) (its rule for a bare column beside max()); PostgreSQL has no such rule, so
            // its statement finds each user's last id, then that event.
            let sql =
                switch db.dialect {
                case .sqlite:
                    """
                    SELECT variation, count(*) FROM (
                        SELECT variation, max(id) FROM assignment_events
                        WHERE feature_id = ? AND created_at <= ? GROUP BY user_id)
                    GROUP BY variation
                    """
                case .postgres:
                    """
                    SELECT e.variation, count(*) FROM assignment_events e JOIN (
                        SELECT max(id) AS id FROM assignment_events
                        WHERE feature_id = ? AND created_at <= ? GROUP BY user_id) last ON last.id = e.id
                    GROUP BY e.variation
                    """
                }
            rows = try db.rows(sql, [stored.id, time.unixMilliseconds], cached: true)
        } else {
            rows = try db.rows(
                """
                SELECT variation, sum(users) FROM assignment_deltas WHERE feature_id = ? GROUP BY variation HAVING sum(users) <> 0
                """, [stored.id], cached: true)
        }
        var users: [String: Int] = [:]
        for row in rows {
            let variation: String = row[0]
            let count: Int = row[1]
            users[variation, default: 0] += count
        }
        return stored.ordered(users)
    }

    /// Assignment events of an environment, newest first; `featureID` is `query.feature`'s.
    func events(
        in scope: EnvironmentScope, matching query: AssignmentEventQuery, featureID: Int64?
    ) throws -> [AssignmentEvent] {
        // The index of the narrowest filter, named on SQLite: its planner, which has no
        // statistics, took the environment's for a feature's history and walked back through
        // every event of the other tests newer than the feature's last (a million, in the
        // bench). PostgreSQL's planner keeps statistics, and takes no such hint.
        let index =
            switch db.dialect {
            case .sqlite:
                query.user != nil
                    ? " INDEXED BY assignment_events_by_user"
                    : query.feature != nil
                        ? " INDEXED BY assignment_events_by_feature" : " INDEXED BY assignment_events_by_environment"
            case .postgres: ""
            }
        var sql = """
            SELECT e.id, e.user_id, f.name, e.previous_variation, e.variation, e.point, e.revision, e.reason, e.created_at,
                e.rule
            FROM assignment_events e\(index) JOIN features f ON f.id = e.feature_id
            WHERE e.environment_id = ? AND e.tenant_id = ?
            """
        var arguments: SQLArguments = [scope.id, scope.tenant.id]
        func filter(_ condition: String, _ value: (any SQLBindable)?) {
            guard let value else { return }
            sql += " AND \(condition)"
            arguments.append(value)
        }
        filter("e.user_id = ?", query.user?.rawValue)
        filter("e.feature_id = ?", featureID)
        filter("e.created_at >= ?", query.since?.unixMilliseconds)
        filter("e.created_at < ?", query.until?.unixMilliseconds)
        filter("e.id < ?", query.before)
        sql += " ORDER BY e.id DESC LIMIT ?"
        arguments.append(query.limit)
        // One statement per combination of filters, prepared once per connection.
        return try db.rows(sql, arguments, cached: true).map { row in
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
        guard samples > 0 else { return [] }
        var snapshots: [AssignmentSnapshot] = []
        var start: Date?
        var step = 0.0
        var users: [String: Int] = [:]
        // The snapshots of the samples taken before the deltas of `minute` (of all that are
        // left, with `nil`): each sample counts the deltas up to its own minute.
        func takeSamples(before minute: Int64?) {
            guard let start else { return }
            while snapshots.count < samples {
                let time = samples > 1 ? start.addingTimeInterval(step * Double(snapshots.count)) : now
                if let minute, minute <= time.unixMilliseconds / 60_000 { return }
                snapshots.append(AssignmentSnapshot(time: time, counts: stored.ordered(users)))
            }
        }
        // One row of deltas, in the order of their minutes.
        func add(minute: Int64, variation: String, users delta: Int) {
            if start == nil {
                let first = Date(unixMilliseconds: minute * 60_000)
                start = first
                step = samples > 1 ? max(0, now.timeIntervalSince(first)) / Double(samples - 1) : 0
            }
            takeSamples(before: minute)
            // Deltas after the last sample count in none.
            guard snapshots.count < samples else { return }
            users[variation, default: 0] += delta
        }
        let sql = "SELECT minute, variation, users FROM assignment_deltas WHERE feature_id = ? ORDER BY minute"
        if let sqlite = db.sqlite {
            // Stepped through SQLite's C API, a row at a time: a test of many months has many
            // minutes.
            let deltas = try RawStatement(cachedIn: sqlite, sql: sql)
            deltas.bind(stored.id, at: 1)
            try deltas.forEachRow { row in
                add(minute: row.int(0), variation: row.text(1), users: Int(row.int(2)))
            }
        } else {
            for row in try db.rows(sql, [stored.id], cached: true) {
                add(minute: row[0], variation: row[1], users: row[2])
            }
        }
        takeSamples(before: nil)
        return snapshots
    }

    /// What is recorded of `user` in the tests and unlock flags of `plan`, and whether `plan` is
    /// still current (the same revision and generation), in one statement (so one snapshot, in
    /// a transaction or not), stepped through SQLite's C API since every fetch of a user's
    /// document runs it. The plan's ids are valid while its generation is: only a restore
    /// changes them.
    func userSnapshot(of user: UserID, under plan: PinningPlan) throws -> (isCurrent: Bool, state: UserState) {
        guard let sqlite = db.sqlite else { return try portableUserSnapshot(of: user, under: plan) }
        let statement = try RawStatement(
            cachedIn: sqlite,
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

    /// `userSnapshot` on PostgreSQL, in one statement too. A `UNION ALL` there takes one type
    /// per column, so each kind of row has columns of its own (the first row names their
    /// types); the user's points are computed here and sent as JSON numbers, which Swift writes
    /// and PostgreSQL reads back as the same doubles.
    private func portableUserSnapshot(
        of user: UserID, under plan: PinningPlan
    ) throws -> (
        isCurrent: Bool, state: UserState
    ) {
        let tenant = plan.head.scope.tenant.id
        let environment = plan.head.scope.id
        // [[feature id, the user's point], …]
        let tests =
            "[" + plan.tests.map { "[\($0.featureID),\($0.points.point(for: user.rawValue))]" }.joined(separator: ",")
            + "]"
        // Columns: kind, feature id, two integers, two doubles, two texts, two booleans.
        let rows = try db.rows(
            """
            SELECT 0, CAST(NULL AS bigint), (SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?),
                (SELECT generation FROM store_generation), CAST(NULL AS double precision), CAST(NULL AS double precision),
                CAST(NULL AS text), CAST(NULL AS text), CAST(NULL AS boolean), CAST(NULL AS boolean)
            UNION ALL
            -- The primary key (feature_id, point, user_id) probed once per test.
            SELECT 1, a.feature_id, a.revision, NULL, a.point, a.app_point, a.variation, a.rule, a.is_override, a.pinned
            FROM json_array_elements(CAST(? AS json)) AS test (value)
            JOIN assignments a ON a.feature_id = CAST(test.value ->> 0 AS bigint)
                AND a.point = CAST(test.value ->> 1 AS double precision) AND a.user_id = ?
            WHERE a.tenant_id = ? AND a.environment_id = ?
            UNION ALL
            SELECT 2, feature_id, NULL, NULL, NULL, NULL, NULL, NULL, unlocked, NULL
            FROM unlocks WHERE tenant_id = ? AND environment_id = ? AND user_id = ?
            UNION ALL
            SELECT 3, NULL, fingerprint, seen_hour, NULL, NULL, attributes, NULL, NULL, NULL
            FROM user_attributes WHERE environment_id = ? AND user_id = ? AND tenant_id = ?
            """,
            [
                tenant, environment, tests, user.rawValue, tenant, environment, tenant, environment, user.rawValue,
                environment, user.rawValue, tenant,
            ], cached: true)
        var isCurrent = false
        var state = UserState()
        for row in rows {
            switch row[0] as Int64 {
            case 0:
                let revision: Int? = row[2]
                let generation: Int64? = row[3]
                isCurrent = revision == plan.head.revision && generation == plan.head.generation
            case 1:
                let featureID: Int64 = row[1]
                state.assignments[featureID] = RecordedAssignment(
                    point: row[4], variation: row[6], isOverride: row[8], revision: row[2], rule: row[7],
                    isPinned: row[9], appPoint: row[5])
            case 2:
                let featureID: Int64 = row[1]
                state.unlocks[featureID] = row[8]
            default:
                state.attributes = KeptAttributes(fingerprint: row[2], hour: row[3], json: row[6])
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
        guard let sqlite = db.sqlite else {
            // In the order SQLite's walk of the primary key gives: a plan's examples are the
            // first users of each move.
            let rows = try db.rows(
                """
                SELECT a.user_id, a.point, a.variation, a.rule, a.pinned, a.app_point, a.revision, u.attributes
                FROM assignments a LEFT JOIN user_attributes u ON u.environment_id = a.environment_id AND u.user_id = a.user_id
                WHERE a.feature_id = ? AND NOT a.is_override
                ORDER BY a.point, a.user_id
                """, [featureID])
            for row in rows {
                let assignment = RecordedAssignment(
                    point: row[1], variation: row[2], isOverride: false, revision: row[6], rule: row[3],
                    isPinned: row[4], appPoint: row[5])
                try body(UserID(rawValue: row[0]), assignment, row[7])
            }
            return
        }
        let statement = try RawStatement(
            cachedIn: sqlite,
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
                let variation = try db.value(
                    String.self,
                    "DELETE FROM assignments WHERE feature_id = ? AND point = ? AND user_id = ? RETURNING variation",
                    [stored.id, point, user.rawValue], cached: true)
            else { continue }
            try writer.addUsers(-1, to: variation, featureID: stored.id)
            assignments += 1
        }
        let events = try db.execute(
            "DELETE FROM assignment_events WHERE environment_id = ? AND user_id = ?", [scope.id, user.rawValue])
        return (assignments, events)
    }

    /// The environment's events after `id`, oldest first, at most `limit`: what the figures of
    /// tests follow (`ExperimentLedger`).
    func events(in scope: EnvironmentScope, after id: Int64, limit: Int) throws -> [AssignmentEventRow] {
        let sql = """
            SELECT id, feature_id, user_id, variation, revision, reason, rule, created_at FROM assignment_events
            WHERE environment_id = ? AND id > ? ORDER BY id LIMIT ?
            """
        guard let sqlite = db.sqlite else {
            return try db.rows(sql, [scope.id, id, limit], cached: true).map { row in
                AssignmentEventRow(
                    id: row[0], featureID: row[1], user: row[2], variation: row[3], revision: row[4], reason: row[5],
                    byRule: !row.isNull(6), createdAt: row[7])
            }
        }
        let select = try RawStatement(cachedIn: sqlite, sql: sql)
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

extension SQLConnection {
    /// Users' recorded groups and their history.
    var assignments: AssignmentTable { AssignmentTable(db: self) }
}

/// Writes changes of recorded users' groups (moves under overrides, re-evaluations after a
/// revision) with their events, inside one transaction; first assignments are
/// `FirstAssignments`'. Re-evaluation can move millions of rows: it moves them a range of
/// points at a time, each in one statement. The statements every new user's first fetch runs
/// are bound through SQLite's C API on SQLite.
struct AssignmentWriter {
    let db: any SQLConnection
    let scope: EnvironmentScope
    /// The revision the groups are computed under.
    let revision: Int
    /// Unix milliseconds, as the per-user tables keep time.
    let time: Int64

    init(db: any SQLConnection, scope: EnvironmentScope, revision: Int, now: Date) {
        self.db = db
        self.scope = scope
        self.revision = revision
        self.time = now.unixMilliseconds
    }

    /// Moves a recorded user to `variation`, setting or clearing the override mark, with an event.
    func move(
        _ assignment: Assignment, featureID: Int64, to variation: String, isOverride: Bool, reason: AssignmentReason
    ) throws {
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
        if let postgres = db as? PostgresTransaction,
            postgres.takePrerecorded(
                PendingFirst.Key(featureID: featureID, point: assignment.point, user: user), assignment)
        {
            return (assignment, true)
        }
        let sql = """
            INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision,
                assigned_at, rule, pinned, app_point)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feature_id, point, user_id) DO NOTHING
            """
        let inserted: Int
        if db.dialect == .postgres {
            // One round trip, not three: the assignment, and only when it is new, its `first`
            // event and its minute's count (`appendEvent`'s statements, as writable CTEs).
            inserted =
                try db.value(
                    Int.self,
                    """
                    WITH inserted AS (\(sql) RETURNING 1),
                    event AS (\(Self.insertingEvents("SELECT ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ? FROM inserted"))),
                    delta AS (\(Self.addingUsers("SELECT ?, ?, ?, ?, ?, 1 FROM inserted")))
                    SELECT count(*) FROM inserted
                    """,
                    [
                        scope.tenant.id, scope.id, featureID, user.rawValue, assignment.point, assignment.variation,
                        assignment.revision, time, assignment.rule, assignment.isPinned, assignment.appPoint,
                        scope.tenant.id, scope.id, featureID, user.rawValue, assignment.variation, assignment.point,
                        assignment.revision, AssignmentReason.first.rawValue, time, assignment.rule,
                        scope.tenant.id, scope.id, featureID, time / 60_000, assignment.variation,
                    ], cached: true) ?? 0
            guard inserted == 1 else {
                return (try recorded(user, featureID: featureID, point: assignment.point)!, false)
            }
            return (assignment, true)
        } else if let sqlite = db.sqlite {
            // Apps' first fetches run this for every test of every new user: bound through
            // SQLite's C API, as bulk assignment's statements are.
            let insert = try RawStatement(cachedIn: sqlite, sql: sql)
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
            inserted = try insert.execute()
        } else {
            inserted = try db.execute(
                sql,
                [
                    scope.tenant.id, scope.id, featureID, user.rawValue, assignment.point, assignment.variation,
                    assignment.revision, time, assignment.rule, assignment.isPinned, assignment.appPoint,
                ], cached: true)
        }
        guard inserted == 1 else {
            return (try recorded(user, featureID: featureID, point: assignment.point)!, false)
        }
        try appendEvent(
            featureID: featureID, user: user.rawValue, previous: nil, variation: assignment.variation,
            point: assignment.point, reason: .first, revision: assignment.revision, rule: assignment.rule)
        return (assignment, true)
    }

    /// Records, in one statement, the first assignments that a group commit's writes are about
    /// to record one by one (`recordFirst`) under heads still current, and keeps those it
    /// inserted in the transaction, where each write's `recordFirst` takes its own without a
    /// round trip. A user recorded already (another instance came first) is left to that
    /// `recordFirst`, which reads back the winner. PostgreSQL only: every round trip of a group
    /// commit holds the write lock, and a statement per new user was most of its time.
    static func prerecord(_ firsts: [PendingFirst], in db: any SQLConnection) throws {
        guard let postgres = db as? PostgresTransaction, !firsts.isEmpty else { return }
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
                    AssignmentReason.first.rawValue, time, time / 60_000,
                ], cached: true)
            for ordinal in inserted {
                let first = candidates[ordinal].first
                postgres.prerecorded[first.key] = first.assignment
            }
        }
    }

    /// Throws when a row `prerecord` inserted was taken by no write: the writes must record
    /// exactly the first assignments they announced, or a row would be committed that no caller
    /// reports. The group then runs again without prerecording.
    static func requireEveryPrerecordedTaken(in db: any SQLConnection) throws {
        guard let postgres = db as? PostgresTransaction, !postgres.prerecorded.isEmpty else { return }
        throw StorageError.storage(
            reason: "\(postgres.prerecorded.count) first assignments recorded ahead were not taken by their writes")
    }

    /// Candidates per statement: its one JSON argument stays small.
    static let prerecordChunk = 1_000

    /// `prerecord`'s statement. Its candidates come as one JSON array (a statement of one text,
    /// prepared once, whatever their number); doubles written by Swift are read back by
    /// PostgreSQL as the same doubles. Arguments: the candidates, the time, the reason `first`,
    /// the time, the minute.
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
        let sql = """
            UPDATE assignments SET variation = ?, rule = ?, revision = ?, assigned_at = ?
            WHERE feature_id = ? AND point = ? AND user_id = ?
            """
        if let sqlite = db.sqlite {
            let update = try RawStatement(cachedIn: sqlite, sql: sql)
            update.bind(decision.variation, at: 1)
            update.bind(decision.rule, at: 2)
            update.bind(Int64(revision), at: 3)
            update.bind(time, at: 4)
            update.bind(featureID, at: 5)
            update.bind(assignment.point, at: 6)
            update.bind(user.rawValue, at: 7)
            _ = try update.execute()
        } else {
            try db.execute(
                sql,
                [decision.variation, decision.rule, revision, time, featureID, assignment.point, user.rawValue],
                cached: true)
        }
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
                // Events in the order of the index walked, which SQLite follows by itself and
                // PostgreSQL, which may read the table in its own order, is told.
                let order = db.dialect == .postgres ? " \(selection.order)" : ""
                let recording: SQLArguments = [interval.to, revision, reason.rawValue, time]
                let recorded = try db.execute(
                    Self.insertingEvents(
                        """
                        SELECT tenant_id, environment_id, feature_id, user_id, variation, ?, point, ?, ?, ?, NULL
                        FROM assignments \(selection.sql)\(order)
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

    /// Writes one event. Every first fetch of a new user runs it, so it is bound through
    /// SQLite's C API.
    func appendEvent(
        featureID: Int64, user: String, previous: String?, variation: String, point: Double, reason: AssignmentReason,
        revision: Int? = nil, rule: String? = nil
    ) throws {
        let sql = Self.insertingEvents("VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        if let sqlite = db.sqlite {
            let insert = try RawStatement(cachedIn: sqlite, sql: sql)
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
        } else {
            try db.execute(
                sql,
                [
                    scope.tenant.id, scope.id, featureID, user, previous, variation, point, revision ?? self.revision,
                    reason.rawValue, time, rule,
                ], cached: true)
        }
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
        let sql = Self.addingUsers("VALUES (?, ?, ?, ?, ?, ?)")
        guard let sqlite = db.sqlite else {
            try db.execute(sql, [scope.tenant.id, scope.id, featureID, time / 60_000, variation, users], cached: true)
            return
        }
        let upsert = try RawStatement(cachedIn: sqlite, sql: sql)
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
///
/// On PostgreSQL the same statements run through the connection, and users are staged many to
/// a statement (each statement is a round trip), in a temporary table of the session.
struct FirstAssignments {
    /// Users per batch when some may be recorded already: large enough to amortise the set
    /// statements, small enough for the batch to stay in cache.
    static let batchSize = 4096
    /// Users staged by one statement at most, on PostgreSQL: 4 × 1024 parameters, well under
    /// its 65 535.
    static let stagedPerStatement = 1024

    private let db: any SQLConnection
    private let scope: EnvironmentScope
    private let feature: StoredFeature
    private let points: UserPoints
    private let ranges: VariationRanges
    private let revision: Int
    /// Unix milliseconds, as the per-user tables keep time.
    private let time: Int64
    /// Whether the test had recorded users when this began. Without any (the first import of a
    /// user base), the only users already recorded are those listed earlier in the same call.
    private let hadRecordedUsers: Bool
    /// The staging table: in SQLite's `temp` schema, or PostgreSQL's `pg_temp` (where it lasts
    /// as long as the session, as SQLite's lasts as long as the connection).
    private let staged: String
    /// SQLite's statements, prepared once for the call and bound through its C API; `nil` on
    /// PostgreSQL.
    private let prepared: Prepared?
    /// Adds the users recorded to the history's deltas.
    private let deltas: AssignmentWriter

    /// The statements of a call on SQLite.
    private struct Prepared {
        let clear: RawStatement
        let stage: RawStatement
        let known: RawStatement
        let unstage: RawStatement
        let insert: RawStatement
        let event: RawStatement
    }

    /// Users staged for PostgreSQL and not sent yet, and how many were staged since the table
    /// was cleared (each user's ordinal, which orders the events as SQLite's rowids do).
    private struct Staging {
        var pending: [Assignment] = []
        var count: Int64 = 0
    }

    init(_ db: any SQLConnection, scope: EnvironmentScope, feature: StoredFeature, revision: Int, now: Date) throws {
        self.db = db
        self.scope = scope
        self.feature = feature
        deltas = AssignmentWriter(db: db, scope: scope, revision: revision, now: now)
        self.points = UserPoints(salt: feature.salt)
        self.ranges = feature.feature.assignmentRanges
        self.revision = revision
        self.time = now.unixMilliseconds
        hadRecordedUsers = try db.assignments.hasRecordedUsers(featureID: feature.id)
        guard let sqlite = db.sqlite else {
            self.staged = "pg_temp.staged_points"
            try db.execute(
                """
                CREATE TEMP TABLE IF NOT EXISTS staged_points (user_id text COLLATE "C" NOT NULL,
                    point double precision NOT NULL, variation text COLLATE "C" NOT NULL, ordinal bigint NOT NULL)
                """)
            self.prepared = nil
            return
        }
        let staged = "temp.staged_points"
        try db.execute(
            """
            CREATE TEMP TABLE IF NOT EXISTS staged_points (user_id TEXT NOT NULL, point REAL NOT NULL, variation TEXT NOT NULL)
            """)
        let prepared = Prepared(
            clear: try RawStatement(sqlite, sql: "DELETE FROM temp.staged_points"),
            stage: try RawStatement(
                sqlite, sql: "INSERT INTO temp.staged_points (user_id, point, variation) VALUES (?1, ?2, ?3)"),
            known: try RawStatement(sqlite, sql: Self.selectingKnown(staged)),
            unstage: try RawStatement(sqlite, sql: Self.unstagingKnown(staged)),
            insert: try RawStatement(sqlite, sql: Self.inserting(staged)),
            event: try RawStatement(sqlite, sql: Self.insertingFirstEvents(staged, order: "")))
        for statement in [prepared.insert, prepared.event] {
            statement.bind(scope.tenant.id, at: 1)
            statement.bind(scope.id, at: 2)
            statement.bind(feature.id, at: 3)
            statement.bind(Int64(revision), at: 4)
            statement.bind(now.unixMilliseconds, at: 5)
        }
        prepared.known.bind(feature.id, at: 1)
        prepared.unstage.bind(feature.id, at: 1)
        self.staged = staged
        self.prepared = prepared
    }

    // MARK: Statements
    // Each on the staging table `staged`, with `?`s in the order of their arguments.

    /// The staged users recorded already, with their recorded groups. Argument: the feature id.
    private static func selectingKnown(_ staged: String) -> String {
        """
        SELECT s.user_id, a.point, a.variation, a.revision, a.is_override
        FROM \(staged) s
        JOIN assignments a ON a.feature_id = ? AND a.point = s.point AND a.user_id = s.user_id
        """
    }

    /// Unstages the users `selectingKnown` reads. Argument: the feature id.
    private static func unstagingKnown(_ staged: String) -> String {
        """
        DELETE FROM \(staged)
        WHERE EXISTS (
            SELECT 1 FROM assignments a
            WHERE a.feature_id = ? AND a.point = staged_points.point AND a.user_id = staged_points.user_id)
        """
    }

    /// Records the staged users. Arguments: tenant, environment, feature, revision, time.
    private static func inserting(_ staged: String) -> String {
        """
        INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation, pinned)
        SELECT ?, ?, ?, ?, ?, user_id, point, variation, FALSE FROM \(staged)
        """
    }

    /// Their `first` events, the same arguments.
    private static func insertingFirstEvents(_ staged: String, order: String) -> String {
        AssignmentWriter.insertingEvents(
            """
            SELECT ?, ?, ?, user_id, NULL, variation, point, ?, 'first', ?, NULL
            FROM \(staged)\(order)
            """)
    }

    /// The arguments of `inserting` and `insertingFirstEvents`.
    private var recording: SQLArguments {
        [scope.tenant.id, scope.id, feature.id, revision, time]
    }

    // MARK: Recording

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
        var staging = try clear()
        var listed = Set<UserID>(minimumCapacity: users.count)
        var added: [String: Int] = [:]
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing {
                try stage(assignment, &staging)
                added[assignment.variation, default: 0] += 1
            }
            // A second listing reads as recorded, in the group just computed: nothing can move
            // a user within this transaction.
            try report(assignment, isFirstListing)
        }
        try send(&staging)
        try copy()
        try addDeltas(added)
    }

    /// The `first` events just copied, in the history's deltas.
    private func addDeltas(_ added: [String: Int]) throws {
        for (variation, users) in added { try deltas.addUsers(users, to: variation, featureID: feature.id) }
    }

    /// Some users may be recorded already: the batch is staged, those recorded are read back and
    /// unstaged, the rest copied.
    private func recordBatch(_ users: ArraySlice<UserID>, report: (Assignment, Bool) throws -> Void) throws {
        var staging = try clear()
        var listed = Set<UserID>()
        var computed: [(assignment: Assignment, isFirstListing: Bool)] = []
        computed.reserveCapacity(users.count)
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing { try stage(assignment, &staging) }
            computed.append((assignment, isFirstListing))
        }
        try send(&staging)
        let recorded = try known()
        if !recorded.isEmpty { try unstage() }
        if listed.count > recorded.count { try copy() }
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

    // MARK: Staging

    /// Empties the staging table.
    private func clear() throws -> Staging {
        if let prepared {
            try prepared.clear.execute()
        } else {
            // Emptied by TRUNCATE rather than DELETE: PostgreSQL never vacuums a temporary table,
            // so the dead rows of every batch would stay for the next ones to scan.
            try db.execute("TRUNCATE \(staged)")
        }
        return Staging()
    }

    /// Stages one user: on SQLite, now; on PostgreSQL, with the next users, by `send`.
    private func stage(_ assignment: Assignment, _ staging: inout Staging) throws {
        guard let prepared else {
            staging.pending.append(assignment)
            if staging.pending.count == Self.stagedPerStatement { try send(&staging) }
            return
        }
        prepared.stage.bind(assignment.user.rawValue, at: 1)
        prepared.stage.bind(assignment.point, at: 2)
        prepared.stage.bind(assignment.variation, at: 3)
        try prepared.stage.execute()
    }

    /// Stages the users `stage` kept for PostgreSQL, by statements of a few lengths (powers of
    /// two), so that their texts are few.
    private func send(_ staging: inout Staging) throws {
        var sent = 0
        while sent < staging.pending.count {
            var length = 1
            while length * 2 <= staging.pending.count - sent { length *= 2 }
            var arguments: SQLArguments = []
            arguments.values.reserveCapacity(length * 4)
            for assignment in staging.pending[sent..<sent + length] {
                arguments.append(assignment.user.rawValue)
                arguments.append(assignment.point)
                arguments.append(assignment.variation)
                arguments.append(staging.count)
                staging.count += 1
            }
            try db.execute(
                "INSERT INTO \(staged) (user_id, point, variation, ordinal) VALUES "
                    + repeatElement("(?, ?, ?, ?)", count: length).joined(separator: ", "), arguments)
            sent += length
        }
        staging.pending.removeAll(keepingCapacity: true)
    }

    /// The staged users recorded already, with their recorded groups.
    private func known() throws -> [UserID: Assignment] {
        var recorded: [UserID: Assignment] = [:]
        guard let prepared else {
            for row in try db.rows(Self.selectingKnown(staged), [feature.id]) {
                let user = UserID(rawValue: row[0])
                recorded[user] = Assignment(
                    user: user, feature: feature.feature.name, variation: row[2], point: row[1], revision: row[3],
                    isOverride: row[4])
            }
            return recorded
        }
        try prepared.known.forEachRow { row in
            let user = UserID(rawValue: row.text(0))
            recorded[user] = Assignment(
                user: user, feature: feature.feature.name, variation: row.text(2), point: row.double(1),
                revision: Int(row.int(3)), isOverride: row.int(4) != 0)
        }
        return recorded
    }

    /// Unstages the users recorded already.
    private func unstage() throws {
        if let prepared {
            try prepared.unstage.execute()
        } else {
            try db.execute(Self.unstagingKnown(staged), [feature.id])
        }
    }

    /// Copies the staged users into `assignments`, and their `first` events, in the order they
    /// were staged.
    private func copy() throws {
        if let prepared {
            try prepared.insert.execute()
            try prepared.event.execute()
        } else {
            try db.execute(Self.inserting(staged), recording)
            // PostgreSQL may read a table in any order: the ordinals give the staging order.
            try db.execute(Self.insertingFirstEvents(staged, order: " ORDER BY ordinal"), recording)
        }
    }
}

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

/// One row of `prerecord`'s JSON argument.
private struct PrerecordCandidate: Encodable {
    let ordinal: Int
    let first: PendingFirst

    enum CodingKeys: String, CodingKey {
        case ordinal, point, variation, revision, rule, pinned
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case featureID = "feature_id"
        case userID = "user_id"
        case appPoint = "app_point"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let assignment = first.assignment
        try container.encode(ordinal, forKey: .ordinal)
        try container.encode(first.head.scope.tenant.id, forKey: .tenantID)
        try container.encode(first.head.scope.id, forKey: .environmentID)
        try container.encode(first.featureID, forKey: .featureID)
        try container.encode(first.user.rawValue, forKey: .userID)
        try container.encode(assignment.point, forKey: .point)
        try container.encode(assignment.variation, forKey: .variation)
        try container.encode(assignment.revision, forKey: .revision)
        try container.encodeIfPresent(assignment.rule, forKey: .rule)
        try container.encode(assignment.isPinned, forKey: .pinned)
        try container.encodeIfPresent(assignment.appPoint, forKey: .appPoint)
    }
}
