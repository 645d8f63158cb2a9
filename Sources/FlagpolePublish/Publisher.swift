import AsyncHTTPClient
import FlagpoleCore
import FlagpoleStore
import Foundation
import Logging
import NIOCore

/// Where and how to publish.
public struct PublishSettings: Sendable {
    public var target: S3Target
    /// `--endpoint`, `--region` and `--profile`; what is `nil` is read as the AWS tools read it.
    public var endpoint: String?
    public var region: String?
    public var profile: String?
    public var addressing: S3Addressing = .auto
    /// Requests in flight at once.
    public var concurrency = 16
    public var retries = RetryPolicy.standard
    /// `x-amz-acl: public-read` on the objects of public environments (never on private ones).
    public var publicRead = false
    /// `Cache-Control` of current documents whose environment sets none.
    public var defaultCacheControl = CacheControl.standard
    public var purge: PurgeHook?

    public init(target: S3Target) {
        self.target = target
    }
}

/// Which environments a publish covers.
public struct PublishScope: Sendable, Hashable {
    /// `nil`: every tenant.
    public var tenant: TenantSlug?
    /// `nil`: every environment of the tenant (or tenants).
    public var environment: EnvironmentName?
    /// The private environments to publish too; any other private one is skipped.
    public var includePrivate: Set<EnvironmentPath>
    /// Only these environments, when not `nil` (the server publishes those that changed).
    public var only: Set<EnvironmentPath>?

    public init(
        tenant: TenantSlug? = nil, environment: EnvironmentName? = nil, includePrivate: Set<EnvironmentPath> = []
    ) {
        self.tenant = tenant
        self.environment = environment
        self.includePrivate = includePrivate
    }

    func covers(_ path: EnvironmentPath) -> Bool {
        (tenant == nil || tenant == path.tenant) && (environment == nil || environment == path.environment)
            && (only?.contains(path) ?? true)
    }
}

/// Puts environments' documents in an S3-compatible bucket so that no reader ever sees a
/// manifest ahead of the objects: a run writes the revisions' immutable copies, then the
/// current documents, then `manifest.json` last; objects whose bytes the bucket already holds
/// (by the manifest's SHA-256) are not sent again.
///
/// A run that fails (after the retries) writes no manifest. If the current documents were
/// about to replace ones the old manifest names, that manifest was first rewritten without
/// them, so it never names an object holding other bytes; the next run completes the publish.
public final class Publisher: Sendable {
    public let settings: PublishSettings
    /// The client this publisher made, and so shuts down; `nil` with a transport of the caller's.
    private let http: HTTPClient?
    /// Where requests to the bucket and the purge hook go: `http`, or a test's fake.
    private let transport: any HTTPTransport
    private let logger: Logger

