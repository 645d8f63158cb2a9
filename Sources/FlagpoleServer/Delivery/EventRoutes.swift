import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// `POST /t/{tenant}/{env}/events`: goal and exposure events from apps, in batches. Events are
/// writes, so a key of the environment is always needed (`DeliveryNeeds.Events`; a delivery key
/// is enough), even in a public environment.
final class EventRoutes: Sendable {
    let delivery: DeliveryRoutes
    let policy: EventPolicy
    let clock: WallClock
    var store: FeatureStore { delivery.store }
    /// When raw events were last expired: at most once an hour, after a batch.
    private let lastExpiry = Mutex(Date.distantPast)

    /// A batch of a thousand events is well under this.
    static let maxBodySize = 1024 * 1024

    init(delivery: DeliveryRoutes, policy: EventPolicy, clock: WallClock) {
        self.delivery = delivery
        self.policy = policy
        self.clock = clock
    }

    func register(on router: Router<FlagpoleRequestContext>) {
        router.group().delivery(DeliveryNeeds.Events.self, of: delivery).post(
            "/t/:tenant/:env/events", use: recordEvents)
    }

    /// `POST /t/{tenant}/{env}/events`: a batch of goal events, each recorded or refused with its reason.
    @Sendable func recordEvents(
        _ request: Request, context: DeliveryContext<DeliveryNeeds.Events>
    ) async throws -> Response {
        let path = context.path
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.body.collect(upTo: Self.maxBodySize).readableBytesView)
        } catch {
            throw APIError(
                .contentTooLarge, code: "too_large",
                "A batch is at most 1 MB and \(Experiments.eventsPerBatch) events: send it in parts.")
        }
        // The server's clock: a rehearsed ramp's events are judged in its time.
        let now = clock.now
        let batch = EventParser.batch(try JSONBody.parse(bytes), receivedAt: now)
        let report = try await store.experiments.record(
            batch.events, refused: batch.refused, in: path, policy: policy, now: now)
        expireIfDue()
        return .json(report.jsonValue)
    }

    private func expireIfDue() {
        let now = Date()
        let due = lastExpiry.withLock { last in
            guard now.timeIntervalSince(last) > 3600 else { return false }
            last = now
            return true
        }
        guard due else { return }
        Task { [store, policy] in _ = try? await store.experiments.expireEvents(policy: policy, now: now) }
    }
}
