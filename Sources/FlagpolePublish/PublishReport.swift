import FlagpoleCore
import FlagpoleStore
import Foundation

/// What a publish did, object by object: what `--dry-run` prints, what a failed run names as
/// written, and what goes to the publish log.
public struct PublishReport: Sendable {
    public struct Item: Sendable {
        public var object: PublishedObject
        /// The object's key in the bucket, prefix included.
        public var key: String
        /// Why it is (or would be) sent; `nil`: the bucket already holds these bytes.
        public var reason: String?
    }

    public var target: S3Target
    /// The endpoint's origin (`https://s3.eu-west-1.amazonaws.com`); empty when it could not be resolved.
    public var endpoint = ""
    public var dryRun: Bool
    /// The revision of each environment covered.
    public var revisions: [EnvironmentPath: Int] = [:]
    /// Every object of the environments covered, in the order they are sent.
    public var items: [Item] = []
    /// Private environments left out because they were not named.
    public var skippedPrivate: [EnvironmentPath] = []
    /// The keys written, in order, the manifest (written before and after the documents) included.
    public var written: [String] = []
    /// Whether the manifest differs from the bucket's: it is, or would be, written.
    public var manifestPending = false
    /// Whether the run got to its end, manifest included.
    public var manifestWritten = false
    /// Requests sent, by method, retries included.
    public var requests: [String: Int] = [:]
    public var error: PublishError?
    /// Environments whose purge hook was sent: `nil` when it was taken, else why not.
    public var purges: [EnvironmentPath: String?] = [:]
    public var startedAt: Date
    public var finishedAt: Date

    init(target: S3Target, dryRun: Bool, startedAt: Date) {
        self.target = target
        self.dryRun = dryRun
        self.startedAt = startedAt
        finishedAt = startedAt
    }

    public var outcome: PublishOutcome {
        error != nil ? .failed : written.isEmpty ? .unchanged : .published
    }

    /// The objects (not the manifest) written for `path`.
    public func written(for path: EnvironmentPath) -> Int {
        let keys = Set(written)
        return items.filter { $0.object.environment == path && keys.contains($0.key) }.count
    }

    /// One entry per environment covered.
    /// The target as the publish log names it: with the endpoint when it is not AWS's own (a
    /// MinIO, R2 or local S3), so two buckets of one name at two endpoints stay apart.
    public var loggedTarget: String {
        let isAWS = endpoint.isEmpty || endpoint.hasSuffix(".amazonaws.com") || endpoint.contains(".amazonaws.com:")
        return isAWS ? target.description : "\(target.description) at \(endpoint)"
    }

    public var logEntries: [PublishLogEntry] {
        revisions.keys.sorted { $0.description < $1.description }.map { path in
            let count = written(for: path)
            let purge = purges[path]
            return PublishLogEntry(
                target: loggedTarget, environment: path, revision: revisions[path]!,
                outcome: error != nil ? .failed : count == 0 ? .unchanged : .published, objectsWritten: count,
                error: error?.description, purge: purge.map { $0 == nil ? .sent : .failed }, purgeError: purge ?? nil,
                startedAt: startedAt, finishedAt: finishedAt)
        }
    }
}
