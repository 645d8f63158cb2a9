import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on `goals`, `events` and the `experiment_*` tables: what tests
/// are judged on, the events apps send, and the figures kept up to date from them
/// (docs/RESULTS.md).
struct ExperimentTable {
    let db: Database

    // MARK: Goals

    func insertGoal(_ goal: Goal, in scope: EnvironmentScope, at time: Date) throws {
        try db.execute(
            sql: """
                INSERT INTO goals (tenant_id, environment_id, name, kind, better, created_at) VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                scope.tenant.id, scope.id, goal.name, goal.kind.rawValue, goal.better.rawValue, time.unixMilliseconds,
            ])
    }

    /// The environment's goals by name, with their ids.
    func goals(in scope: EnvironmentScope) throws -> [StoredGoal] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT id, name, kind, better FROM goals WHERE environment_id = ? ORDER BY name COLLATE BINARY"),
            arguments: [scope.id]
        ).compactMap { row in
            guard let kind = Goal.Kind(rawValue: row[2]), let better = Goal.Direction(rawValue: row[3]) else {
                return nil
            }
            return StoredGoal(id: row[0], goal: Goal(name: row[1], kind: kind, better: better))
        }
    }

    // MARK: Events

    /// Keeps an event unless its id was seen: whether it is new.
    func insertEvent(
        _ event: ReceivedEvent, goalID: Int64?, featureID: Int64?, in scope: EnvironmentScope
    ) throws
        -> Bool
    {
        let insert = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO events (environment_id, event_id, user_id, goal_id, feature_id, value, time, received_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING
                """)
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
        try db.execute(sql: "DELETE FROM events WHERE received_at < ?", arguments: [time])
        return db.changesCount
    }