    public init(settings: PublishSettings, logger: Logger = Logger(label: "flagpole.publish")) {
        self.settings = settings
        self.logger = logger
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, settings.concurrency))
        // Failed connections are retried by the publisher, with its backoff, and counted.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        configuration.decompression = .disabled
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.http = http
        transport = http
    }

    /// A publisher whose requests go to `transport`: for tests, which answer them in the process.
    init(settings: PublishSettings, transport: any HTTPTransport, logger: Logger = Logger(label: "flagpole.publish")) {
        self.settings = settings
        self.logger = logger
        http = nil
        self.transport = transport
    }

    public func shutdown() async throws {
        try await http?.shutdown()
    }

    /// Publishes the current revision of every environment in `scope`, and adds the outcome to
    /// the store's publish log (unless `dryRun`). `environment` is where AWS settings are read
    /// (tests pass their own, so that the machine's ~/.aws never matters).
    public func publish(
        from store: FeatureStore, scope: PublishScope, dryRun: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> PublishReport {
        let started = Date()
        let revisions: [PublishedRevision]
        do {
            revisions = try await store.catalog.publishedRevisions(of: scope.only).filter { scope.covers($0.path) }
        } catch {
            var report = PublishReport(target: settings.target, dryRun: dryRun, startedAt: started)
            report.error = .database("\(error)")
            return report
        }
        var chosen: [PublishedRevision] = []
        var skipped: [EnvironmentPath] = []
        for revision in revisions {
            if revision.settings.isPrivate && !scope.includePrivate.contains(revision.path) {
                skipped.append(revision.path)
            } else {
                chosen.append(revision)
            }
        }
        // A run that failed at the same revision may have landed its copies: those are asked for
        // first (HEAD), not sent again to be answered 412.
        let failedBefore = Set(
            ((try? await store.outbound.publishStatus(target: settings.target.description)) ?? []).filter { status in
                status.last.outcome == .failed
                    && chosen.contains { $0.path == status.last.environment && $0.number == status.last.revision }
            }.map(\.last.environment))
        var report = await publish(chosen, dryRun: dryRun, resuming: failedBefore, environment: environment)
        report.skippedPrivate = skipped
        if !dryRun {
            do {
                try await store.outbound.recordPublishes(report.logEntries)
            } catch {
                logger.error("Published to \(settings.target) but could not add it to the publish log: \(error)")
            }
        }
        return report
    }

    /// Publishes `revisions`; with `dryRun`, only says what would be written and why. The copies
    /// of the environments in `resuming` (whose last run at the same revision failed, and may have
    /// landed some) are asked for before they are sent.
    public func publish(
        _ revisions: [PublishedRevision], dryRun: Bool = false, resuming: Set<EnvironmentPath> = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> PublishReport {
        var report = PublishReport(target: settings.target, dryRun: dryRun, startedAt: Date())
        report.revisions = Dictionary(revisions.map { ($0.path, $0.number) }, uniquingKeysWith: { $1 })
        do {
            let configuration = try AWSConfiguration.resolve(
                profile: settings.profile, region: settings.region, endpoint: settings.endpoint,
                environment: environment)
            let client = try S3Client(
                target: settings.target, configuration: configuration, addressing: settings.addressing,
                transport: transport, retries: settings.retries)
            report.endpoint = client.endpoint.origin
            defer { report.requests = client.requestCounts }
            try await run(revisions, with: client, dryRun: dryRun, resuming: resuming, into: &report)
        } catch {
            report.error = error
        }
        report.finishedAt = Date()
        return report
    }

    private func run(
        _ revisions: [PublishedRevision], with client: S3Client, dryRun: Bool, resuming: Set<EnvironmentPath>,
        into report: inout PublishReport
    ) async throws(PublishError) {
        let manifestKey = settings.target.key(Manifest.name)
        let previous = try await client.get(manifestKey).map { bytes throws(PublishError) in
            try Manifest(parsing: bytes)
        }
        var objects: [PublishedObject] = []
        for revision in revisions {
            do {
                objects += try PublishedObject.objects(of: revision, defaultCacheControl: settings.defaultCacheControl)
            } catch {
                throw .badTarget("Cannot compress the features.json of \(revision.path): \(error)")
            }
        }
        var next = previous ?? Manifest()
        // Each environment published names its latest revision's copies only: older copies stay
        // in the bucket (nothing is deleted) but leave the manifest, so an expiry rule on
        // `revisions/` never removes an object the manifest names.
        let latest = Dictionary(revisions.map { ($0.path, $0.number) }, uniquingKeysWith: max)
        next.entries = next.entries.filter { _, entry in
            guard let number = latest[entry.environment], entry.path.contains("/revisions/") else { return true }
            return entry.revision == number
        }
        for object in objects { next.entries[object.key] = object.entry }

        // What to send, and why.
        var toSend: [PublishedObject] = []
        for object in objects {
            let known = previous?.entries[object.key]
            let reason: String? =
                if previous == nil { "the bucket has no manifest yet" } else if known == nil {
                    object.isImmutable ? "new revision" : "new environment"
                } else if known!.sha256 != object.sha256 {
                    "changed (revision \(known!.revision) → \(object.revision))"
                } else if known!.cacheControl != object.cacheControl {
                    "Cache-Control changed"
                } else { nil }
            report.items.append(
                PublishReport.Item(object: object, key: settings.target.key(object.key), reason: reason))
            if reason != nil { toSend.append(object) }
        }
        let manifestChanges = previous?.bytes != next.bytes
        report.manifestPending = manifestChanges
        guard !dryRun else { return }

        // 1. The revisions' copies, each only where no object has its key: a copy is never replaced.
        let (immutable, current) = (toSend.filter(\.isImmutable), toSend.filter { !$0.isImmutable })
        try await forEach(immutable, writing: &report.written) { object, key throws(PublishError) in
            if resuming.contains(object.environment), let found = try await client.head(key) {
                guard found.first(name: "x-amz-meta-sha256") == object.sha256 else {
                    throw .immutableConflict(key: key, target: "s3://\(self.settings.target.bucket)")
                }
                return false
            }
            if try await client.put(key, bytes: object.bytes, headers: self.headers(of: object), ifAbsent: true) {
                return true
            }
            guard let found = try await client.head(key) else {
                // 412 said an object has the key, then 404 that none has: a bucket whose reads
                // lag its writes, or another writer deleting. Nothing says the bytes differ.
                throw .unsettled(key: key, target: "s3://\(self.settings.target.bucket)")
            }
            guard found.first(name: "x-amz-meta-sha256") == object.sha256 else {
                throw .immutableConflict(key: key, target: "s3://\(self.settings.target.bucket)")
            }
            return false
        }
        // 2. A manifest that no longer names the current documents about to be replaced.
        if let previous, current.contains(where: { previous.entries[$0.key] != nil }) {
            var interim = previous
            for object in current { interim.entries[object.key] = nil }
            _ = try await client.put(manifestKey, bytes: interim.bytes, headers: manifestHeaders)
            report.written.append(manifestKey)
        }
        // 3. The current documents.
        try await forEach(current, writing: &report.written) { object, key throws(PublishError) in
            try await client.put(key, bytes: object.bytes, headers: self.headers(of: object))
        }
        // 4. The manifest, last.
        if manifestChanges || report.written.last == manifestKey {
            _ = try await client.put(manifestKey, bytes: next.bytes, headers: manifestHeaders)
            report.written.append(manifestKey)
        }
        report.manifestWritten = true
        if let purge = settings.purge { await sendPurges(purge, for: current, with: client, into: &report) }
    }

    /// One hook per environment whose current documents changed.
    private func sendPurges(
        _ purge: PurgeHook, for current: [PublishedObject], with client: S3Client, into report: inout PublishReport
    ) async {
        let byEnvironment = Dictionary(grouping: current, by: \.environment)
        let time = Date()
        await withTaskGroup(of: (EnvironmentPath, String?).self) { group in
            for (path, objects) in byEnvironment {
                let urls = objects.map { object in
                    let key = settings.target.key(object.key)
                    return purge.publicBaseURL.map { "\($0)/\(SigV4Signer.encodePath(key))" }
                        ?? client.endpoint.url(
                            bucket: settings.target.bucket,
                            path: client.endpoint.path(bucket: settings.target.bucket, key: key))
                }
                let body = PurgeHook.body(
                    for: path, revision: objects[0].revision, urls: urls.sorted(), target: settings.target, at: time)
                group.addTask { (path, await purge.send(body, with: self.transport)) }
            }
            for await (path, failure) in group { report.purges[path] = failure }
        }
    }

    private func headers(of object: PublishedObject) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", PublishedObject.contentType), ("Cache-Control", object.cacheControl),
            ("x-amz-meta-sha256", object.sha256), ("x-amz-checksum-sha256", Self.base64(hex: object.sha256)),
        ]
        if let encoding = object.contentEncoding { headers.append(("Content-Encoding", encoding)) }
        // A private environment's objects never get a public ACL, whatever the settings say.
        if settings.publicRead, !object.isPrivate { headers.append(("x-amz-acl", "public-read")) }
        return headers
    }

    /// The manifest is read to know what the bucket holds: caches must always revalidate it.
    private var manifestHeaders: [(name: String, value: String)] {
        [("Content-Type", PublishedObject.contentType), ("Cache-Control", "no-cache")]
    }

    /// Runs `write` on every object, `settings.concurrency` at a time, adding to `written` the
    /// keys of those it says it wrote. After the first failure no new write starts; the writes in
    /// flight finish, then the failure is thrown.
    private func forEach(
        _ objects: [PublishedObject], writing written: inout [String],
        _ write: @escaping @Sendable (PublishedObject, String) async throws(PublishError) -> Bool
    ) async throws(PublishError) {
        let target = settings.target
        let failure: PublishError? = await withTaskGroup(of: Result<String?, PublishError>.self) { group in
            var pending = objects.makeIterator()
            var failure: PublishError?
            func startNext() {
                guard failure == nil, let object = pending.next() else { return }
                group.addTask {
                    let key = target.key(object.key)
                    do throws(PublishError) { return .success(try await write(object, key) ? key : nil) } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<max(1, settings.concurrency) { startNext() }
            while let result = await group.next() {
                switch result {
                case .success(let key): if let key { written.append(key) }
                case .failure(let error): if failure == nil { failure = error }
                }
                startNext()
            }
            return failure
        }
        if let failure { throw failure }
    }

    static func base64(hex: String) -> String {
        Data(Hex.decode(hex) ?? []).base64EncodedString()
    }
}
