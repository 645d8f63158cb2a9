import FlagpoleCore
import Foundation
import GRDB

/// Records users' first assignments to one test, with a `first` event each: the hot path of
/// bulk assignment, so its statements are prepared once, the values shared by every user are
/// bound once, and each user binds only their own.
struct FirstAssignments {
    private let feature: StoredFeature
    private let revision: Int
    private let insert: RawStatement
    private let event: RawStatement
    private let select: RawStatement

    init(_ db: Database, scope: EnvironmentScope, feature: StoredFeature, revision: Int, now: Date) throws {
        self.feature = feature
        self.revision = revision
        insert = try RawStatement(db, sql: """
            INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (feature_id, user_id) DO NOTHING
            """)
        event = try RawStatement(db, sql: """
            INSERT INTO assignment_events (tenant_id, environment_id, feature_id, revision, created_at, user_id, point, variation, reason)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'first')
            """)
        select = try RawStatement(db, sql: """
            SELECT point, variation, revision, is_override FROM assignments WHERE feature_id = ?1 AND user_id = ?2
            """)
        for statement in [insert, event] {
            statement.bind(scope.tenant.id, at: 1)
            statement.bind(scope.id, at: 2)
            statement.bind(feature.id, at: 3)
            statement.bind(Int64(revision), at: 4)
            statement.bind(now.unixMilliseconds, at: 5)
        }
        select.bind(feature.id, at: 1)
    }

    /// The user's assignment: recorded now at `point` in `variation` when the user is new
    /// (`isNew`), else as recorded before, and nothing is written.
    func record(_ user: UserID, point: Double, variation: String) throws -> (assignment: Assignment, isNew: Bool) {
        insert.bind(user.rawValue, at: 6)
        insert.bind(point, at: 7)
        insert.bind(variation, at: 8)
        if try insert.execute() == 1 {
            event.bind(user.rawValue, at: 6)
            event.bind(point, at: 7)
            event.bind(variation, at: 8)
            try event.execute()
            let assignment = Assignment(
                user: user, feature: feature.feature.name, variation: variation, point: point, revision: revision, isOverride: false)
            return (assignment, true)
        }
        select.bind(user.rawValue, at: 2)
        let recorded = try select.first { row in
            Assignment(
                user: user, feature: feature.feature.name, variation: row.text(1), point: row.double(0),
                revision: Int(row.int(2)), isOverride: row.int(3) != 0)
        }
        guard let recorded else { throw StoreError.storage(reason: "an assignment vanished while it was being recorded") }
        return (recorded, false)
    }
}
