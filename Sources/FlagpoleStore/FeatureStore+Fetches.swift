import FlagpoleCore
import Foundation

extension FeatureStore {
    /// Adds a server's fetch counts, in one transaction: several servers add up. Counts of an
    /// environment deleted since are dropped.
    public func addFetchCounts(_ counts: [FetchKey: Int], now: Date) async throws {
        guard !counts.isEmpty else { return }
        try await write { db in
            var environments: [EnvironmentPath: Int64?] = [:]
            for (key, fetches) in counts where fetches > 0 {
                if environments[key.path] == nil {
                    environments[key.path] = .some(try? db.environments.scope(of: key.path).id)
                }
                guard let environmentID = environments[key.path] ?? nil else { continue }
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
            var environments: [EnvironmentPath: Int64?] = [:]
            for (key, batches) in counts where batches > 0 {
                if environments[key.path] == nil {
                    environments[key.path] = .some(try? db.environments.scope(of: key.path).id)
                }
                guard let environmentID = environments[key.path] ?? nil else { continue }
                try db.refusedEventBatches.add(
                    batches, environmentID: environmentID, cause: key.cause, keyPrefix: key.keyPrefix, at: now)
            }
            try db.refusedEventBatches.prune(before: now)
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
