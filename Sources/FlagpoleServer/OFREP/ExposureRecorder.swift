import FlagpoleCore
import FlagpoleStore
import Foundation
import Logging

/// A single OFREP evaluation of a test is its exposure: the app asks for one flag when it is
/// about to use it (the bulk evaluation, fetched ahead, is not). Exposures are collected off the
/// request path and written in one transaction per environment every `interval`, so an
/// evaluation never waits for a write.
actor ExposureRecorder {
    private let store: FeatureStore
    private let logger: Logger
    private var pending: [EnvironmentPath: [String: (user: UserID, feature: String, time: Date)]] = [:]
    private var count = 0
    private var isScheduled = false

    static let interval = Duration.milliseconds(200)
    /// Beyond this many waiting, exposures are dropped (and counted in the log) rather than
    /// letting memory grow while the database is slow.
    static let limit = 100_000

    init(store: FeatureStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Notes that `user` was shown `flag` (when it is a test); repeated notes are one.
    func note(_ flag: FlagEvaluation, user: UserID?, in path: EnvironmentPath) {
        guard let user, FeatureKind(rawValue: flag.kind)?.isTest == true else { return }
        guard count < Self.limit else {
            logger.warning("Exposure dropped: too many waiting to be written", metadata: ["path": "\(path)"])
            return
        }
        let key = flag.key + "\u{0}" + user.rawValue
        guard pending[path]?[key] == nil else { return }
        pending[path, default: [:]][key] = (user, flag.key, Date())
        count += 1
        if !isScheduled {
            isScheduled = true
            Task { await self.flushAfterInterval() }
        }
    }

    private func flushAfterInterval() async {
        try? await Task.sleep(for: Self.interval)
        let batch = pending
        pending = [:]
        count = 0
        isScheduled = false
        for (path, exposures) in batch {
            do {
                try await store.experiments.recordExposures(Array(exposures.values), in: path)
            } catch {
                logger.error("Exposures not written", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
    }
}
