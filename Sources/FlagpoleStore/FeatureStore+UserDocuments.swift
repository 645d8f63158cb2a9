import FlagpoleCore
import Foundation
import GRDB

/// One user's features.json.
public struct PinnedDocument: Hashable, Sendable {
    /// The revision it renders.
    public var revision: Int
    public var bytes: [UInt8]
    /// The user's group in every test of the document.
    public var assignments: [Assignment]
    /// Whether every group is on record; `false` when a user new to the environment was not
    /// admitted (see `pinnedDocument(for:in:style:admittingNewUser:)`), whose document pins the
    /// groups the store will record for them.
    public var isRecorded: Bool
}

extension FeatureStore {
    /// The document one user's app should fetch (see `FeaturesDocument.pinned`): every test
    /// pinned to the user's recorded group, every unlock flag in the user's unlock state.
    ///
    /// Apps ask for it far more often than anything else, so it is a read: the user's groups
    /// come from one indexed query on a reader, and the document is filled in outside any
    /// transaction. Only tests that have no group on record for the user go to the writer, which
    /// records them (with their `first` events) in the next group commit and answers once they
    /// are committed. When a revision lands in between, the user is read again under it.
    ///
    /// - parameter admittingNewUser: asked, only for a user with no group on record in the
    ///   environment, whether to record them now. When it says no, nothing is written and the
    ///   document pins the groups their points give, which is what the store records whenever
    ///   it does record them: the app and the store agree either way.
    /// - throws: `StoreError.noRevision`, `StoreError.environmentNotFound`, `StoreError.busy`
    ///   when revisions keep landing faster than the user can be read.
    public func pinnedDocument(
        for user: UserID, in path: EnvironmentPath, style: JSONWriter.Style = .pretty,
        admittingNewUser: @Sendable () -> Bool = { true }
    ) async throws -> PinnedDocument {
        for _ in 0..<Self.readAttempts {
            let (plan, state) = try await userState(of: user, in: path)
            var assignments = state.assignments
            let unrecorded = plan.tests.filter { assignments[$0.featureID] == nil }
            let isAdmitted = unrecorded.isEmpty || !state.assignments.isEmpty || admittingNewUser()
            if !isAdmitted {
                for test in unrecorded { assignments[test.featureID] = test.firstAssignment(of: user, revision: plan.revision) }
            } else if !unrecorded.isEmpty {
                guard let recorded = try await recordFirstAssignments(of: user, in: unrecorded, under: plan.head) else { continue }
                assignments.merge(recorded) { _, stored in stored }
            }
            return PinnedDocument(
                revision: plan.revision, bytes: plan.render(assignments: assignments, unlocks: state.unlocks, style: style),
                assignments: plan.tests.map { test in
                    let assignment = assignments[test.featureID]!
                    return Assignment(
                        user: user, feature: test.name, variation: assignment.variation, point: assignment.point,
                        revision: assignment.revision, isOverride: assignment.isOverride)
                }, isRecorded: isAdmitted)
        }
        throw StoreError.busy
    }

    /// Reads of a user that a new revision overtook are retried this many times in all.
    static let readAttempts = 5

    /// The plan of the environment's current revision and what is recorded of `user` under it,
    /// in one read transaction.
    func userState(of user: UserID, in path: EnvironmentPath) async throws -> (PinningPlan, UserState) {
        try await read { db in
            let head = try db.environmentHead(of: path)
            guard head.revision != nil else { throw StoreError.noRevision(path) }
            let plan = try pinningPlans.plan(for: head) ?? {
                let features = try db.storedFeatures(in: head.scope).filter { !$0.isArchived }
                let plan = PinningPlan(head: head, document: try db.currentDocument(in: head.scope, features: features), features: features)
                pinningPlans.keep(plan)
                return plan
            }()
            return (plan, try db.recordedState(of: user, under: head, withUnlocks: !plan.unlockFlagIndexes.isEmpty))
        }
    }

    /// Records `user`'s first assignment to each of `tests` under the environment state `head`
    /// in the next group commit, and returns what is recorded once it is committed: the group
    /// just computed, or the one another request or process recorded first. `nil` when the
    /// environment moved on from `head` (a new revision, a restore) before the write.
    func recordFirstAssignments(
        of user: UserID, in tests: [PinningPlan.Test], under head: EnvironmentHead
    ) async throws -> [Int64: RecordedAssignment]? {
        let proposed = tests.map { (featureID: $0.featureID, assignment: $0.firstAssignment(of: user, revision: head.revision!)) }
        return try await writeInGroup { db in
            guard try db.environmentHead(of: head.scope.path) == head else { return nil }
            let writer = AssignmentWriter(db: db, scope: head.scope, revision: head.revision!, now: Date())
            var recorded: [Int64: RecordedAssignment] = [:]
            for (featureID, assignment) in proposed {
                recorded[featureID] = try writer.recordFirst(assignment, of: user, featureID: featureID)
            }
            return recorded
        }
    }
}

/// What the store has recorded of one user in one environment.
struct UserState: Sendable {
    /// The user's groups, by feature id.
    var assignments: [Int64: RecordedAssignment] = [:]
    /// The user's unlock states, by feature id.
    var unlocks: [Int64: Bool] = [:]
}

extension Database {
    /// Where the environment at `path` is, its latest revision and the store's generation, in
    /// one statement.
    ///
    /// - throws: `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    func environmentHead(of path: EnvironmentPath) throws -> EnvironmentHead {
        let row = try Row.fetchOne(cachedStatement(sql: """
            SELECT t.id, e.id, e.features_position,
                (SELECT max(number) FROM revisions r WHERE r.tenant_id = t.id AND r.environment_id = e.id),
                (SELECT generation FROM store_generation)
            FROM tenants t JOIN environments e ON e.tenant_id = t.id
            WHERE t.slug = ? AND e.name = ?
            """), arguments: [path.tenant.rawValue, path.environment.rawValue])
        guard let row else {
            // Says which of the two is missing.
            _ = try scope(of: path)
            throw StoreError.environmentNotFound(path, existing: [])
        }
        return EnvironmentHead(
            scope: EnvironmentScope(tenant: TenantScope(id: row[0], slug: path.tenant), id: row[1], path: path, featuresPosition: row[2]),
            revision: row[3], generation: row[4])
    }

    /// `user`'s groups in the environment's current tests, and with `withUnlocks` their unlock
    /// states: two indexed queries.
    func recordedState(of user: UserID, under head: EnvironmentHead, withUnlocks: Bool) throws -> UserState {
        var state = UserState()
        let scope = head.scope
        // The primary key (feature_id, user_id) is probed once per feature of the document.
        let assignments = try Row.fetchCursor(cachedStatement(sql: """
            SELECT feature_id, point, variation, is_override, revision FROM assignments
            WHERE tenant_id = ?1 AND user_id = ?3
              AND feature_id IN (SELECT id FROM features WHERE tenant_id = ?1 AND environment_id = ?2 AND archived_at IS NULL)
            """), arguments: [scope.tenant.id, scope.id, user.rawValue])
        while let row = try assignments.next() {
            state.assignments[row[0]] = RecordedAssignment(point: row[1], variation: row[2], isOverride: row[3], revision: row[4])
        }
        guard withUnlocks else { return state }
        let unlocks = try Row.fetchCursor(cachedStatement(sql: """
            SELECT feature_id, unlocked FROM unlocks WHERE tenant_id = ? AND environment_id = ? AND user_id = ?
            """), arguments: [scope.tenant.id, scope.id, user.rawValue])
        while let row = try unlocks.next() {
            state.unlocks[row[0]] = row[1]
        }
        return state
    }
}
