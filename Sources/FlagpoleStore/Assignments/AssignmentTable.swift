import FlagpoleCore
import Foundation

/// The one home of every statement on `assignments`, `assignment_events` and
/// `assignment_deltas` (which every write of events keeps): users' recorded groups, every
/// change of them, and the per-minute net changes that counts and charts read.
///
/// Writes go through `AssignmentWriter` (moves, overrides, first assignments of a few users,
/// re-evaluation after a revision) and `FirstAssignments` (first assignments in bulk), each in
/// its own file; a single event row is written by `AssignmentWriter.appendEvent` alone.
///
/// Each statement is written once, for both backends (`SQLStatement`); the few whose dialects
/// need their own text are `DialectSQL`s, listed in docs/POSTGRES.md.
struct AssignmentTable {
    let db: Transaction

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
            rows = try db.rows(Self.countsAtTime, [stored.id, time.unixMilliseconds], cached: true)
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

    /// Each user's variation in their last event at or before a time, counted. Each dialect has
    /// its text (docs/POSTGRES.md): SQLite takes `variation` from the row of max(id), its rule for
    /// a bare column beside max(); PostgreSQL has no such rule, so its statement finds each
    /// user's last id, then that event. Arguments: the feature, the time.
    private static let countsAtTime = DialectSQL(
        sqlite: """
            SELECT variation, count(*) FROM (
                SELECT variation, max(id) FROM assignment_events
                WHERE feature_id = ? AND created_at <= ? GROUP BY user_id)
            GROUP BY variation
            """,
        postgres: """
            SELECT e.variation, count(*) FROM assignment_events e JOIN (
                SELECT max(id) AS id FROM assignment_events
                WHERE feature_id = ? AND created_at <= ? GROUP BY user_id) last ON last.id = e.id
            GROUP BY e.variation
            """)

    /// Assignment events of an environment, newest first; `featureID` is `query.feature`'s.
    func events(
        in scope: EnvironmentScope, matching query: AssignmentEventQuery, featureID: Int64?
    ) throws -> [AssignmentEvent] {
        // The index of the narrowest filter, named for SQLite: its planner, which has no
        // statistics, took the environment's for a feature's history and walked back through
        // every event of the other tests newer than the feature's last (a million, in the
        // bench). PostgreSQL's planner keeps statistics, and takes no such hint.
        let index = db.indexedBy(
            query.user != nil
                ? "assignment_events_by_user"
                : query.feature != nil ? "assignment_events_by_feature" : "assignment_events_by_environment")
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
        // Stepped a row at a time: a test of many months has many minutes.
        let deltas = try db.statement(
            "SELECT minute, variation, users FROM assignment_deltas WHERE feature_id = ? ORDER BY minute", cached: true)
        deltas.bind(stored.id, at: 1)
        try deltas.forEachRow { row in
            add(minute: row.int(0), variation: row.text(1), users: Int(row.int(2)))
        }
        takeSamples(before: nil)
        return snapshots
    }

    /// What is recorded of `user` in the tests and unlock flags of `plan`, and whether `plan` is
    /// still current (the same revision and generation), in one statement (so one snapshot, in
    /// a transaction or not), stepped a row at a time since every fetch of a user's document
    /// runs it. The plan's ids are valid while its generation is: only a restore changes them.
    func userSnapshot(of user: UserID, under plan: PinningPlan) throws -> (isCurrent: Bool, state: UserState) {
        let statement = try db.statement(Self.snapshot, cached: true)
        statement.bind(plan.head.scope.tenant.id, at: 1)
        statement.bind(plan.head.scope.id, at: 2)
        statement.bind(user.rawValue, at: 3)
        // [[feature id, hash of the user's point], …]: the point is scaled from its hash in the
        // statement, exactly as it was when recorded (a double sent as text might not read back).
        statement.bind(
            "[" + plan.tests.map { "[\($0.featureID),\($0.points.hash(for: user.rawValue))]" }.joined(separator: ",")
                + "]", at: 4)
        var isCurrent = false
        var state = UserState()
        try statement.forEachRow { row in
            switch row.int(0) {
            case 0:
                let revision = row.optionalInt(2).map(Int.init)
                isCurrent = revision == plan.head.revision && row.int(3) == plan.head.generation
            case 1:
                state.assignments[row.int(1)] = RecordedAssignment(
                    point: row.double(4), variation: row.text(6), isOverride: row.bool(8), revision: Int(row.int(2)),
                    rule: row.optionalText(7), isPinned: row.bool(9), appPoint: row.optionalDouble(5))
            case 2:
                state.unlocks[row.int(1)] = row.bool(8)
            default:
                state.attributes = KeptAttributes(fingerprint: row.int(2), hour: row.int(3), json: row.text(6))
            }
        }
        return (isCurrent, state)
    }

