import FlagpoleCore
import Foundation

extension Assignments {
    /// Puts users in a test's groups (its rules on their last attributes, else their points) and records the ones seen for the first
    /// time, with a `first` event each, all or none, through the group commit that also records
    /// the users of pinned documents. A user already recorded keeps their group (bias changes
    /// have re-evaluated it) and nothing is written for them.
    ///
    /// - parameter report: called with each user's assignment, in order, once they are committed.
    /// - throws: `CoreError.notATest`, `DocumentError.featureNotFound`.
    public func assign(
        _ users: [UserID], to name: String, in path: EnvironmentPath, report: (@Sendable (Assignment) -> Void)? = nil
    ) async throws -> AssignmentSummary {
        if users.count <= Self.directAssignmentLimit,
            let assignments = try await assignDirectly(users, to: name, in: path)
        {
            var summary = AssignmentSummary(recorded: 0, known: 0)
            for (assignment, isNew) in assignments {
                if isNew { summary.recorded += 1 } else { summary.known += 1 }
                report?(assignment)
            }
            return summary
        }
        return try await store.writeInGroup { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: name, in: scope)
            guard stored.feature.isBucketed else { throw CoreError.notATest(feature: name, kind: stored.feature.kind) }
            let revision = try db.environments.latestRevisionNumber(in: scope) ?? 0
            var summary = AssignmentSummary(recorded: 0, known: 0)
            // Rules read each user's attributes: one by one, as their fetches would record them.
            let targeting = try TargetingDocument(stored: try db.environments.revision(nil, in: scope)?.targeting)
            if let test = PinningPlan.Test(
                featureID: stored.id, index: 0, feature: stored.feature, salt: stored.salt,
                rules: targeting.rules(of: stored.feature.name) ?? []), !test.rules.isEmpty
            {
                let segments = SegmentLookup(
                    try targeting.segments.values.map { try Catalog.segment($0, in: scope, db: db) })
                let writer = db.assignments.writer(in: scope, revision: revision, now: Date())
                for user in users {
                    let (recorded, isNew) = try writer.recordFirst(
                        try Self.firstAssignment(
                            of: user, in: test, segments: segments, revision: revision, db: db, scope: scope),
                        of: user, featureID: stored.id)
                    if isNew { summary.recorded += 1 } else { summary.known += 1 }
                    report?(
                        Assignment(
                            user: user, feature: stored.feature.name, variation: recorded.variation,
                            point: recorded.point,
                            revision: recorded.revision, isOverride: recorded.isOverride))
                }
                return summary
            }
            try FirstAssignments(db, scope: scope, feature: stored, revision: revision, now: Date()).record(users) {
                assignment, isNew in
                if isNew { summary.recorded += 1 } else { summary.known += 1 }
                report?(assignment)
            }
            return summary
        }
    }

    /// A few users, as an app or the API sends them, to a test of the current document: what
    /// decides their groups is the revision's plan (the one kept, else read on a reader), and the
    /// write is only the rows, in the next group commit, checked to be under the same revision.
    /// `nil` when `name` is no current test (the bulk way then says why) or revisions keep
    /// landing in between.
    private func assignDirectly(
        _ users: [UserID], to name: String, in path: EnvironmentPath
    ) async throws -> [(Assignment, isNew: Bool)]? {
        var kept = store.pinningPlans.plan(for: path)
        for _ in 0..<Self.readAttempts {
            let isKept = kept != nil
            let plan: PinningPlan
            if let kept {
                plan = kept
            } else {
                plan = try await read { db in try currentPlan(in: db, head: try db.environments.head(of: path)) }
            }
            kept = nil
            // Names compare as the app compares them. A kept plan may be older than the test.
            guard let test = plan.tests.first(where: { $0.name == name }) else {
                if isKept { continue }
                return nil
            }
            // Without rules a user's group needs no read: on PostgreSQL the group commit records
            // them ahead, with the other writes' (see `AssignmentWriter.prerecord`).
            let firsts: [PendingFirst] =
                if store.backend.prerecordsFirstAssignments, test.rules.isEmpty {
                    users.map { user in
                        PendingFirst(
                            head: plan.head, featureID: test.featureID, user: user,
                            assignment: test.firstAssignment(
                                of: EvaluationContext(user: user, attributes: [:]), segments: plan.segments,
                                revision: plan.revision, isPinned: false))
                    }
                } else {
                    []
                }
            let recorded = try await store.writeInGroup(prerecording: firsts) {
                db -> [(assignment: RecordedAssignment, isNew: Bool)]? in
                guard try db.environments.isCurrent(plan.head) else { return nil }
                let writer = db.assignments.writer(in: plan.head.scope, revision: plan.revision, now: Date())
                return try users.indices.map { index in
                    try writer.recordFirst(
                        try firsts.isEmpty
                            ? Self.firstAssignment(
                                of: users[index], in: test, segments: plan.segments, revision: plan.revision, db: db,
                                scope: plan.head.scope)
                            : firsts[index].assignment,
                        of: users[index], featureID: test.featureID)
                }
            }
            guard let recorded else { continue }
            return zip(users, recorded).map { user, recorded in
                let assignment = recorded.assignment
                return (
                    Assignment(
                        user: user, feature: test.name, variation: assignment.variation, point: assignment.point,
                        revision: assignment.revision,
                        isOverride: assignment.isOverride), recorded.isNew
                )
            }
        }
        return nil
    }

    /// The group `assign` records for `user`: by rule, reading the user's last attributes as
    /// their next fetch would, else by their point. Not for an app: the group is not pinned.
    static func firstAssignment(
        of user: UserID, in test: PinningPlan.Test, segments: SegmentLookup, revision: Int, db: Transaction,
        scope: EnvironmentScope
    ) throws -> RecordedAssignment {
        let attributes = test.rules.isEmpty ? nil : try db.userAttributes.attributes(of: user, in: scope)?.decoded
        return test.firstAssignment(
            of: EvaluationContext(user: user, attributes: attributes?.values ?? [:]), segments: segments,
            revision: revision, isPinned: false)
    }

    /// Up to this many users are recorded one by one; more are staged and copied in bulk
    /// (one by one too when the test has rules).
    static let directAssignmentLimit = 64

    /// Assignment events of an environment, newest first.
    ///
    /// - throws: `DocumentError.featureNotFound` when `query.feature` names no feature, current or archived.
    public func assignmentEvents(
        in path: EnvironmentPath, matching query: AssignmentEventQuery
    ) async throws -> [AssignmentEvent] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.assignments.events(
                in: scope, matching: query,
                featureID: try query.feature.map { try db.features.id(named: $0, in: scope) })
        }
    }

    /// Users per variation of a test (current or archived), now or as they stood at `time`
    /// (replayed from history).
    /// Variations come in the feature's order, then any others users are recorded in (`Disabled`
    /// while a test is off), by name.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func assignmentCounts(
        of name: String, in path: EnvironmentPath, at time: Date? = nil
    ) async throws -> [VariationCount] {
        try await read { db in
            let stored = try db.features.stored(
                named: name, in: try db.environments.scope(of: path), includingArchived: true)
            return try db.assignments.counts(of: stored, at: time)
        }
    }

    /// Users per variation of a test (current or archived) at `samples` evenly spaced times,
    /// from the minute of its first assignment to `now`, in one read: the data of a distribution
    /// chart. Each moment counts the users as they stood at the end of its minute, summed from
    /// the per-minute deltas of the history rather than replayed from its events. Empty when
    /// nobody was ever assigned.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func assignmentTimeline(
        of name: String, in path: EnvironmentPath, samples: Int, now: Date = Date()
    ) async throws -> [AssignmentSnapshot] {
        try await read { db in
            let stored = try db.features.stored(
                named: name, in: try db.environments.scope(of: path), includingArchived: true)
            return try db.assignments.timeline(of: stored, samples: samples, now: now)
        }
    }
}
