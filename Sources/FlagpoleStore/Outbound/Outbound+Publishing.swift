import Foundation

extension Outbound {
    /// Adds one publish's entries to the publish log, in one transaction. Entries of
    /// environments deleted since the publish began are dropped.
    public func recordPublishes(_ entries: [PublishLogEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await write { db in
            for entry in entries {
                guard let scope = try? db.environments.scope(of: entry.environment) else { continue }
                try db.publishes.insert(entry, in: scope)
            }
        }
    }

    /// Whether a target has published the environment (its documents are then fetched from
    /// object storage, where Flagpole sees no fetch).
    public func hasPublished(_ path: EnvironmentPath) async throws -> Bool {
        try await read { db in try db.publishes.hasPublished(db.environments.scope(of: path)) }
    }

    /// Where each target stands for each environment it published (for `target` only, when
    /// given), by target, tenant and environment.
    public func publishStatus(target: String? = nil) async throws -> [PublishStatus] {
        try await read { db in try db.publishes.status(target: target) }
    }
}
