import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Forces a user into a variation of a test until cleared (QA), with an `override` event.
    /// Bias changes leave the user there, and the pinned export moves the user's point inside
    /// the variation's range.
    ///
    /// - returns: the user's assignment under the override.
    /// - throws: `CoreError.notATest`, `CoreError.unknownVariation`, `StoreError.unreachableVariation`.
    public func setOverride(
        _ name: String, user: UserID, variation: String, in path: EnvironmentPath
    ) async throws -> Assignment {
        try await write { db in
            let (stored, writer) = try db.testForUser(name, in: path)
            guard stored.feature.isEnabled else { throw StoreError.testDisabled(feature: name) }
            let ranges = VariationRanges(of: stored.feature)
            guard
                let forced = stored.feature.effectiveVariations.first(where: {
                    $0.lowercased() == variation.lowercased()
                })
            else {
                throw CoreError.unknownVariation(
                    feature: name, variation: variation, variations: stored.feature.effectiveVariations)
            }
            let point = UserPoints(salt: stored.salt).point(for: user.rawValue)
            guard ranges.point(in: forced, preferring: point) != nil else {
                throw StoreError.unreachableVariation(feature: name, variation: forced)
            }
            let overridden = Assignment(
                user: user, feature: name, variation: forced, point: point, revision: writer.revision, isOverride: true)
            guard let recorded = try db.assignment(of: user, in: stored) else {
                try writer.recordOverride(user: user.rawValue, featureID: stored.id, point: point, variation: forced)
                return overridden
            }
            if !(recorded.isOverride && recorded.variation == forced) {
                try writer.move(recorded, featureID: stored.id, to: forced, isOverride: true, reason: .override)
            }
            return overridden
        }
    }

    /// Clears a user's QA override: the user goes back to the group of their point, with an
    /// `override-cleared` event.
    ///
    /// - returns: the user's assignment after the override.
    /// - throws: `StoreError.noOverride`.
    public func clearOverride(_ name: String, user: UserID, in path: EnvironmentPath) async throws -> Assignment {
        try await write { db in
            let (stored, writer) = try db.testForUser(name, in: path)
            guard let recorded = try db.assignment(of: user, in: stored), recorded.isOverride else {
                throw StoreError.noOverride(feature: name, user: user)
            }
            let variation = stored.feature.assignmentRanges.variation(at: recorded.point)!
            try writer.move(recorded, featureID: stored.id, to: variation, isOverride: false, reason: .overrideCleared)
            return Assignment(
                user: user, feature: name, variation: variation, point: recorded.point, revision: writer.revision,
                isOverride: false)
        }
    }

    /// Unlocks (or, with `false`, locks) an unlock flag for one user, with an event; nothing is
    /// written when the user's recorded state is already that.
    ///
    /// - returns: whether the state changed.
    /// - throws: `StoreError.notAnUnlockFlag`, `StoreError.featureNotFound`.
    @discardableResult
    public func setUnlocked(
        _ isUnlocked: Bool, feature name: String, user: UserID, source: String?, actor: String, in path: EnvironmentPath
    ) async throws -> Bool {
        try await write { db in
            let scope = try db.scope(of: path)
            let stored = try db.storedFeature(named: name, in: scope)
            guard stored.feature.kind == .unlockFlag else {
                throw StoreError.notAnUnlockFlag(feature: name, kind: stored.feature.kind)
            }
            let current = try Bool.fetchOne(
                db, sql: "SELECT unlocked FROM unlocks WHERE feature_id = ? AND user_id = ?",
                arguments: [stored.id, user.rawValue])
            guard current != isUnlocked else { return false }
            let time = Date().unixMilliseconds
            try db.execute(
                sql: """
                    INSERT INTO unlocks (tenant_id, environment_id, feature_id, user_id, unlocked, source, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (feature_id, user_id) DO UPDATE SET unlocked = excluded.unlocked, source = excluded.source,
                        updated_at = excluded.updated_at
                    """, arguments: [scope.tenant.id, scope.id, stored.id, user.rawValue, isUnlocked, source, time])
            try db.execute(
                sql: """
                    INSERT INTO unlock_events (tenant_id, environment_id, feature_id, user_id, unlocked, source, actor, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [scope.tenant.id, scope.id, stored.id, user.rawValue, isUnlocked, source, actor, time])
            return true
        }
    }

    /// Recorded unlock states of an environment, by feature then user, optionally of one user
    /// or one feature; with `history`, every unlock and lock instead, newest first.
    ///
    /// - throws: `StoreError.featureNotFound`.
    public func unlocks(
        in path: EnvironmentPath, user: UserID? = nil, feature: String? = nil, history: Bool = false
    ) async throws -> [UnlockRecord] {
        try await read { db in
            let scope = try db.scope(of: path)
            let table = history ? "unlock_events" : "unlocks"
            var sql = """
                SELECT f.name, u.user_id, u.unlocked, u.source, u.\(history ? "created_at" : "updated_at"), \(history ? "u.actor" : "NULL")
                FROM \(table) u JOIN features f ON f.id = u.feature_id
                WHERE u.environment_id = ? AND u.tenant_id = ?
                """
            var arguments: StatementArguments = [scope.id, scope.tenant.id]
            if let user {
                sql += " AND u.user_id = ?"
                arguments += [user.rawValue]
            }
            if let feature {
                sql += " AND u.feature_id = ?"
                arguments += [try db.featureID(named: feature, in: scope)]
            }
            sql += history ? " ORDER BY u.id DESC" : " ORDER BY f.name, u.user_id"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                UnlockRecord(
                    feature: row[0], user: UserID(rawValue: row[1]), isUnlocked: row[2], source: row[3],
                    time: Date(unixMilliseconds: row[4]), actor: row[5])
            }
        }
    }
}

/// A user's recorded state of an unlock flag.
public struct UnlockRecord: Hashable, Sendable {
    public var feature: String
    public var user: UserID
    public var isUnlocked: Bool
    /// Why, in the team's words (a purchase id, a ticket).
    public var source: String?
    public var time: Date
    /// Who made the change: set on history entries only.
    public var actor: String?
}

extension Database {
    /// A test of the environment at `path` and a writer for its users under the current revision.
    fileprivate func testForUser(_ name: String, in path: EnvironmentPath) throws -> (StoredFeature, AssignmentWriter) {
        let scope = try scope(of: path)
        let stored = try storedFeature(named: name, in: scope)
        guard stored.feature.isBucketed else { throw CoreError.notATest(feature: name, kind: stored.feature.kind) }
        let revision = try latestRevisionNumber(in: scope) ?? 0
        return (stored, AssignmentWriter(db: self, scope: scope, revision: revision, now: Date()))
    }
}
