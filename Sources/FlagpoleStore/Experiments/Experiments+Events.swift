import FlagpoleCore
import Foundation

/// Which events are accepted, and how long raw events are kept.
public struct EventPolicy: Hashable, Sendable {
    /// Events older than this (by their own time) are refused as too old.
    public var maximumAge: TimeInterval
    /// Events further ahead of the server's clock than this are refused.
    public var maximumSkew: TimeInterval
    /// Raw events are deleted this long after receipt. Never shorter than `maximumAge`, so the
    /// id of any event that could still be accepted is remembered: a retried batch counts once.
    public var retention: TimeInterval

    public static let days: TimeInterval = 86_400
    public static let standard = EventPolicy(maximumAge: 30 * days, maximumSkew: 300, retention: 90 * days)

    public init(maximumAge: TimeInterval, maximumSkew: TimeInterval, retention: TimeInterval) {
        self.maximumAge = maximumAge
        self.maximumSkew = maximumSkew
        self.retention = retention
    }

    /// Why the policy can't be used, `nil` when it can.
    public var problem: String? {
        guard maximumAge > 0, maximumSkew >= 0, retention > 0 else { return "event windows must be positive" }
        guard retention >= maximumAge else {
            return
                "raw events must be kept (\(Int(retention / Self.days)) days) at least as long as events are accepted (\(Int(maximumAge / Self.days)) days): otherwise a retried batch could count twice"
        }
        return nil
    }
}

/// How a client writes its events, where clients differ.
public enum EventDialect: Hashable, Sendable {
    /// Flagpole's own (`POST …/events`, `flagpole events import`): a goal event has a value only
    /// for a value goal; an exposure names a test.
    case flagpole
    /// The Bucketeer SDK's (`register_events`): every goal event carries a value (`0.0` when the
    /// app gave none), which counts for value goals and is dropped for the others; an exposure
    /// names any flag, resolved as OFREP resolves a key, and is an exposure of the test the flag
    /// is or the config follows (a flag that is no test is accepted and counts for nothing).
    case bucketeer
}

/// What became of a batch of events.
public struct EventBatchReport: Hashable, Sendable {
    public var accepted = 0
    /// Events whose id was seen before: counted once, already.
    public var duplicates = 0
    public var refused: [RefusedEvent] = []

    public init() {}
}

/// An event refused, and why; the rest of its batch is not.
public struct RefusedEvent: Error, Hashable, Sendable {
    public enum Reason: String, Hashable, Sendable {
        case invalid
        case unknownGoal = "unknown_goal"
        case unknownTest = "unknown_test"
        case badValue = "bad_value"
        case tooOld = "too_old"
        case tooFarInFuture = "too_far_in_future"
    }

    /// The event's place in its batch (0-based; a file's line, 1-based, for `events import`).
    public var index: Int
    public var id: String?
    public var reason: Reason
    public var message: String

    public init(index: Int, id: String?, reason: Reason, message: String) {
        self.index = index
        self.id = id
        self.reason = reason
        self.message = message
    }
}

extension Experiments {
    /// The most events one batch may hold.
    public static let eventsPerBatch = 1_000

    /// Creates a goal.
    ///
    /// - throws: `ResultsError.invalidGoal` or `.goalExists`, `TenancyError`.
    public func createGoal(_ goal: Goal, in path: EnvironmentPath) async throws {
        if let problem = Goal.problem(withName: goal.name) {
            throw ResultsError.invalidGoal(name: goal.name, problem: problem)
        }
        try await write { db in
            let scope = try db.environments.scope(of: path)
            if try db.experiments.goals(in: scope).contains(where: { $0.goal.name == goal.name }) {
                throw ResultsError.goalExists(path, name: goal.name)
            }
            try db.experiments.insertGoal(goal, in: scope, at: Date())
        }
    }

