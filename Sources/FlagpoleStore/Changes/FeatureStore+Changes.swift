import FlagpoleCore
import Foundation

/// What changed in one environment since a reader last looked, by its change sequence: every
/// committed write that changed it took one number (see `Transaction.finish`).
public struct EnvironmentChanges: Hashable, Sendable {
    public var path: EnvironmentPath
    /// The environment's change sequence number now: the next reading starts from it.
    public var sequence: Int64
    /// The users whose records changed (overrides, unlocks, kept attributes, first assignments,
    /// pins); `nil` when anything may have: a revision, new delivery settings, a forget, a bulk
    /// write, a step the reader missed (older than the tick keeps), or a reader that had none.
    public var users: Set<UserID>?
}

/// What the tick deleted as too old to keep.
public struct PruneReport: Hashable, Sendable {
    public var deliveries = 0
    public var changes = 0
}

extension FeatureStore {
    /// How long the steps of each change sequence are kept: a server further behind (stopped,
    /// cut off) reads its environments as wholly changed.
    public static let changesKept: TimeInterval = 3_600

    /// How long delivered and given-up webhook deliveries are kept by default.
    public static let deliveriesKept: TimeInterval = 30 * 86_400

    /// The environments whose change sequence moved past `known` (by path; an environment not in
    /// `known` is reported with `users` nil), each with the users changed since.
    public func changes(since known: [EnvironmentPath: Int64]) async throws -> [EnvironmentChanges] {
        try await read { db in
            try db.environments.changeSequences().compactMap { path, current -> EnvironmentChanges? in
                let seen = known[path]
                guard seen != current.sequence else { return nil }
                // Unknown, or behind a restore that brought back a lower number: anything may have.
                guard let seen, seen < current.sequence else {
                    return EnvironmentChanges(path: path, sequence: current.sequence, users: nil)
                }
                let steps = try db.environments.changes(ofEnvironment: current.id, after: seen)
                var users: Set<UserID>? = []
                // A step missing (pruned, or forgotten) may have named anyone.
                if steps.count != current.sequence - seen || steps.last?.sequence != current.sequence {
                    users = nil
                }
                for step in steps where users != nil {
                    guard let named = step.users else {
                        users = nil
                        break
                    }
                    users!.formUnion(named)
                }
                return EnvironmentChanges(path: path, sequence: current.sequence, users: users)
            }.sorted { $0.path.description < $1.path.description }
        }
    }

    /// Deletes what is kept only for a while: webhook deliveries delivered or given up more than
    /// `keepingDeliveries` before `now`, and the change sequences' steps older than `changesKept`.
    /// The tick runs it (`serve`, and `flagpole tick`).
    public func prune(now: Date, keepingDeliveries: TimeInterval = deliveriesKept) async throws -> PruneReport {
        try await write { db in
            PruneReport(
                deliveries: try db.webhooks.pruneDeliveries(before: now.addingTimeInterval(-keepingDeliveries)),
                changes: try db.environments.pruneChanges(before: now.addingTimeInterval(-Self.changesKept)))
        }
    }
}
