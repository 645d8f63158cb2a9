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

    /// How many times clients fetched the environment's revisions `revisions`, by client.
    public func fetchCounts(in path: EnvironmentPath, revisions: Range<Int>) async throws -> FetchCounts {
        try await read { db in
            try db.fetchCounts.counts(environmentID: try db.environments.scope(of: path).id, revisions: revisions)
        }
    }
}