    /// The environment's goals, by name.
    public func goals(in path: EnvironmentPath) async throws -> [Goal] {
        try await read { db in try db.experiments.goals(in: db.environments.scope(of: path)).map(\.goal) }
    }

    /// Keeps a batch of events (up to `eventsPerBatch`) in one transaction and counts them in the
    /// figures of the tests their users are in. An event whose id was seen is a duplicate; one
    /// that can't be counted is refused with its reason, and the rest of the batch is kept.
    /// `refused` are events the caller found malformed, reported beside the store's. `now` is
    /// what events' times are judged against (the server's clock).
    ///
    /// - throws: `ResultsError.batchTooLarge`, `TenancyError`.
    public func record(
        _ events: [(index: Int, event: ReceivedEvent)], refused: [RefusedEvent] = [], in path: EnvironmentPath,
        policy: EventPolicy = .standard, dialect: EventDialect = .flagpole, now: Date = Date()
    ) async throws -> EventBatchReport {
        guard events.count + refused.count <= Self.eventsPerBatch else {
            throw ResultsError.batchTooLarge(events: events.count + refused.count, limit: Self.eventsPerBatch)
        }
        return try await write { db in
            let scope = try db.environments.scope(of: path)
            let goals = Dictionary(
                try db.experiments.goals(in: scope).map { ($0.goal.name, $0) }, uniquingKeysWith: { a, _ in a })
            let exposed = try exposureTarget(in: scope, dialect: dialect, db: db)
            var ledger = try ExperimentLedger(db: db, scope: scope)
            var report = EventBatchReport()
            report.refused = refused
            for (index, var event) in events {
                switch Self.check(event, goals: goals, exposed: exposed, dialect: dialect, policy: policy, now: now) {
                case .failure(let refusal):
                    report.refused.append(
                        RefusedEvent(index: index, id: event.id, reason: refusal.reason, message: refusal.message))
                case .success(nil):
                    report.accepted += 1
                case .success(let target?):
                    if target.goal.map({ $0.goal.kind != .value }) ?? false { event.value = nil }
                    guard
                        try db.experiments.insertEvent(
                            event, goalID: target.goal?.id, featureID: target.featureID, in: scope)
                    else {
                        report.duplicates += 1
                        continue
                    }
                    report.accepted += 1
                    if let goal = target.goal {
                        try ledger.recordEvent(
                            of: event.user.rawValue, goalID: goal.id, kind: goal.goal.kind, value: event.value,
                            at: event.time)
                    } else if let featureID = target.featureID {
                        try ledger.recordExposure(of: event.user.rawValue, to: featureID, at: event.time)
                    }
                }
            }
            try ledger.save(at: now)
            report.refused.sort { $0.index < $1.index }
            return report
        }
    }