    /// How many raw events are kept.
    func eventCount() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0
    }

    /// Deletes `user`'s events and part in the tests of an environment; returns how many rows went.
    /// The variations' sums keep what the user added: they name nobody.
    func forget(_ user: UserID, in scope: EnvironmentScope) throws -> Int {
        try db.execute(
            sql: "DELETE FROM events WHERE environment_id = ? AND user_id = ?", arguments: [scope.id, user.rawValue])
        var deleted = db.changesCount
        try db.execute(
            sql: "DELETE FROM experiment_users WHERE environment_id = ? AND user_id = ?",
            arguments: [scope.id, user.rawValue])
        deleted += db.changesCount
        return deleted
    }

    // MARK: Users' state

    func state(of user: String, in scope: EnvironmentScope) throws -> ExperimentUserState? {
        let select = try RawStatement(
            cachedIn: db, sql: "SELECT state FROM experiment_users WHERE environment_id = ?1 AND user_id = ?2")
        select.bind(scope.id, at: 1)
        select.bind(user, at: 2)
        var state: ExperimentUserState?
        try select.forEachRow { state = ExperimentUserState(encoded: $0.bytes(0)) }
        return state
    }

    func setState(_ state: ExperimentUserState, of user: String, in scope: EnvironmentScope) throws {
        let upsert = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO experiment_users (environment_id, user_id, state) VALUES (?1, ?2, ?3)
                ON CONFLICT (environment_id, user_id) DO UPDATE SET state = excluded.state
                """)
        upsert.bind(scope.id, at: 1)
        upsert.bind(user, at: 2)
        upsert.bind(Data(state.encoded).databaseValue, at: 3)
        _ = try upsert.execute()
    }

    // MARK: Epochs and progress

    func epochs(in scope: EnvironmentScope) throws -> [ExperimentEpoch] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT feature_id, epoch, revision, started_at, variations, shares, signature FROM experiment_epochs
                WHERE environment_id = ? ORDER BY feature_id, epoch
                """, arguments: [scope.id]
        ).map { row in
            ExperimentEpoch(
                featureID: row[0], number: row[1], revision: row[2], startedAt: row[3],
                variations: Self.decode(row[4]) ?? [], shares: Self.decode(row[5]) ?? [], signature: row[6])
        }
    }

    func insertEpoch(_ epoch: ExperimentEpoch, in scope: EnvironmentScope) throws {
        try db.execute(
            sql: """
                INSERT INTO experiment_epochs (environment_id, feature_id, epoch, revision, started_at, variations, shares,
                    signature)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                scope.id, epoch.featureID, epoch.number, epoch.revision, epoch.startedAt, Self.encode(epoch.variations),
                Self.encode(epoch.shares), epoch.signature,
            ])
    }

    /// The last revision and assignment event the figures follow (0 and 0 at first).
    func progress(in scope: EnvironmentScope) throws -> (revision: Int, assignmentEventID: Int64) {
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT revision, assignment_event_id FROM experiment_progress WHERE environment_id = ?"),
            arguments: [scope.id])
        return (row?[0] ?? 0, row?[1] ?? 0)
    }

    func setProgress(revision: Int, assignmentEventID: Int64, in scope: EnvironmentScope) throws {
        try db.execute(
            sql: """
                INSERT INTO experiment_progress (environment_id, revision, assignment_event_id) VALUES (?, ?, ?)
                ON CONFLICT (environment_id) DO UPDATE
                SET revision = excluded.revision, assignment_event_id = excluded.assignment_event_id
                """, arguments: [scope.id, revision, assignmentEventID])
    }

    // MARK: Figures

    /// Adds `deltas` to the arms' and totals' rows, and copies the rows they touched into
    /// today's figures.
    func apply(_ deltas: ExperimentDeltas, in scope: EnvironmentScope, day: Int64) throws {
        let arm = try db.cachedStatement(
            sql: """
                INSERT INTO experiment_arms (environment_id, feature_id, epoch, variation, users, split_users,
                    exposed_users, excluded_users)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feature_id, epoch, variation) DO UPDATE SET users = users + excluded.users,
                    split_users = split_users + excluded.split_users,
                    exposed_users = exposed_users + excluded.exposed_users,
                    excluded_users = excluded_users + excluded.excluded_users
                """)
        for (key, delta) in deltas.arms {
            try arm.execute(arguments: [
                scope.id, key.featureID, key.epoch, key.variation, delta.users, delta.splitUsers, delta.exposedUsers,
                delta.excludedUsers,
            ])
        }
        let total = try db.cachedStatement(
            sql: """
                INSERT INTO experiment_totals (environment_id, feature_id, epoch, variation, goal_id, events, sum,
                    sum_squares, exposed_events, exposed_sum, exposed_sum_squares)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (feature_id, epoch, goal_id, variation) DO UPDATE SET events = events + excluded.events,
                    sum = sum + excluded.sum, sum_squares = sum_squares + excluded.sum_squares,
                    exposed_events = exposed_events + excluded.exposed_events,
                    exposed_sum = exposed_sum + excluded.exposed_sum,
                    exposed_sum_squares = exposed_sum_squares + excluded.exposed_sum_squares
                """)
        for (key, delta) in deltas.totals {
            try total.execute(arguments: [
                scope.id, key.featureID, key.epoch, key.variation, key.goalID, delta.itt.events, delta.itt.sum,
                delta.itt.sumOfSquares, delta.exposed.events, delta.exposed.sum, delta.exposed.sumOfSquares,
            ])
        }
        // Today's figures of every goal of every epoch touched: a few rows per batch.
        let snapshot = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO experiment_days (environment_id, feature_id, epoch, goal_id, variation, day, users,
                    sum, sum_squares, exposed_users, exposed_sum, exposed_sum_squares)
                SELECT a.environment_id, a.feature_id, a.epoch, t.goal_id, a.variation, ?3, a.users, t.sum,
                    t.sum_squares, a.exposed_users, t.exposed_sum, t.exposed_sum_squares
                FROM experiment_arms a JOIN experiment_totals t
                    ON t.feature_id = a.feature_id AND t.epoch = a.epoch AND t.variation = a.variation
                WHERE a.feature_id = ?1 AND a.epoch = ?2
                """)
        for epoch in deltas.touchedEpochs {
            try snapshot.execute(arguments: [epoch.featureID, epoch.epoch, day])
        }
    }

    /// The arms of a test, every epoch.
    func arms(featureID: Int64) throws -> [ArmRecord] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT epoch, variation, users, split_users, exposed_users, excluded_users FROM experiment_arms
                    WHERE feature_id = ?
                    """), arguments: [featureID]
        ).map {
            ArmRecord(
                epoch: $0[0], variation: $0[1], users: $0[2], splitUsers: $0[3], exposedUsers: $0[4],
                excludedUsers: $0[5])
        }
    }

    /// The totals of a test, every epoch and goal.
    func totals(featureID: Int64) throws -> [TotalRecord] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT epoch, goal_id, variation, events, sum, sum_squares, exposed_events, exposed_sum,
                        exposed_sum_squares
                    FROM experiment_totals WHERE feature_id = ?
                    """), arguments: [featureID]
        ).map {
            TotalRecord(
                epoch: $0[0], goalID: $0[1], variation: $0[2],
                itt: SumDelta(events: $0[3], sum: $0[4], sumOfSquares: $0[5]),
                exposed: SumDelta(events: $0[6], sum: $0[7], sumOfSquares: $0[8]))
        }
    }

    /// A goal's figures in one epoch at the end of each day, oldest first.
    func days(featureID: Int64, epoch: Int64, goalID: Int64) throws -> [DayRecord] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT day, variation, users, sum, sum_squares, exposed_users, exposed_sum, exposed_sum_squares
                    FROM experiment_days WHERE feature_id = ? AND epoch = ? AND goal_id = ? ORDER BY day
                    """), arguments: [featureID, epoch, goalID]
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

extension Database {
    /// Goals, events and the figures of tests.
    var experiments: ExperimentTable { ExperimentTable(db: self) }
}
