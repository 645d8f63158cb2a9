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

/// What another instance's commit changed, as `LISTEN` hears it.
public enum ChangeNotice: Sendable {
    /// What everyone is served (a revision, delivery settings), or anything (the listening
    /// connection came back, and may have missed some): read the change sequences now.
    case delivery
    /// Per-user records alone: read the change sequences within the poll interval, however many
    /// such commits come.
    case users
}

/// What the tick deleted as too old to keep.
public struct PruneReport: Hashable, Sendable {
    public var deliveries = 0
    public var changes = 0
}

extension Changes {
    /// How long the steps of each change sequence are kept: a server further behind (stopped,
    /// cut off) reads its environments as wholly changed.
    public static let changesKept: TimeInterval = 3_600

    /// How long delivered and given-up webhook deliveries are kept by default.
    public static let deliveriesKept: TimeInterval = 30 * 86_400

    /// The environments whose change sequence moved past `known` (by path; an environment not in
    /// `known` is reported with `users` nil), each with the users changed since.
    public func since(_ known: [EnvironmentPath: Int64]) async throws -> [EnvironmentChanges] {
        try await read { db in
            try db.environments.changeSequences().compactMap { path, current -> EnvironmentChanges? in
                let seen = known[path]
                guard seen != current.sequence else { return nil }
                // Unknown, or behind a restore that brought back a lower number: anything may have.
                guard let seen, seen < current.sequence else {
                    return EnvironmentChanges(path: path, sequence: current.sequence, users: nil)
                }
                let steps = try db.environments.changes(ofEnvironment: current.id, after: seen)
                // Steps are numbered one by one up to `current`: fewer means one is missing (pruned,
                // or forgotten), which may have named anyone.
                var users: Set<UserID>? = steps.count == current.sequence - seen ? [] : nil
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

/// One revision as the audit feed tells it: the fields of its `revision.created` event.
public struct RevisionEvent: Sendable {
    public var revision: Int
    public var createdAt: Date
    /// `{"event": "revision.created", "at", "tenant", "environment", "revision", "kind", "actor",
    /// "message", "changes", "features", …, "movedUsers", "text", "link"}` (docs/WEBHOOKS.md).
    public var jsonValue: JSONValue
}

extension Changes {
    /// The most revisions one reading of the audit feed returns.
    public static let revisionEventLimit = 1_000

    /// The environment's revisions created at or after `time`, oldest first, at most `limit`, each
    /// with the fields its `revision.created` event had: for teams that ship the audit trail to
    /// their log system. A reader asks again from the last one's time, skipping the numbers it has.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func revisionEvents(
        in path: EnvironmentPath, since time: Date, limit: Int = revisionEventLimit
    ) async throws -> [RevisionEvent] {
        try await read { db in
            try db.environments.revisionsCreated(since: time, in: try db.environments.scope(of: path), limit: limit)
                .map { summary, movedUsers, changes in
                    let event = StoreEvent.revisionCreated(
                        number: summary.number, kind: summary.kind, actor: summary.actor, message: summary.message,
                        changes: changes, movedUsers: movedUsers, in: path, at: summary.createdAt)
                    return RevisionEvent(
                        revision: summary.number, createdAt: summary.createdAt, jsonValue: .object(event.body))
                }
        }
    }
}
