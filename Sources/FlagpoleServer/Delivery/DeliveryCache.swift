import FlagpolePublish
import FlagpoleStore
import HTTPTypes
import NIOCore
import Synchronization

/// A revision's document, ready to send: identity and gzip bodies with their ETags.
struct RenderedDocument: Sendable {
    let revision: Int
    let body: ByteBuffer
    /// `nil` for a document made for one answer to a client that does not take gzip, or in the
    /// unlikely case that compressing failed: the identity body is then sent to everyone.
    let gzipBody: ByteBuffer?
    /// Strong ETags differ between encodings (RFC 9110 §8.8.3); both name the same revision.
    let etag: String
    let gzipETag: String
    /// The hex SHA-256 of the identity body.
    let sha256: String

    /// `includesGzip: false` saves compressing a document sent once (a user's own) to a client
    /// that does not take gzip.
    init(revision: Int, bytes: [UInt8], includesGzip: Bool = true) {
        let artifact = DeliveryArtifact(bytes: bytes)
        self.revision = revision
        body = ByteBuffer(bytes: bytes)
        gzipBody = includesGzip ? (try? artifact.gzipped()).map { ByteBuffer(bytes: $0) } : nil
        etag = artifact.etag
        sha256 = artifact.sha256
        gzipETag = "\"\(artifact.sha256.prefix(32))-gzip\""
    }

    /// Whether an `If-None-Match` value names this document (weak comparison, as for GET).
    func matches(_ ifNoneMatch: String) -> Bool {
        // The usual case, a cache sending back the one tag it holds, without parsing.
        if ifNoneMatch == etag || ifNoneMatch == gzipETag { return true }
        if ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*" { return true }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag || tag == gzipETag
        }
    }
}

/// The documents delivered at `/t/{tenant}/{env}/…`.
enum DeliveredDocument: String, Hashable, Sendable {
    /// `features.json`, for the FeatureFlags library.
    case features = "features.json"
    /// `configs.json`, SwiftFeatureConfigs' in-memory dictionary.
    case configs = "configs.json"
}

/// Rendered documents and each environment's current revision, shared by every request.
///
/// A revision's bytes never change, so documents are cached by (environment, revision) and
/// never invalidated, only evicted. What goes stale is which revision is current and the
/// environment's delivery settings: writes through the API refresh them at once, and
/// `DeliveryPoller` refreshes them for writes by other processes.
final class DeliveryCache: Sendable {
    struct Key: Hashable {
        let path: EnvironmentPath
        let revision: Int
        var kind: DeliveredDocument = .features
    }

    private struct State {
        var current: [EnvironmentPath: DeliveryState] = [:]
        var documents: [Key: RenderedDocument] = [:]
        /// The store generation of what is held.
        var generation: Int64 = 0

        /// Keeps `reading` unless the state held is more recent: reads that finish out of
        /// order (a poll and a refresh after a write) never take delivery back in time. A reading
        /// of a later generation (a restore) drops everything held: its revisions may be older,
        /// or hold other documents under the same numbers. Returns what the reading changes:
        /// the revision (or the generation), only the delivery settings, or nothing.
        mutating func merge(_ reading: DeliveryState, of path: EnvironmentPath) -> ChangeBroadcaster.Change? {
            if reading.generation < generation { return nil }
            if reading.generation > generation {
                self = State(generation: reading.generation)
            }
            let held = current[path]
            if let held, !reading.isAtLeastAsRecent(as: held) { return nil }
            current[path] = reading
            if held?.revision != reading.revision || held?.generation != reading.generation { return .revision }
            return held?.settingsVersion != reading.settingsVersion ? .settings : nil
        }
    }

    private let state = Mutex(State())
    /// Past revisions kept beside the current ones; current documents are never evicted.
    let pastRevisionLimit: Int
    /// Told of every new revision the cache takes, for the change streams.
    let changes: ChangeBroadcaster

    init(pastRevisionLimit: Int = 64, changes: ChangeBroadcaster = ChangeBroadcaster()) {
        self.pastRevisionLimit = pastRevisionLimit
        self.changes = changes
    }

    func current(_ path: EnvironmentPath) -> DeliveryState? {
        state.withLock { $0.current[path] }
    }

    func document(_ key: Key) -> RenderedDocument? {
        state.withLock { $0.documents[key] }
    }

    /// The environment's state and its current revision's document of `kind` if rendered, in one lookup.
    func currentDocument(
        _ path: EnvironmentPath, _ kind: DeliveredDocument = .features
    ) -> (
        DeliveryState, RenderedDocument?
    )? {
        state.withLock { state in
            guard let current = state.current[path] else { return nil }
            return (current, current.revision.flatMap { state.documents[Key(path: path, revision: $0, kind: kind)] })
        }
    }

    /// Takes a reading of one environment's state, unless a more recent one is held.
    func setCurrent(_ delivery: DeliveryState, of path: EnvironmentPath) {
        if let change = state.withLock({ $0.merge(delivery, of: path) }) {
            changes.notice(change, delivery, of: path)
        }
    }

    /// Reads `path`'s state after a write, so its deliveries serve the new revision at once.
    /// The write has committed: if this read fails, the poller catches up within its
    /// interval, and the writer still hears that the write succeeded.
    func refresh(_ path: EnvironmentPath, from store: FeatureStore) async {
        if let state = try? await store.access.deliveryState(of: path) { setCurrent(state, of: path) }
    }

    /// Takes a reading of every environment's state, keeping any more recent one held.
    func setCurrent(_ states: [EnvironmentPath: DeliveryState]) {
        let changed = state.withLock { state in
            states.compactMap { path, reading in state.merge(reading, of: path).map { (path, reading, $0) } }
        }
        for (path, reading, change) in changed { changes.notice(change, reading, of: path) }
    }

    /// Keeps `document` of `generation`, unless a restore has made that generation stale.
    func insert(_ document: RenderedDocument, for key: Key, generation: Int64) {
        state.withLock { state in
            guard generation == state.generation else { return }
            state.documents[key] = document
            // Evict the oldest past revisions beyond the limit; the current ones stay.
            let past = state.documents.keys.filter { state.current[$0.path]?.revision != $0.revision }
            guard past.count > pastRevisionLimit else { return }
            for key in past.sorted(by: { $0.revision < $1.revision }).prefix(past.count - pastRevisionLimit) {
                state.documents[key] = nil
            }
        }
    }
}