    /// Counts exposures apps reported by evaluating one test alone (OFREP's single evaluation).
    /// No raw event is kept: only a stint's first exposure matters, and later ones change nothing.
    public func recordExposures(
        _ exposures: [(user: UserID, feature: String, time: Date)], in path: EnvironmentPath
    ) async throws {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            let tests = try Self.testIDs(in: scope, db: db)
            var ledger = try ExperimentLedger(db: db, scope: scope)
            for exposure in exposures {
                guard let featureID = tests[Feature.nameKey(exposure.feature)] else { continue }
                try ledger.recordExposure(
                    of: exposure.user.rawValue, to: featureID, at: exposure.time.unixMilliseconds)
            }
            try ledger.save(at: Date())
        }
    }

    /// The test an exposure of `name` counts for, by `dialect`'s rule: `.success(nil)` for a flag
    /// that is no test.
    private func exposureTarget(
        in scope: EnvironmentScope, dialect: EventDialect, db: Transaction
    ) throws -> (String) -> Result<Int64?, Refusal> {
        switch dialect {
        case .flagpole:
            let tests = try Self.testIDs(in: scope, db: db)
            return { name in
                tests[Feature.nameKey(name)].map { .success($0) }
                    ?? .failure(Refusal(reason: .unknownTest, message: "the environment has no test \"\(name)\""))
            }
        case .bucketeer:
            let head = try db.environments.head(of: scope.path)
            let plan = try head.revision.map { _ in try store.assignments.currentPlan(in: db, head: head) }
            return { name in
                guard let plan, let index = plan.flagIndex(of: Feature.nameKey(name)) else {
                    return .failure(
                        Refusal(reason: .unknownTest, message: "the environment has no feature or config \"\(name)\""))
                }
                return .success(plan.tests(of: index).first?.featureID)
            }
        }
    }

    /// The environment's tests by name key, as flags are found (case and normalization aside).
    private static func testIDs(in scope: EnvironmentScope, db: Transaction) throws -> [String: Int64] {
        Dictionary(
            try db.features.storedFeatures(in: scope).filter(\.kind.isTest).map {
                (Feature.nameKey($0.feature.name), $0.id)
            }, uniquingKeysWith: { a, _ in a })
    }

    private struct Refusal: Error {
        var reason: RefusedEvent.Reason
        var message: String
    }

    /// What an event counts for: a goal, or the test an exposure is of; `nil` for an exposure of
    /// a flag that is no test.
    private static func check(
        _ event: ReceivedEvent, goals: [String: StoredGoal], exposed: (String) -> Result<Int64?, Refusal>,
        dialect: EventDialect, policy: EventPolicy, now: Date
    ) -> Result<(goal: StoredGoal?, featureID: Int64?)?, Refusal> {
        let nowMilliseconds = now.unixMilliseconds
        if event.time < nowMilliseconds - Int64(policy.maximumAge * 1000) {
            return .failure(
                Refusal(
                    reason: .tooOld,
                    message:
                        "its time is more than \(Int(policy.maximumAge / EventPolicy.days)) days ago: events are accepted for that long"
                ))
        }
        if event.time > nowMilliseconds + Int64(policy.maximumSkew * 1000) {
            return .failure(
                Refusal(
                    reason: .tooFarInFuture,
                    message:
                        "its time is more than \(Int(policy.maximumSkew)) s ahead of the server's clock: send the time it happened"
                ))
        }
        if event.goal == Goal.exposure {
            guard let name = event.feature else {
                return .failure(Refusal(reason: .unknownTest, message: "an exposure names its test in `feature`"))
            }
            guard event.value == nil else {
                return .failure(Refusal(reason: .badValue, message: "an exposure has no value"))
            }
            return exposed(name).map { $0.map { (nil, $0) } }
        }
        guard let goal = goals[event.goal] else {
            let known = goals.keys.sorted().prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")
            return .failure(
                Refusal(
                    reason: .unknownGoal,
                    message: "the environment has no goal \"\(event.goal)\""
                        + (known.isEmpty ? ": create it with `flagpole goal create`" : " (it has \(known))")))
        }
        switch (goal.goal.kind, event.value) {
        case (.value, nil):
            return .failure(Refusal(reason: .badValue, message: "a value goal's event needs a `value`"))
        case (.value, let value?) where !value.isFinite || abs(value) > 1e12:
            return .failure(Refusal(reason: .badValue, message: "`value` must be a number within ±1e12"))
        case (.conversion, _?) where dialect == .flagpole, (.count, _?) where dialect == .flagpole:
            return .failure(
                Refusal(
                    reason: .badValue,
                    message: "a \(goal.goal.kind.rawValue) goal's event has no `value`: each event counts once"))
        default:
            return .success((goal, nil))
        }
    }

    /// Deletes raw events received longer ago than `policy.retention`; returns how many went.
    /// The figures of tests don't depend on them.
    public func expireEvents(policy: EventPolicy = .standard, now: Date = Date()) async throws -> Int {
        try await write { db in
            try db.experiments.expireEvents(
                receivedBefore: now.unixMilliseconds - Int64(policy.retention * 1000))
        }
    }
}
