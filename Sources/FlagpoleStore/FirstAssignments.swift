import FlagpoleCore
import Foundation
import GRDB

/// Records users' first assignments to one test, with a `first` event each: the hot path of
/// bulk assignment.
///
/// Each batch of users is staged in a temporary table with one prepared insert per user, then
/// copied into `assignments` and `assignment_events` by one statement each, so SQLite does
/// the bulk of the work in its own loop, as the `sqlite3` shell's `INSERT … SELECT` does.
/// Points are staged as their hashes and scaled in SQL with the very IEEE operations
/// `UserPoints` uses (`hash / 2^32 * 100`), so both sides hold the same double.
struct FirstAssignments {
    /// Users per batch: large enough to amortise the set statements, small enough to stay in cache.
    static let batchSize = 4096

    private let feature: StoredFeature
    private let points: UserPoints
    private let ranges: VariationRanges
    private let revision: Int
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
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS staged_assignments (user_id TEXT NOT NULL, hash INTEGER NOT NULL, variation TEXT NOT NULL)
            """)
        clear = try RawStatement(db, sql: "DELETE FROM temp.staged_assignments")
        stage = try RawStatement(db, sql: "INSERT INTO temp.staged_assignments (user_id, hash, variation) VALUES (?1, ?2, ?3)")
        known = try RawStatement(db, sql: """
            SELECT s.user_id, a.point, a.variation, a.revision, a.is_override
            FROM temp.staged_assignments s JOIN assignments a ON a.feature_id = ?1 AND a.user_id = s.user_id
            """)
        unstage = try RawStatement(db, sql: """
            DELETE FROM temp.staged_assignments
            WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.feature_id = ?1 AND a.user_id = staged_assignments.user_id)
            """)
        let columns = "?1, ?2, ?3, ?4, ?5, user_id, hash / 4294967296.0 * 100, variation"
        insert = try RawStatement(db, sql: """
            INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation)
            SELECT \(columns) FROM temp.staged_assignments
            """)
        event = try RawStatement(db, sql: """
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

    /// The assignments of `users`, in order. Users new to the test are recorded now, in the group
    /// of their point (`isNew`); the others keep their recorded group and nothing is written.
    func record(_ users: some Collection<UserID>) throws -> [(assignment: Assignment, isNew: Bool)] {
        try clear.execute()
        // A user listed twice is staged once; the second listing reads as already recorded.
        var staged: [String: Assignment] = [:]
        var batch: [(user: UserID, isFirstListing: Bool)] = []
        batch.reserveCapacity(users.count)
        for user in users {
            guard staged[user.rawValue] == nil else {
                batch.append((user, false))
                continue
            }
            let hash = points.hash(for: user.rawValue)
            let point = UserPoints.point(hash: hash)
            let variation = ranges.variation(at: point)!
            staged[user.rawValue] = Assignment(
                user: user, feature: feature.feature.name, variation: variation, point: point, revision: revision, isOverride: false)
            stage.bind(user.rawValue, at: 1)
            stage.bind(Int64(hash), at: 2)
            stage.bind(variation, at: 3)
            try stage.execute()
            batch.append((user, true))
        }
        var recorded: [String: Assignment] = [:]
        try known.forEachRow { row in
            let user = row.text(0)
            recorded[user] = Assignment(
                user: UserID(rawValue: user), feature: feature.feature.name, variation: row.text(2), point: row.double(1),
                revision: Int(row.int(3)), isOverride: row.int(4) != 0)
        }
        if !recorded.isEmpty { try unstage.execute() }
        if staged.count > recorded.count {
            try insert.execute()
            try event.execute()
        }
        return batch.map { user, isFirstListing in
            if let before = recorded[user.rawValue] { return (before, false) }
            // Every listed user was staged at their first listing.
            return (staged[user.rawValue]!, isFirstListing)
        }
    }
}
