import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Puts users in a test's groups by their points and records the ones seen for the first
    /// time, with a `first` event each, all or none, through the group commit that also records
    /// the users of pinned documents. A user already recorded keeps their group (bias changes
    /// have re-evaluated it) and nothing is written for them.
    ///
    /// - parameter report: called with each user's assignment, in order, once they are committed.
    /// - throws: `CoreError.notATest`, `StoreError.featureNotFound`.
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
        return try await writeInGroup { db in
            let scope = try db.scope(of: path)
            let stored = try db.storedFeature(named: name, in: scope)
            guard stored.feature.isBucketed else { throw CoreError.notATest(feature: name, kind: stored.feature.kind) }
            let revision = try db.latestRevisionNumber(in: scope) ?? 0
            var summary = AssignmentSummary(recorded: 0, known: 0)
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
        var kept = pinningPlans.plan(for: path)
        for _ in 0..<Self.readAttempts {
            let isKept = kept != nil
            let plan: PinningPlan
            if let kept {
                plan = kept
            } else {
                plan = try await read { db in try currentPlan(in: db, head: try db.environmentHead(of: path)) }
            }
            kept = nil
            // Names compare as the app compares them. A kept plan may be older than the test.
            guard let test = plan.tests.first(where: { $0.name == name }) else {
                if isKept { continue }
                return nil
            }
            let proposed = users.map { test.firstAssignment(of: $0, revision: plan.revision) }
            let recorded = try await writeInGroup { db -> [(assignment: RecordedAssignment, isNew: Bool)]? in
                guard try db.isCurrent(plan.head) else { return nil }
                let writer = AssignmentWriter(db: db, scope: plan.head.scope, revision: plan.revision, now: Date())
                return try zip(users, proposed).map { try writer.recordFirst($1, of: $0, featureID: test.featureID) }
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

    /// Up to this many users are recorded one by one; more are staged and copied in bulk.
    static let directAssignmentLimit = 64

    /// Assignment events of an environment, newest first.
    ///
    /// - throws: `StoreError.featureNotFound` when `query.feature` names no feature, current or archived.
    public func assignmentEvents(
        in path: EnvironmentPath, matching query: AssignmentEventQuery
    ) async throws -> [AssignmentEvent] {
        try await read { db in
            let scope = try db.scope(of: path)
            // The index of the narrowest filter, named: the planner, which has no statistics,
            // took the environment's for a feature's history and walked back through every
            // event of the other tests newer than the feature's last (a million, in the bench).
            let index =
                query.user != nil
                ? "assignment_events_by_user"
                : query.feature != nil ? "assignment_events_by_feature" : "assignment_events_by_environment"
            var sql = """
                SELECT e.id, e.user_id, f.name, e.previous_variation, e.variation, e.point, e.revision, e.reason, e.created_at
                FROM assignment_events e INDEXED BY \(index) JOIN features f ON f.id = e.feature_id
                WHERE e.environment_id = ? AND e.tenant_id = ?
                """
            var arguments: StatementArguments = [scope.id, scope.tenant.id]
            func filter(_ condition: String, _ value: (any DatabaseValueConvertible)?) {
                guard let value else { return }
                sql += " AND \(condition)"
                arguments += [value]
            }
            filter("e.user_id = ?", query.user?.rawValue)
            filter("e.feature_id = ?", try query.feature.map { try db.featureID(named: $0, in: scope) })
            filter("e.created_at >= ?", query.since?.unixMilliseconds)
            filter("e.created_at < ?", query.until?.unixMilliseconds)
            filter("e.id < ?", query.before)
            sql += " ORDER BY e.id DESC LIMIT ?"
            arguments += [query.limit]
            // One statement per combination of filters, prepared once per connection.
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
                AssignmentEvent(
                    id: row[0], user: UserID(rawValue: row[1]), feature: row[2], previousVariation: row[3],
                    variation: row[4],
                    point: row[5], revision: row[6], reason: AssignmentReason(rawValue: row[7]) ?? .first,
                    time: Date(unixMilliseconds: row[8]))
            }
        }
    }

    /// Users per variation of a test (current or archived), now or as they stood at `time`
    /// (replayed from history).
    /// Variations come in the feature's order, then any others users are recorded in (`Disabled`
    /// while a test is off), by name.
    ///
    /// - throws: `StoreError.featureNotFound`.
    public func assignmentCounts(
        of name: String, in path: EnvironmentPath, at time: Date? = nil
    ) async throws -> [VariationCount] {
        try await read { db in
            let stored = try db.storedFeature(named: name, in: try db.scope(of: path), includingArchived: true)
            return try db.assignmentCounts(of: stored, at: time)
        }
    }

    /// Users per variation of a test (current or archived) at `samples` evenly spaced times,
    /// from the minute of its first assignment to `now`, in one read: the data of a distribution
    /// chart. Each moment counts the users as they stood at the end of its minute, summed from
    /// the per-minute deltas of the history rather than replayed from its events. Empty when
    /// nobody was ever assigned.
    ///
    /// - throws: `StoreError.featureNotFound`.
    public func assignmentTimeline(
        of name: String, in path: EnvironmentPath, samples: Int, now: Date = Date()
    ) async throws -> [AssignmentSnapshot] {
        try await read { db in
            let stored = try db.storedFeature(named: name, in: try db.scope(of: path), includingArchived: true)
            let deltas = try Row.fetchCursor(
                db.cachedStatement(
                    sql: "SELECT minute, variation, users FROM assignment_deltas WHERE feature_id = ? ORDER BY minute"),
                arguments: [stored.id])
            guard samples > 0, var next = try deltas.next() else { return [] }
            let start = Date(unixMilliseconds: (next["minute"] as Int64) * 60_000)
            let step = samples > 1 ? max(0, now.timeIntervalSince(start)) / Double(samples - 1) : 0
            var users: [String: Int] = [:]
            var isExhausted = false
            return try (0..<samples).map { index in
                let time = samples > 1 ? start.addingTimeInterval(step * Double(index)) : now
                let minute = time.unixMilliseconds / 60_000
                while !isExhausted, (next["minute"] as Int64) <= minute {
                    users[next["variation"], default: 0] += next["users"]
                    if let row = try deltas.next() { next = row } else { isExhausted = true }
                }
                return AssignmentSnapshot(time: time, counts: stored.ordered(users))
            }
        }
    }
}

extension Database {
    /// The id of the feature named `name` in the environment, current or archived (history
    /// outlives a feature's place in the document).
    ///
    /// - throws: `StoreError.featureNotFound`.
    func featureID(named name: String, in scope: EnvironmentScope) throws -> Int64 {
        let id = try Int64.fetchOne(
            cachedStatement(sql: "SELECT id FROM features WHERE tenant_id = ? AND environment_id = ? AND name_key = ?"),
            arguments: [scope.tenant.id, scope.id, Feature.nameKey(name)])
        guard let id else { throw StoreError.featureNotFound(scope.path, name: name) }
        return id
    }
}

extension Database {
    /// Users per variation of `stored`, now (the sum of its history's deltas) or as they stood at
    /// `time` (each user's last event at or before it). Variations come in the feature's order,
    /// then any others users are recorded in (`Disabled` while a test is off), by name.
    func assignmentCounts(of stored: StoredFeature, at time: Date?) throws -> [VariationCount] {
        let rows =
            if let time {
                try Row.fetchAll(
                    cachedStatement(
                        sql: """
                            SELECT variation, count(*) FROM (
                                SELECT variation, max(id) FROM assignment_events
                                WHERE feature_id = ? AND created_at <= ? GROUP BY user_id)
                            GROUP BY variation
                            """), arguments: [stored.id, time.unixMilliseconds])
            } else {
                try Row.fetchAll(
                    cachedStatement(
                        sql: """
                            SELECT variation, sum(users) FROM assignment_deltas WHERE feature_id = ? GROUP BY variation HAVING sum(users) <> 0
                            """), arguments: [stored.id])
            }
        var users: [String: Int] = [:]
        for row in rows { users[row[0], default: 0] += row[1] }
        return stored.ordered(users)
    }
}

extension StoredFeature {
    /// `users` by variation in the feature's order, then any other variations by name. SQLite
    /// groups by bytes and Swift compares names as text, so "\u{E9}" and "e\u{301}" arrive as
    /// two rows and are summed into one name.
    func ordered(_ users: [String: Int]) -> [VariationCount] {
        var users = users
        var result: [VariationCount] = []
        var listed: Set<String> = []
        for variation in feature.effectiveVariations where listed.insert(variation).inserted {
            result.append(VariationCount(variation: variation, users: users.removeValue(forKey: variation) ?? 0))
        }
        return result
            + users.filter { $0.value != 0 }.sorted { $0.key < $1.key }.map {
                VariationCount(variation: $0.key, users: $0.value)
            }
    }
}
