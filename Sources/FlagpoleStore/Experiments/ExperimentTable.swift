import FlagpoleCore
import Foundation

/// The one home of every statement on `goals`, `events`, the `experiment_*` tables and
/// `test_controls`: what tests are judged on, the events apps send, the figures kept up to date
/// from them, and the control each test is read against (docs/RESULTS.md).
struct ExperimentTable {
    let db: Transaction

    // MARK: Goals

    func insertGoal(_ goal: Goal, in scope: EnvironmentScope, at time: Date) throws {
        try db.execute(
            """
            INSERT INTO goals (tenant_id, environment_id, name, kind, better, created_at) VALUES (?, ?, ?, ?, ?, ?)
            """,
            [scope.tenant.id, scope.id, goal.name, goal.kind.rawValue, goal.better.rawValue, time.unixMilliseconds])
    }

    /// The environment's goals by name, with their ids.
    func goals(in scope: EnvironmentScope) throws -> [StoredGoal] {
        // Byte order: `name` is BINARY in SQLite and COLLATE "C" in PostgreSQL.
        try db.rows(
            "SELECT id, name, kind, better FROM goals WHERE environment_id = ? ORDER BY name", [scope.id], cached: true
        ).compactMap { row in
            let kindName: String = row[2]
            let betterName: String = row[3]
            guard let kind = Goal.Kind(rawValue: kindName), let better = Goal.Direction(rawValue: betterName) else {
                return nil
            }
            let id: Int64 = row[0]
            let name: String = row[1]
            return StoredGoal(id: id, goal: Goal(name: name, kind: kind, better: better))
        }
    }

    // MARK: Controls

    /// The control the test's team named, if they did.
    func control(featureID: Int64) throws -> String? {
        try db.value(String.self, "SELECT variation FROM test_controls WHERE feature_id = ?", [featureID])
    }

    /// Names the test's control (`nil`: back to the default one).
    func setControl(_ variation: String?, featureID: Int64, by actor: String, at time: Date) throws {
        guard let variation else {
            try db.execute("DELETE FROM test_controls WHERE feature_id = ?", [featureID])
            return
        }
        try db.execute(
            """
            INSERT INTO test_controls (feature_id, variation, set_by, set_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (feature_id) DO UPDATE SET variation = excluded.variation, set_by = excluded.set_by,
                set_at = excluded.set_at
            """, [featureID, variation, actor, time.unixMilliseconds])
    }

    // MARK: Events

    /// Keeps an event unless its id was seen: whether it is new.
    func insertEvent(
        _ event: ReceivedEvent, goalID: Int64?, featureID: Int64?, in scope: EnvironmentScope
    ) throws
        -> Bool
    {
        let insert = try db.statement(
            """
            INSERT INTO events (environment_id, event_id, user_id, goal_id, feature_id, value, time, received_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """, cached: true)
        insert.bind(scope.id, at: 1)
        insert.bind(event.id, at: 2)
        insert.bind(event.user.rawValue, at: 3)
        insert.bind(goalID, at: 4)
        insert.bind(featureID, at: 5)
        insert.bind(event.value, at: 6)
        insert.bind(event.time, at: 7)
        insert.bind(event.receivedAt, at: 8)
        return try insert.execute() == 1
    }

    /// Deletes events received before `time` (Unix milliseconds), in every environment; returns
    /// how many went.
    func expireEvents(receivedBefore time: Int64) throws -> Int {
        try db.execute("DELETE FROM events WHERE received_at < ?", [time])
    }

    /// How many raw events are kept.
    func eventCount() throws -> Int {
        try db.value(Int.self, "SELECT count(*) FROM events") ?? 0
    }

    /// Deletes `user`'s events and part in the tests of an environment; returns how many rows went.
    /// The variations' sums keep what the user added: they name nobody.
    func forget(_ user: UserID, in scope: EnvironmentScope) throws -> Int {
        var deleted = try db.execute(
            "DELETE FROM events WHERE environment_id = ? AND user_id = ?", [scope.id, user.rawValue])
        deleted += try db.execute(
            "DELETE FROM experiment_users WHERE environment_id = ? AND user_id = ?", [scope.id, user.rawValue])
        return deleted
    }

    // MARK: Users' state

    func state(of user: String, in scope: EnvironmentScope) throws -> ExperimentUserState? {
        let select = try db.statement(
            "SELECT state FROM experiment_users WHERE environment_id = ? AND user_id = ?", cached: true)
        select.bind(scope.id, at: 1)
        select.bind(user, at: 2)
        var state: ExperimentUserState?
        try select.forEachRow { state = ExperimentUserState(encoded: $0.bytes(0)) }
        return state
    }

