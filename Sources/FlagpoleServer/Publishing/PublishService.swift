import FlagpolePublish
import FlagpoleStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// What `serve --publish-to` publishes, and how soon after a change.
public struct ServerPublishing: Sendable {
    public var settings: PublishSettings
    public var scope: PublishScope
    /// How long to wait after a change for more before publishing: a burst of writes (an import
    /// then a bias change) becomes one publish.
    public var delay: Duration

    public init(settings: PublishSettings, scope: PublishScope, delay: Duration = .seconds(1)) {
        self.settings = settings
        self.scope = scope
        self.delay = delay
    }
}

/// Publishes the server's environments to a bucket: all of them when it starts, then those
/// with a new revision (or new delivery settings), as the change streams hear of them, a burst
/// at a time. A failed publish is tried again, with a longer wait each time, until one succeeds;
/// every attempt goes to the publish log.
struct PublishService: Service {
    let publishing: ServerPublishing
    let store: FeatureStore
    let changes: AsyncStream<EnvironmentPath>
    let logger: Logger

    /// The wait after a failure doubles from this…
    static let firstRetry: Duration = .seconds(5)
    /// …up to this.
    static let longestRetry: Duration = .seconds(300)

    func run() async throws {
        let publisher = Publisher(settings: publishing.settings, logger: logger)
        await cancelWhenGracefulShutdown {
            await publishEveryChange(with: publisher)
        }
        try? await publisher.shutdown()
    }

    private func publishEveryChange(with publisher: Publisher) async {
        let pending = PendingEnvironments()
        let (bell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await path in changes {
                    pending.add(path)
                    ring.yield()
                }
                ring.finish()
            }
            var bells = bell.makeAsyncIterator()
            var retry = Self.firstRetry
            while !Task.isCancelled {
                if pending.isEmpty {
                    guard await bells.next() != nil else { break }
                }
                // Let the burst settle: what comes meanwhile joins this publish.
                try? await Task.sleep(for: publishing.delay)
                guard !Task.isCancelled else { break }
                var scope = publishing.scope
                scope.only = pending.take()
                // Two instances on one PostgreSQL database take turns: the second finds the
                // bucket up to date, or publishes what came after.
                let report: PublishReport
                do {
                    report = try await store.withLease("publish \(publishing.settings.target)") {
                        await publisher.publish(from: store, scope: scope)
                    }
                } catch {
                    pending.add(scope.only)
                    logger.error(
                        "Could not take the publishing lease; trying again in \(retry)", metadata: ["error": "\(error)"]
                    )
                    try? await Task.sleep(for: retry)
                    retry = min(retry * 2, Self.longestRetry)
                    continue
                }
                if let error = report.error {
                    pending.add(scope.only)
                    logger.error(
                        "Publishing to \(publishing.settings.target) failed; trying again in \(retry)",
                        metadata: ["error": "\(error)", "written": "\(report.written.count)"])
                    try? await Task.sleep(for: retry)
                    retry = min(retry * 2, Self.longestRetry)
                    continue
                }
                retry = Self.firstRetry
                if report.outcome == .published {
                    logger.info(
                        "Published to \(publishing.settings.target)",
                        metadata: ["environments": "\(report.revisions.count)", "objects": "\(report.written.count)"])
                }
            }
            group.cancelAll()
        }
    }
}

/// The environments waiting to be published; `nil` stands for all of them (at start).
private final class PendingEnvironments: Sendable {
    private let paths = Mutex<Set<EnvironmentPath>?>(nil)

    var isEmpty: Bool { paths.withLock { $0?.isEmpty ?? false } }

    func add(_ path: EnvironmentPath) {
        paths.withLock { _ = $0?.insert(path) }
    }

    /// Adds back what a failed publish covered.
    func add(_ failed: Set<EnvironmentPath>?) {
        paths.withLock { paths in
            guard let failed else {
                paths = nil
                return
            }
            paths?.formUnion(failed)
        }
    }

    /// What is pending, leaving nothing.
    func take() -> Set<EnvironmentPath>? {
        paths.withLock { paths in
            defer { paths = [] }
            return paths
        }
    }
}
