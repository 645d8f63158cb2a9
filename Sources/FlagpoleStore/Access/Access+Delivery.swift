import FlagpoleCore
import Foundation

/// What a server needs to know to serve an environment's shared document.
public struct DeliveryState: Hashable, Sendable {
    public var revision: Int?
    public var settings: DeliverySettings
    /// Grows with every change of `settings`.
    public var settingsVersion: Int
    /// The store's generation, which grows with every restore: within one generation revision
    /// numbers and settings versions only grow and a revision's bytes never change; a restore
    /// may bring back lower numbers, or other bytes under a number already served.
    public var generation: Int64

    /// A reading of an environment's delivery state.
    public init(revision: Int?, settings: DeliverySettings, settingsVersion: Int, generation: Int64 = 0) {
        self.revision = revision
        self.settings = settings
        self.settingsVersion = settingsVersion
        self.generation = generation
    }

    /// Whether this reading is at least as recent as `other`: a later generation is; within one,
    /// revisions and settings versions only grow, so an older reading is behind in one of them.
    public func isAtLeastAsRecent(as other: DeliveryState) -> Bool {
        guard generation == other.generation else { return generation > other.generation }
        return (revision ?? 0) >= (other.revision ?? 0) && settingsVersion >= other.settingsVersion
    }
}

extension Access {
    /// Every environment's current revision and delivery settings, in one query: a server
    /// polls it to notice what other processes (the command line) changed in the file.
    public func deliveryStates() async throws -> [EnvironmentPath: DeliveryState] {
        try await read { db in try db.environments.deliveryStates() }
    }

    /// One environment's current revision and delivery settings.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func deliveryState(of path: EnvironmentPath) async throws -> DeliveryState {
        try await read { db in
            let head = try db.environments.head(of: path)
            let (settings, version) = try db.environments.deliverySettings(in: head.scope)
            return DeliveryState(
                revision: head.revision, settings: settings, settingsVersion: version, generation: head.generation)
        }
    }

    /// Changes how the environment's shared document is served, reading and writing in one
    /// transaction so concurrent changes of different fields both land. Takes effect on the next
    /// request to a server on the same file (within its poll interval for another process).
    ///
    /// - throws: `DeliveryError.invalidCacheControl`, `TenancyError.environmentNotFound`.
    @discardableResult
    public func updateDelivery(
        of path: EnvironmentPath, _ change: @escaping @Sendable (inout DeliverySettings) -> Void
    ) async throws -> DeliverySettings {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            var settings = try db.environments.deliverySettings(in: scope).settings
            change(&settings)
            if let value = settings.cacheControl {
                // It goes into a response header verbatim.
                guard (1...256).contains(value.utf8.count), value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw DeliveryError.invalidCacheControl(value)
                }
                // A shared cache may keep a `public` answer to a request with a key and hand it to anyone.
                let lowercased = value.lowercased()
                guard !settings.isPrivate || !(lowercased.contains("public") || lowercased.contains("s-maxage")) else {
                    throw DeliveryError.publicCacheControlOnPrivate(value)
                }
            }
            try db.environments.updateDeliverySettings(settings, in: scope)
            return settings
        }
    }
}
