import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// One event of a change stream: a revision, as OFREP's `refetchEvaluation` with Flagpole's own
/// fields beside it.
struct ChangeEvent: Sendable {
    let generation: Int64
    let change: RevisionChange

    /// The flag configuration's ETag for OFREP (`flagConfigEtag`): the store generation and the
    /// revision. It is also the event's id, which `Last-Event-ID` resumes from.
    static func etag(generation: Int64, revision: Int) -> String { "\(generation).\(revision)" }

    static func etag(of state: DeliveryState) -> String {
        etag(generation: state.generation, revision: state.revision ?? 0)
    }

    /// `id`, `event: message` and `data` as Server-Sent Events write them.
    var bytes: ByteBuffer {
        let etag = Self.etag(generation: generation, revision: change.revision)
        let data: JSONValue = [
            "type": .string("refetchEvaluation"),
            "etag": .string(etag),
            "lastModified": .number(change.createdAt.timeIntervalSince1970.rounded(.down)),
            "revision": .number(Double(change.revision)),
            "featuresETag": .string(DeliveryArtifact(bytes: change.features).etag),
            "configsETag": .string(DeliveryArtifact(bytes: change.configs).etag),
        ]
        let text = "id: \(etag)\nevent: message\ndata: \(JSONWriter(style: .compact).string(of: data))\n\n"
        return ByteBuffer(string: text)
    }
}

/// Hands each environment's new revisions to the streams open on it, in order: one read of the
/// store per change, whatever the number of streams.
///
/// `DeliveryCache` tells it of every new state it takes (after a write through this server at
/// once, after another process's write at the next poll). A heartbeat comment goes to every
/// stream every `heartbeat`, so that proxies keep idle connections open and dead ones are found.
final class ChangeBroadcaster: Sendable {
    enum Message: Sendable {
        /// The events of revisions `first` to `last` of `generation`.
        case events(ByteBuffer, first: Int, last: Int, generation: Int64)
        case heartbeat
    }

    private struct Streams {
        var byPath: [EnvironmentPath: [UInt64: AsyncStream<Message>.Continuation]] = [:]
        /// Those told of every environment's changes (the publisher), not of their events.
        var watchers: [AsyncStream<EnvironmentPath>.Continuation] = []
        var nextID: UInt64 = 0
        /// What each environment's streams were last told.
        var announced: [EnvironmentPath: (generation: Int64, revision: Int)] = [:]
    }

    private let streams = Mutex(Streams())
    private let notices: AsyncStream<(EnvironmentPath, DeliveryState)>.Continuation
    private let noticeStream: AsyncStream<(EnvironmentPath, DeliveryState)>
    let heartbeat: Duration

    init(heartbeat: Duration = .seconds(15)) {
        (noticeStream, notices) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        self.heartbeat = heartbeat
    }

    /// How many streams are open.
    var count: Int { streams.withLock { $0.byPath.values.reduce(0) { $0 + $1.count } } }

    /// What a new reading of an environment changed.
    enum Change: Sendable {
        /// A new revision (or a restore's new generation): streams and watchers hear of it.
        case revision
        /// Only the delivery settings (`Cache-Control`, private): watchers alone hear of it,
        /// since it changes no evaluation.
        case settings
    }

    /// `path` is now at `state`: after a new revision its streams hear of every revision since
    /// the last they heard of; watchers hear of any change.
    func notice(_ change: Change, _ state: DeliveryState, of path: EnvironmentPath) {
        if case .revision = change { notices.yield((path, state)) }
        for watcher in streams.withLock({ $0.watchers }) { watcher.yield(path) }
    }

    /// Every environment that has a new revision or new delivery settings from now on, until
    /// the broadcaster stops.
    func watch() -> AsyncStream<EnvironmentPath> {
        let (stream, continuation) = AsyncStream.makeStream(of: EnvironmentPath.self, bufferingPolicy: .unbounded)
        streams.withLock { $0.watchers.append(continuation) }
        return stream
    }

