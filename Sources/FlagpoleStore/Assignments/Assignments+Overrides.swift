import FlagpoleCore
import Foundation

extension Assignments {
    /// Forces a user into a variation of a test until cleared (QA), with an `override` event.
    /// Bias changes leave the user there, and the pinned export moves the user's point inside
    /// the variation's range.
    ///
    /// - returns: the user's assignment under the override.
    /// - throws: `CoreError.notATest`, `CoreError.unknownVariation`, `UserStateError.unreachableVariation`.
    public func setOverride(
        _ name: String, user: UserID, variation: String, in path: EnvironmentPath
    ) async throws -> Assignment {
        try await write { db in
            let (stored, writer) = try db.testForUser(name, in: path)
            guard stored.feature.isEnabled else { throw UserStateError.testDisabled(feature: name) }
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
                throw UserStateError.unreachableVariation(feature: name, variation: forced)
            }
            let overridden = Assignment(
                user: user, feature: name, variation: forced, point: point, revision: writer.revision, isOverride: true)
            guard let recorded = try db.assignments.assignment(of: user, in: stored) else {
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
    /// - throws: `UserStateError.noOverride`.
    public func clearOverride(_ name: String, user: UserID, in path: EnvironmentPath) async throws -> Assignment {
        try await write { db in
            let (stored, writer) = try db.testForUser(name, in: path)
            guard let recorded = try db.assignments.assignment(of: user, in: stored), recorded.isOverride else {
                throw UserStateError.noOverride(feature: name, user: user)
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
    /// - throws: `UserStateError.notAnUnlockFlag`, `DocumentError.featureNotFound`.
    @discardableResult
    public func setUnlocked(
        _ isUnlocked: Bool, feature name: String, user: UserID, source: String?, actor: String, in path: EnvironmentPath
    ) async throws -> Bool {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: name, in: scope)
            guard stored.feature.kind == .unlockFlag else {
                throw UserStateError.notAnUnlockFlag(feature: name, kind: stored.feature.kind)
            }
            guard try db.unlocks.state(of: user, featureID: stored.id) != isUnlocked else { return false }
            try db.unlocks.record(
                isUnlocked, of: user, featureID: stored.id, in: scope, source: source, actor: actor, at: Date())
            return true
        }
    }

    /// Recorded unlock states of an environment, by feature then user, optionally of one user
    /// or one feature; with `history`, every unlock and lock instead, newest first.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func unlocks(
        in path: EnvironmentPath, user: UserID? = nil, feature: String? = nil, history: Bool = false
    ) async throws -> [UnlockRecord] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.unlocks.records(
                in: scope, user: user, featureID: try feature.map { try db.features.id(named: $0, in: scope) },
                history: history)
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

extension Transaction {
    /// A test of the environment at `path` and a writer for its users under the current revision.
    fileprivate func testForUser(_ name: String, in path: EnvironmentPath) throws -> (StoredFeature, AssignmentWriter) {
        let scope = try environments.scope(of: path)
        let stored = try features.stored(named: name, in: scope)
        guard stored.feature.isBucketed else { throw CoreError.notATest(feature: name, kind: stored.feature.kind) }
        let revision = try environments.latestRevisionNumber(in: scope) ?? 0
        return (stored, assignments.writer(in: scope, revision: revision, now: Date()))
    }
}
