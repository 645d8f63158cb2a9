import FlagpoleCore

/// Which kind of client fetched a revision of an environment.
public enum FetchClient: String, CaseIterable, Sendable, Codable {
    /// features.json or configs.json without a user: CDNs and apps reading the shared document.
    case shared
    /// A user's own features.json (`?user=`).
    case pinned
    /// A user's own configs.json (`?user=`).
    case configs
    /// An OpenFeature provider's evaluation (OFREP).
    case ofrep
    /// A Bucketeer SDK's `get_evaluations` poll.
    case bucketeer
}

/// One revision of one environment, as fetched by one kind of client: what a server counts.
public struct FetchKey: Hashable, Sendable {
    public var path: EnvironmentPath
    public var revision: Int
    public var client: FetchClient

    public init(path: EnvironmentPath, revision: Int, client: FetchClient) {
        self.path = path
        self.revision = revision
        self.client = client
    }
}

/// How many times clients fetched a span of revisions, by kind of client.
public struct FetchCounts: Hashable, Sendable, Codable {
    public var byClient: [FetchClient: Int]

    public init(byClient: [FetchClient: Int] = [:]) {
        self.byClient = byClient
    }

    public var total: Int { byClient.values.reduce(0, +) }

    /// "1 204 fetches (shared 1 000, pinned 200, ofrep 4)", or "no fetch yet".
    public var description: String {
        guard total > 0 else { return "no fetch yet" }
        let parts = FetchClient.allCases.compactMap { client in
            byClient[client].flatMap { $0 > 0 ? "\(client.rawValue) \($0)" : nil }
        }
        return "\(total) \(total == 1 ? "fetch" : "fetches") (\(parts.joined(separator: ", ")))"
    }
}
