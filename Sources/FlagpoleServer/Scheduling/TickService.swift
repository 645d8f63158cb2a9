import FlagpoleCore
import FlagpoleStore
import Foundation
import Logging
import ServiceLifecycle

/// What `serve --tick-interval` runs: every interval, the scheduled work that is due (ramp
/// steps, then pruning what is kept only for a while), as `flagpole tick` does once. With several servers on one PostgreSQL database one
/// ticks at a time, under a lease; a step is applied once whoever ticks, because its row's key
/// is written in the step's transaction.
struct TickService: Service {
    let store: FeatureStore
    let interval: Duration
    /// How long delivered and given-up webhook deliveries are kept.
    let deliveriesKept: TimeInterval
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await tick()
                try? await Task.sleep(for: interval)
            }
        }
    }

    private func tick() async {
        do {
            let reports = try await store.withLease("tick") {
                let reports = try await store.rollouts.runDueRamps(now: clock.now)
                _ = try await store.changes.prune(now: clock.now, keepingDeliveries: deliveriesKept)
                return reports
            }
            for report in reports {
                // Each step applied, with its plan: who moved between which variations.
                let moves = report.appliedPlans.flatMap(\.plan.moves).map {
                    "\($0.from)→\($0.to) \(Percent.format($0.share)) (\($0.recordedUsers) recorded)"
                }
                logger.info(
                    "\(report.summary)",
                    metadata: [
                        "ramp": "\(report.ramp.id)", "environment": "\(report.ramp.path)",
                        "feature": "\(report.ramp.feature)", "steps": "\(report.applied.map { $0.step + 1 })",
                        "moves": "\(moves.joined(separator: ", "))",
                    ])
            }
        } catch {
            logger.error("The scheduled work failed; trying again at the next tick", metadata: ["error": "\(error)"])
        }
    }
}
