import FlagpoleCore
import Foundation
import GRDB

/// Records users' first assignments to one test, with a `first` event each: the hot path of
/// bulk assignment.
///
/// Users are staged in a temporary table with one prepared insert each, then copied into
/// `assignments` and `assignment_events` by one `INSERT … SELECT` per table, so SQLite does
/// the bulk of the work in its own loop, as the `sqlite3` shell's `.import` then `INSERT …
/// SELECT` would. Points are staged as their hashes and scaled in SQL with the very IEEE
/// operations `UserPoints` uses (`hash / 2^32 * 100`), so both sides hold the same double.
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

    init(_ db: Database, scope: EnvironmentScope, feature: StoredFeature, revision: Int, now: Date) throws {
        self.feature = feature
        self.points = UserPoints(salt: feature.salt)
        self.ranges = feature.feature.assignmentRanges
        self.revision = revision
        hadRecordedUsers =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM assignments WHERE feature_id = ?)", arguments: [feature.id])
            ?? true
        try db.execute(
            sql: """
                CREATE TEMP TABLE IF NOT EXISTS staged_assignments (user_id TEXT NOT NULL, hash INTEGER NOT NULL, variation TEXT NOT NULL)
                """)
        clear = try RawStatement(db, sql: "DELETE FROM temp.staged_assignments")
        stage = try RawStatement(
            db, sql: "INSERT INTO temp.staged_assignments (user_id, hash, variation) VALUES (?1, ?2, ?3)")
        known = try RawStatement(
            db,
            sql: """
                SELECT s.user_id, a.point, a.variation, a.revision, a.is_override
                FROM temp.staged_assignments s
                JOIN assignments a ON a.feature_id = ?1 AND a.point = s.hash / 4294967296.0 * 100 AND a.user_id = s.user_id
                """)
        unstage = try RawStatement(
            db,
            sql: """
                DELETE FROM temp.staged_assignments
                WHERE EXISTS (
                    SELECT 1 FROM assignments a
                    WHERE a.feature_id = ?1 AND a.point = staged_assignments.hash / 4294967296.0 * 100 AND a.user_id = staged_assignments.user_id)
                """)
        let columns = "?1, ?2, ?3, ?4, ?5, user_id, hash / 4294967296.0 * 100, variation"
        insert = try RawStatement(
            db,
            sql: """
                INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation)
                SELECT \(columns) FROM temp.staged_assignments
                """)
        event = try RawStatement(
            db,
            sql: """
                INSERT INTO assignment_events (tenant_id, environment_id, feature_id, revision, created_at, user_id, point, variation, reason)
                SELECT \(columns), 'first' FROM temp.staged_assignments
                """)
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
        for user in users {
            let (assignment, hash) = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing { try stage(assignment, hash: hash) }
            // A second listing reads as recorded, in the group just computed: nothing can move
            // a user within this transaction.
            try report(assignment, isFirstListing)
        }
        try insert.execute()
        try event.execute()
    }

    /// Some users may be recorded already: the batch is staged, those recorded are read back and
    /// unstaged, the rest copied.
    private func recordBatch(_ users: ArraySlice<UserID>, report: (Assignment, Bool) throws -> Void) throws {
        try clear.execute()
        var listed = Set<UserID>()
        var computed: [(assignment: Assignment, isFirstListing: Bool)] = []
        computed.reserveCapacity(users.count)
        for user in users {
            let (assignment, hash) = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing { try stage(assignment, hash: hash) }
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
        for (assignment, isFirstListing) in computed {
            if let before = recorded[assignment.user] {
                try report(before, false)
            } else {
                try report(assignment, isFirstListing)
            }
        }
    }

    /// The user's group by their point, with the hash the point is scaled from.
    private func assignment(of user: UserID) -> (Assignment, hash: UInt32) {
        let hash = points.hash(for: user.rawValue)
        let point = UserPoints.point(hash: hash)
        let assignment = Assignment(
            user: user, feature: feature.feature.name, variation: ranges.variation(at: point)!, point: point,
            revision: revision, isOverride: false)
        return (assignment, hash)
    }

    private func stage(_ assignment: Assignment, hash: UInt32) throws {
        stage.bind(assignment.user.rawValue, at: 1)
        stage.bind(Int64(hash), at: 2)
        stage.bind(assignment.variation, at: 3)
        try stage.execute()
    }
}