    /// Opens a stream on `path`; it ends when the returned stream is dropped or finished.
    func subscribe(_ path: EnvironmentPath) -> (AsyncStream<Message>, AsyncStream<Message>.Continuation) {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .unbounded)
        let id = streams.withLock { streams in
            streams.nextID += 1
            streams.byPath[path, default: [:]][streams.nextID] = continuation
            return streams.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.streams.withLock { streams in
                streams.byPath[path]?[id] = nil
                if streams.byPath[path]?.isEmpty == true { streams.byPath[path] = nil }
            }
        }
        return (stream, continuation)
    }

    /// Turns notices into events, one at a time so every stream hears revisions in order, and
    /// beats the heart; until the task is cancelled, when every stream ends (a server shutting
    /// down waits for its open responses).
    func run(store: FeatureStore, logger: Logger) async {
        defer {
            let open = streams.withLock { $0.byPath.values.flatMap(\.values) }
            for continuation in open { continuation.finish() }
            for watcher in streams.withLock({ $0.watchers }) { watcher.finish() }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.heartbeat)
                    self.broadcast(.heartbeat)
                }
            }
            group.addTask {
                for await (path, state) in self.noticeStream {
                    await self.announce(state, of: path, store: store, logger: logger)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func announce(_ state: DeliveryState, of path: EnvironmentPath, store: FeatureStore, logger: Logger) async {
        guard let revision = state.revision else { return }
        // The revisions since the last announced, or only the current one after a restore
        // (numbers may then name other revisions) or on a first notice; `nil`: nothing to say.
        let after: Int? = streams.withLock { streams in
            let previous = streams.announced[path]
            if let previous, previous.generation == state.generation, previous.revision >= revision { return nil }
            streams.announced[path] = (state.generation, revision)
            guard streams.byPath[path]?.isEmpty == false else { return nil }
            guard let previous, previous.generation == state.generation else { return revision - 1 }
            return previous.revision
        }
        guard let after else { return }
        do {
            let events = try await ChangeStreamRoutes.events(
                in: path, after: after, generation: state.generation, store: store)
            guard let first = events.first, let last = events.last else { return }
            var buffer = ByteBuffer()
            for event in events { buffer.writeImmutableBuffer(event.bytes) }
            broadcast(
                .events(buffer, first: first.change.revision, last: last.change.revision, generation: state.generation),
                to: path)
        } catch {
            logger.warning("Could not read the revisions of \(path) for its change streams: \(error)")
        }
    }

    private func broadcast(_ message: Message, to path: EnvironmentPath? = nil) {
        let targets = streams.withLock { streams in
            path.map { Array(streams.byPath[$0, default: [:]].values) } ?? streams.byPath.values.flatMap(\.values)
        }
        for continuation in targets { continuation.yield(message) }
    }
}

/// `GET /t/{tenant}/{env}/changes`: the environment's change stream (Server-Sent Events), as
/// OFREP's event streams define it. A private environment's needs a key of its tenant or the
/// `?token=` a bulk evaluation advertises; `Last-Event-ID` resumes after the revision it names.
struct ChangeStreamRoutes {
    let delivery: DeliveryRoutes
    let tokens: StreamTokens
    let broadcaster: ChangeBroadcaster

    func register(on router: Router<FlagpoleRequestContext>) {
        router.group().delivery(DeliveryNeeds.Stream.self, of: delivery, tokens: tokens)
            .get("/t/:tenant/:env/changes", use: stream)
    }

    @Sendable private func stream(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Stream>
    ) async throws -> Response {
        let (path, state) = (context.path, context.state)
        let resumeAfter = request.headers[.lastEventID].flatMap(Self.revision(ofEventID:))
        // Subscribe before reading what was missed, so nothing falls between the two.
        let (messages, subscription) = broadcaster.subscribe(path)
        let store = delivery.store
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "retry: 3000\n: \(path) changes\n\n"))
                var last = (generation: state.generation, revision: state.revision ?? 0)
                if let resumeAfter {
                    // After a restore (another generation), only the current revision is certain.
                    let after = resumeAfter.generation == state.generation ? resumeAfter.revision : last.revision - 1
                    let missed = try await Self.events(
                        in: path, after: after, generation: state.generation, store: store)
                    if !missed.isEmpty {
                        var buffer = ByteBuffer()
                        for event in missed { buffer.writeImmutableBuffer(event.bytes) }
                        try await writer.write(buffer)
                        last.revision = missed.last!.change.revision
                    }
                }
                // A server shutting down waits for its open responses: end this one then.
                try await withGracefulShutdownHandler {
                    for await message in messages {
                        switch message {
                        case .heartbeat:
                            try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                        case .events(let buffer, let first, let lastRevision, let generation):
                            if generation != last.generation || first == last.revision + 1 {
                                try await writer.write(buffer)
                                last = (generation, lastRevision)
                            } else if lastRevision > last.revision {
                                // Revisions this stream has not had fall outside the events: read them.
                                let missed = try await Self.events(
                                    in: path, after: last.revision, generation: generation, store: store)
                                var buffer = ByteBuffer()
                                for event in missed { buffer.writeImmutableBuffer(event.bytes) }
                                try await writer.write(buffer)
                                last = (generation, missed.last?.change.revision ?? last.revision)
                            }
                        }
                    }
                } onGracefulShutdown: {
                    subscription.finish()
                }
                try await writer.finish(nil)
            })
    }

    /// The events of `path`'s revisions after `revision`.
    static func events(
        in path: EnvironmentPath, after revision: Int, generation: Int64, store: FeatureStore
    )
        async throws -> [ChangeEvent]
    {
        try await store.catalog.revisionChanges(in: path, after: revision).map {
            ChangeEvent(generation: generation, change: $0)
        }
    }

    /// The generation and revision of an event id (`ChangeEvent.etag`).
    static func revision(ofEventID id: String) -> (generation: Int64, revision: Int)? {
        let parts = id.trimmingCharacters(in: .whitespaces).split(separator: ".")
        guard parts.count == 2, let generation = Int64(parts[0]), let revision = Int(parts[1]) else { return nil }
        return (generation, revision)
    }
}

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
