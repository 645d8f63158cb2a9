import FlagpoleCore
import Foundation

extension Outbound {
    /// Adds a server's fetch counts, in one transaction: several servers add up. Counts of an
    /// environment deleted since are dropped.
    public func addFetchCounts(_ counts: [FetchKey: Int], now: Date) async throws {
        guard !counts.isEmpty else { return }
        try await write { db in
            try Self.forEachCount(counts, in: db, path: \.path) { environmentID, key, fetches in
                try db.fetchCounts.add(
                    fetches, environmentID: environmentID, revision: key.revision, client: key.client, at: now)
            }
        }
    }

    /// Adds a server's counts of event batches refused whole, in one transaction, and drops the
    /// counts of hours long past. Counts of an environment deleted since are dropped.
    public func addRefusedEventBatches(_ counts: [RefusedBatchKey: Int], now: Date) async throws {
        guard !counts.isEmpty else { return }
        try await write { db in
            try Self.forEachCount(counts, in: db, path: \.path) { environmentID, key, batches in
                try db.refusedEventBatches.add(
                    batches, environmentID: environmentID, cause: key.cause, keyPrefix: key.keyPrefix, at: now)
            }
            try db.refusedEventBatches.prune(before: now)
        }
    }

    /// Each count above zero with the id of its key's environment, looked up once per
    /// environment; the counts of an environment deleted since are left out.
    private static func forEachCount<Key>(
        _ counts: [Key: Int], in db: Transaction, path: (Key) -> EnvironmentPath,
        _ body: (Int64, Key, Int) throws -> Void
    ) throws {
        var environments: [EnvironmentPath: Int64?] = [:]
        for (key, count) in counts where count > 0 {
            let keyPath = path(key)
            if environments[keyPath] == nil {
                environments[keyPath] = .some(try? db.environments.scope(of: keyPath).id)
            }
            guard let environmentID = environments[keyPath] ?? nil else { continue }
            try body(environmentID, key, count)
        }
    }

    /// The event batches refused whole in the tenant's environments since `time` (to the hour),
    /// by environment; environments with none are left out.
    public func refusedEventBatches(
        of slug: TenantSlug, since time: Date
    ) async throws -> [EnvironmentName: RefusedEventBatches] {
        try await read { db in try db.refusedEventBatches.batches(of: try db.tenants.scope(of: slug), since: time) }
    }

    /// How many times clients fetched the environment's revisions `revisions`, by client.
    public func fetchCounts(in path: EnvironmentPath, revisions: Range<Int>) async throws -> FetchCounts {
        try await read { db in
            try db.fetchCounts.counts(environmentID: try db.environments.scope(of: path).id, revisions: revisions)
        }
    }
}