    func setState(_ state: ExperimentUserState, of user: String, in scope: EnvironmentScope) throws {
        let upsert = try db.statement(
            """
            INSERT INTO experiment_users (environment_id, user_id, state) VALUES (?, ?, ?)
            ON CONFLICT (environment_id, user_id) DO UPDATE SET state = excluded.state
            """, cached: true)
        upsert.bind(scope.id, at: 1)
        upsert.bind(user, at: 2)
        upsert.bind(state.encoded, at: 3)
        try upsert.execute()
    }

    // MARK: Epochs and progress

    func epochs(in scope: EnvironmentScope) throws -> [ExperimentEpoch] {
        try db.rows(
            """
            SELECT feature_id, epoch, revision, started_at, variations, shares, signature FROM experiment_epochs
            WHERE environment_id = ? ORDER BY feature_id, epoch
            """, [scope.id]
        ).map { row in
            ExperimentEpoch(
                featureID: row[0], number: row[1], revision: row[2], startedAt: row[3],
                variations: Self.decode(row[4]) ?? [], shares: Self.decode(row[5]) ?? [], signature: row[6])
        }
    }

    /// Whether the feature `featureID` was ever a test with an epoch: what has results.
    func hasEpochs(featureID: Int64) throws -> Bool {
        try db.row("SELECT 1 FROM experiment_epochs WHERE feature_id = ? LIMIT 1", [featureID]) != nil
    }