    /// `userSnapshot`'s statement: kind, feature id, two integers, two doubles, two texts, two
    /// booleans (a `UNION ALL` takes one type per column on PostgreSQL; the first row names
    /// them). Arguments: tenant, environment, user, the tests as JSON.
    ///
    /// Each dialect has its text (docs/POSTGRES.md): SQLite's reads the JSON with `json_each`
    /// and keeps its join order with `CROSS JOIN` (the planner alone may scan every assignment);
    /// PostgreSQL's with `json_array_elements`, and its `CROSS JOIN` takes no `ON`.
    private static let snapshot = DialectSQL(
        sqlite: """
            SELECT 0, NULL, (SELECT max(number) FROM revisions WHERE tenant_id = ?1 AND environment_id = ?2),
                (SELECT generation FROM store_generation), NULL, NULL, NULL, NULL, NULL, NULL
            UNION ALL
            -- The primary key (feature_id, point, user_id) probed once per test.
            SELECT 1, a.feature_id, a.revision, NULL, a.point, a.app_point, a.variation, a.rule, a.is_override, a.pinned
            FROM json_each(?4) test CROSS JOIN assignments a ON a.feature_id = json_extract(test.value, '$[0]')
                AND a.point = json_extract(test.value, '$[1]') / 4294967296.0 * 100 AND a.user_id = ?3
            WHERE a.tenant_id = ?1 AND a.environment_id = ?2
            UNION ALL
            SELECT 2, feature_id, NULL, NULL, NULL, NULL, NULL, NULL, unlocked, NULL
            FROM unlocks WHERE tenant_id = ?1 AND environment_id = ?2 AND user_id = ?3
            UNION ALL
            SELECT 3, NULL, fingerprint, seen_hour, NULL, NULL, attributes, NULL, NULL, NULL
            FROM user_attributes WHERE environment_id = ?2 AND user_id = ?3 AND tenant_id = ?1
            """,
        postgres: """
            SELECT 0, CAST(NULL AS bigint), (SELECT max(number) FROM revisions WHERE tenant_id = ?1 AND environment_id = ?2),
                (SELECT generation FROM store_generation), CAST(NULL AS double precision), CAST(NULL AS double precision),
                CAST(NULL AS text), CAST(NULL AS text), CAST(NULL AS boolean), CAST(NULL AS boolean)
            UNION ALL
            -- The primary key (feature_id, point, user_id) probed once per test.
            SELECT 1, a.feature_id, a.revision, NULL, a.point, a.app_point, a.variation, a.rule, a.is_override, a.pinned
            FROM json_array_elements(CAST(?4 AS json)) AS test (value)
            JOIN assignments a ON a.feature_id = CAST(test.value ->> 0 AS bigint)
                AND a.point = CAST(test.value ->> 1 AS double precision) / 4294967296.0 * 100 AND a.user_id = ?3
            WHERE a.tenant_id = ?1 AND a.environment_id = ?2
            UNION ALL
            SELECT 2, feature_id, NULL, NULL, NULL, NULL, NULL, NULL, unlocked, NULL
            FROM unlocks WHERE tenant_id = ?1 AND environment_id = ?2 AND user_id = ?3
            UNION ALL
            SELECT 3, NULL, fingerprint, seen_hour, NULL, NULL, attributes, NULL, NULL, NULL
            FROM user_attributes WHERE environment_id = ?2 AND user_id = ?3 AND tenant_id = ?1
            """)

    /// Hands `body` every recorded user of a feature, QA overrides aside, with their last
    /// attributes' canonical JSON (`nil`: none kept): what a change of rules is planned from,
    /// in the order of the primary key (a plan's examples are the first users of each move).
    /// Stepped a row at a time, since a plan may read millions of rows.
    func forEachUserWithAttributes(
        featureID: Int64, _ body: (UserID, RecordedAssignment, [UInt8]?) throws -> Void
    ) throws {
        let statement = try db.statement(
            """
            SELECT a.user_id, a.point, a.variation, a.rule, a.pinned, a.app_point, a.revision, u.attributes
            FROM assignments a LEFT JOIN user_attributes u ON u.environment_id = a.environment_id AND u.user_id = a.user_id
            WHERE a.feature_id = ? AND NOT a.is_override
            ORDER BY a.point, a.user_id
            """, cached: true)
        statement.bind(featureID, at: 1)
        try statement.forEachRow { row in
            let assignment = RecordedAssignment(
                point: row.double(1), variation: row.text(2), isOverride: false, revision: Int(row.int(6)),
                rule: row.optionalText(3), isPinned: row.bool(4), appPoint: row.optionalDouble(5))
            try body(UserID(rawValue: row.text(0)), assignment, row.optionalBytes(7))
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
        let select = try db.statement(
            """
            SELECT id, feature_id, user_id, variation, revision, reason, rule, created_at FROM assignment_events
            WHERE environment_id = ? AND id > ? ORDER BY id LIMIT ?
            """, cached: true)
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

extension Transaction {
    /// Users' recorded groups and their history.
    var assignments: AssignmentTable { AssignmentTable(db: self) }
}
