import Foundation

/// How a publish of one environment ended.
public enum PublishOutcome: String, Sendable, Hashable {
    /// Objects were written and the manifest names them.
    case published
    /// The bucket already held every object: nothing was written.
    case unchanged
    case failed
}

/// What the CDN purge hook answered.
public enum PurgeOutcome: String, Sendable, Hashable {
    case sent, failed
}

/// One environment's part of one publish, as the publish log keeps it.
public struct PublishLogEntry: Sendable, Hashable {
    /// `s3://BUCKET[/PREFIX]`, with its endpoint when not AWS's.
    public var target: String
    public var environment: EnvironmentPath
    public var revision: Int
    public var outcome: PublishOutcome
    public var objectsWritten: Int
    /// Why it failed; never holds a secret.
    public var error: String?
    /// `nil` when no hook is configured or nothing changed.
    public var purge: PurgeOutcome?
    public var purgeError: String?
    public var startedAt: Date
    public var finishedAt: Date

    public init(
        target: String, environment: EnvironmentPath, revision: Int, outcome: PublishOutcome, objectsWritten: Int,
        error: String? = nil, purge: PurgeOutcome? = nil, purgeError: String? = nil, startedAt: Date, finishedAt: Date
    ) {
        self.target = target
        self.environment = environment
        self.revision = revision
        self.outcome = outcome
        self.objectsWritten = objectsWritten
        self.error = error
        self.purge = purge
        self.purgeError = purgeError
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
}

/// Where a target stands for one environment: its latest publish, the latest that succeeded,
/// and the environment's current revision.
public struct PublishStatus: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case upToDate
        /// The bucket holds an older revision (or none) and the last publish did not fail.
        case behind(revisions: Int)
        /// The latest publish failed.
        case failing(String)
    }

    public var last: PublishLogEntry
    /// `nil` when the environment has no revision any more (it was emptied by a restore).
    public var currentRevision: Int?
    /// The revision the latest successful publish left in the bucket; `nil` when none succeeded.
    public var publishedRevision: Int?
    public var publishedAt: Date?

    public var state: State {
        if last.outcome == .failed { return .failing(last.error ?? "failed") }
        guard let currentRevision, currentRevision != publishedRevision else { return .upToDate }
        return .behind(revisions: max(1, currentRevision - (publishedRevision ?? 0)))
    }
}