    func insertEpoch(_ epoch: ExperimentEpoch, in scope: EnvironmentScope) throws {
        try db.execute(
            """
            INSERT INTO experiment_epochs (environment_id, feature_id, epoch, revision, started_at, variations, shares,
                signature)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                scope.id, epoch.featureID, epoch.number, epoch.revision, epoch.startedAt, Self.encode(epoch.variations),
                Self.encode(epoch.shares), epoch.signature,
            ])
    }

    /// The last revision and assignment event the figures follow (0 and 0 at first).
    func progress(in scope: EnvironmentScope) throws -> (revision: Int, assignmentEventID: Int64) {
        guard
            let row = try db.row(
                "SELECT revision, assignment_event_id FROM experiment_progress WHERE environment_id = ?", [scope.id],
                cached: true)
        else { return (0, 0) }
        return (row[0], row[1])
    }

    func setProgress(revision: Int, assignmentEventID: Int64, in scope: EnvironmentScope) throws {
        try db.execute(
            """
            INSERT INTO experiment_progress (environment_id, revision, assignment_event_id) VALUES (?, ?, ?)
            ON CONFLICT (environment_id) DO UPDATE
            SET revision = excluded.revision, assignment_event_id = excluded.assignment_event_id
            """, [scope.id, revision, assignmentEventID])
    }

    // MARK: Figures

    /// Adds `deltas` to the arms' and totals' rows, and copies the rows they touched into
    /// today's figures.
    func apply(_ deltas: ExperimentDeltas, in scope: EnvironmentScope, day: Int64) throws {
        // The old values are named by the table's name: PostgreSQL finds a bare column of an upsert's
        // SET ambiguous (the row's, or `excluded`'s).
        for (key, delta) in deltas.arms {
            try db.execute(
                """
                INSERT INTO experiment_arms (environment_id, feature_id, epoch, variation, users, split_users,
                    exposed_users, excluded_users)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feature_id, epoch, variation) DO UPDATE SET users = experiment_arms.users + excluded.users,
                    split_users = experiment_arms.split_users + excluded.split_users,
                    exposed_users = experiment_arms.exposed_users + excluded.exposed_users,
                    excluded_users = experiment_arms.excluded_users + excluded.excluded_users
                """,
                [
                    scope.id, key.featureID, key.epoch, key.variation, delta.users, delta.splitUsers,
                    delta.exposedUsers, delta.excludedUsers,
                ], cached: true)
        }
        for (key, delta) in deltas.totals {
            try db.execute(
                """
                INSERT INTO experiment_totals (environment_id, feature_id, epoch, variation, goal_id, events, sum,
                    sum_squares, exposed_events, exposed_sum, exposed_sum_squares, split_events, split_sum,
                    split_sum_squares)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feature_id, epoch, goal_id, variation) DO UPDATE
                SET events = experiment_totals.events + excluded.events,
                    sum = experiment_totals.sum + excluded.sum,
                    sum_squares = experiment_totals.sum_squares + excluded.sum_squares,
                    exposed_events = experiment_totals.exposed_events + excluded.exposed_events,
                    exposed_sum = experiment_totals.exposed_sum + excluded.exposed_sum,
                    exposed_sum_squares = experiment_totals.exposed_sum_squares + excluded.exposed_sum_squares,
                    split_events = experiment_totals.split_events + excluded.split_events,
                    split_sum = experiment_totals.split_sum + excluded.split_sum,
                    split_sum_squares = experiment_totals.split_sum_squares + excluded.split_sum_squares
                """,
                [
                    scope.id, key.featureID, key.epoch, key.variation, key.goalID, delta.itt.events, delta.itt.sum,
                    delta.itt.sumOfSquares, delta.exposed.events, delta.exposed.sum, delta.exposed.sumOfSquares,
                    delta.split.events, delta.split.sum, delta.split.sumOfSquares,
                ], cached: true)
        }
        // Today's figures of every goal of every epoch touched: a few rows per batch. (The day is
        // cast: PostgreSQL can't tell a selected parameter's type.)
        for epoch in deltas.touchedEpochs {
            try db.execute(
                """
                INSERT INTO experiment_days (environment_id, feature_id, epoch, goal_id, variation, day, users,
                    sum, sum_squares, exposed_users, exposed_sum, exposed_sum_squares)
                SELECT a.environment_id, a.feature_id, a.epoch, t.goal_id, a.variation, CAST(? AS bigint), a.users,
                    t.sum, t.sum_squares, a.exposed_users, t.exposed_sum, t.exposed_sum_squares
                FROM experiment_arms a JOIN experiment_totals t
                    ON t.feature_id = a.feature_id AND t.epoch = a.epoch AND t.variation = a.variation
                WHERE a.feature_id = ? AND a.epoch = ?
                ON CONFLICT (feature_id, epoch, goal_id, variation, day) DO UPDATE
                SET environment_id = excluded.environment_id, users = excluded.users, sum = excluded.sum,
                    sum_squares = excluded.sum_squares, exposed_users = excluded.exposed_users,
                    exposed_sum = excluded.exposed_sum, exposed_sum_squares = excluded.exposed_sum_squares
                """,
                [day, epoch.featureID, epoch.epoch], cached: true)
        }
    }

    /// The arms of a test, every epoch.
    func arms(featureID: Int64) throws -> [ArmRecord] {
        try db.rows(
            """
            SELECT epoch, variation, users, split_users, exposed_users, excluded_users FROM experiment_arms
            WHERE feature_id = ? ORDER BY epoch, variation
            """, [featureID], cached: true
        ).map {
            ArmRecord(
                epoch: $0[0], variation: $0[1], users: $0[2], splitUsers: $0[3], exposedUsers: $0[4],
                excludedUsers: $0[5])
        }
    }

    /// The totals of a test, every epoch and goal.
    func totals(featureID: Int64) throws -> [TotalRecord] {
        try db.rows(
            """
            SELECT epoch, goal_id, variation, events, sum, sum_squares, exposed_events, exposed_sum,
                exposed_sum_squares, split_events, split_sum, split_sum_squares
            FROM experiment_totals WHERE feature_id = ? ORDER BY epoch, goal_id, variation
            """, [featureID], cached: true
        ).map {
            TotalRecord(
                epoch: $0[0], goalID: $0[1], variation: $0[2],
                itt: SumDelta(events: $0[3], sum: $0[4], sumOfSquares: $0[5]),
                exposed: SumDelta(events: $0[6], sum: $0[7], sumOfSquares: $0[8]),
                split: SumDelta(events: $0[9], sum: $0[10], sumOfSquares: $0[11]))
        }
    }

    /// A goal's figures in one epoch at the end of each day, oldest first.
    func days(featureID: Int64, epoch: Int64, goalID: Int64) throws -> [DayRecord] {
        try db.rows(
            """
            SELECT day, variation, users, sum, sum_squares, exposed_users, exposed_sum, exposed_sum_squares
            FROM experiment_days WHERE feature_id = ? AND epoch = ? AND goal_id = ? ORDER BY day, variation
            """, [featureID, epoch, goalID], cached: true
        ).map {
            DayRecord(
                day: $0[0], variation: $0[1], users: $0[2], sum: $0[3], sumOfSquares: $0[4], exposedUsers: $0[5],
                exposedSum: $0[6], exposedSumOfSquares: $0[7])
        }
    }

    private static func encode<T: Encodable>(_ value: T) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("[]".utf8), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ text: String) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }
}

extension Transaction {
    /// Goals, events and the figures of tests.
    var experiments: ExperimentTable { ExperimentTable(db: self) }
}
