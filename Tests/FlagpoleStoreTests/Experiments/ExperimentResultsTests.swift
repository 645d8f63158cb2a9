import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

/// Goals, event batches and the figures kept from them: epochs, stints, exposure, exclusion
/// and idempotency, read back through the readout.
@Suite("Experiment results in the store")
struct ExperimentResultsTests {
    static let options = EditOptions(actor: "test")
    static let path = EnvironmentPath.acmeProduction

    static func store() async throws -> FeatureStore {
        let store = try await TargetingStoreTests.store()
        try await store.experiments.createGoal(Goal(name: "purchase", kind: .conversion), in: path)
        try await store.experiments.createGoal(Goal(name: "revenue", kind: .value), in: path)
        return store
    }

    /// Milliseconds from now: events must not precede their users' assignments.
    static func later(_ seconds: Double = 1) -> Int64 {
        Int64((Date().timeIntervalSince1970 + seconds) * 1000)
    }

    static func event(
        _ id: String, _ user: String, _ goal: String, value: Double? = nil, feature: String? = nil, at time: Int64
    ) -> (index: Int, event: ReceivedEvent) {
        (
            0,
            ReceivedEvent(
                id: id, user: UserID(rawValue: user), goal: goal, feature: feature, value: value, time: time,
                receivedAt: later(0))
        )
    }

    static func users(_ count: Int, prefix: String = "u") -> [UserID] {
        (0..<count).map { UserID(rawValue: "\(prefix)\($0)") }
    }

    /// The users of each variation, as the store recorded them.
    static func groups(_ users: [UserID], in store: FeatureStore) async throws -> [String: [String]] {
        _ = try await store.assignments.assign(users, to: "Checkout", in: path)
        var groups: [String: [String]] = [:]
        for user in users {
            let assignment = try await store.assignments.evaluateFlag(
                "Checkout", for: FlagContext(user: user), in: path
            ).variant
            groups[assignment, default: []].append(user.rawValue)
        }
        return groups
    }

    static func goal(_ results: ExperimentResults, epoch: Int = 1, _ name: String) throws -> GoalResults {
        try #require(results.epochs.first { $0.number == epoch }?.goals.first { $0.goal.name == name })
    }

    @Test("A batch sent twice counts once; bad events are refused with their reason and the rest kept")
    func idempotentBatches() async throws {
        let store = try await Self.store()
        let groups = try await Self.groups(Self.users(40), in: store)
        let a = try #require(groups["A"]?.first)
        let t = Self.later()
        let batch = [
            Self.event("1", a, "purchase", at: t), Self.event("2", a, "revenue", value: 12.5, at: t),
            Self.event("3", a, "nope", at: t), Self.event("4", a, "revenue", at: t),
            Self.event("5", a, "purchase", value: 1, at: t),
            Self.event("6", a, "purchase", at: Self.later(-40 * 86_400)),
            Self.event("7", a, "purchase", at: Self.later(3_600)),
            Self.event("8", a, Goal.exposure, feature: "Dark mode", at: t),
        ]
        let first = try await store.experiments.record(batch, in: Self.path)
        #expect(first.accepted == 2 && first.duplicates == 0)
        #expect(
            first.refused.map(\.reason) == [
                .unknownGoal, .badValue, .badValue, .tooOld, .tooFarInFuture, .unknownTest,
            ])
        let second = try await store.experiments.record(batch, in: Self.path)
        #expect(second.accepted == 0 && second.duplicates == 2)
        let results = try await store.experiments.results(of: "Checkout", in: Self.path)
        let revenue = try Self.goal(results, "revenue")
        #expect(revenue.variations.first { $0.variation == "A" }?.events == 1)
        let users = revenue.variations.first { $0.variation == "A" }?.users ?? 0
        #expect(abs((revenue.variations.first { $0.variation == "A" }?.mean ?? 0) - 12.5 / Double(users)) < 1e-12)
    }

    @Test("A batch over the limit is refused whole and writes nothing")
    func batchTooLarge() async throws {
        let store = try await Self.store()
        let t = Self.later()
        let batch = (0...Experiments.eventsPerBatch).map { Self.event("e\($0)", "u1", "purchase", at: t) }
        await #expect(throws: ResultsError.self) { try await store.experiments.record(batch, in: Self.path) }
        let kept = try await store.read { db in try db.experiments.eventCount() }
        #expect(kept == 0)
    }

    @Test("A bias change starts an epoch: moved users join it, not its split; an edit that changes nothing doesn't")
    func epochs() async throws {
        let store = try await Self.store()
        let before = try await Self.groups(Self.users(200), in: store)
        _ = try await store.catalog.setBiases([50, 50, 0], of: "Checkout", in: Self.path, options: Self.options)
        _ = try await store.catalog.setBiases([20, 80, 0], of: "Checkout", in: Self.path, options: Self.options)
        let after = try await Self.groups(Self.users(100, prefix: "new-"), in: store)
        let results = try await store.experiments.results(of: "Checkout", in: Self.path)
        #expect(results.epochs.map(\.number) == [1, 2])
        let second = try #require(results.epochs.last)
        #expect(second.shares == [20, 80, 0])
        let moved = before["A"]!.count - (try await Self.groups(Self.users(200), in: store))["A"]!.count
        #expect(moved > 0)
        let armB = try #require(second.arms.first { $0.variation == "B" })
        #expect(armB.users == moved + (after["B"]?.count ?? 0))
        #expect(armB.splitUsers == (after["B"]?.count ?? 0))
        let first = try #require(results.epochs.first)
        #expect(first.arms.first { $0.variation == "A" }?.users == before["A"]!.count)
    }

    @Test("An on/off test is read against Disabled, so its verdict speaks of the new arm; any other against its first")
    func defaultControl() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.catalog.setBiases([10, 90], of: "checkout", in: Self.path, options: Self.options)
        _ = try await store.assignments.assign(Self.users(50), to: "checkout", in: Self.path)
        #expect(
            try await store.experiments.results(of: "checkout", in: Self.path).epochs.map(\.control) == [
                "Disabled", "Disabled",
            ])
        let named = try await store.experiments.results(of: "checkout", in: Self.path, control: "Enabled")
        #expect(named.epochs.map(\.control) == ["Enabled", "Enabled"])
        let epoch = { (variations: [String]) in
            ExperimentEpoch(
                featureID: 1, number: 1, revision: 1, startedAt: 0, variations: variations, shares: [], signature: "")
        }
        #expect(epoch(["enabled", "DISABLED"]).defaultControl == "DISABLED")
        #expect(epoch(["A", "B"]).defaultControl == "A")
        #expect(epoch(["Disabled", "A", "B"]).defaultControl == "Disabled")
        #expect(epoch(["B", "Disabled", "Enabled"]).defaultControl == "B")
    }

    @Test(
        "An on/off test rolled out into a plain flag keeps its results, final and frozen; a flag that never was a test has none"
    )
    func finalResults() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.catalog.setBiases([10, 90], of: "checkout", in: Self.path, options: Self.options)
        _ = try await store.assignments.assign(Self.users(50), to: "checkout", in: Self.path)
        let running = try await store.experiments.results(of: "checkout", in: Self.path)
        #expect(!running.isFinal)
        _ = try await store.catalog.rollOut("checkout", to: "Enabled", in: Self.path, options: Self.options)
        #expect(try await store.catalog.feature("checkout", in: Self.path).feature.kind == .flag)
        #expect(try await store.experiments.hasResults(of: "checkout", in: Self.path))
        let final = try await store.experiments.results(of: "checkout", in: Self.path)
        #expect(final.isFinal && final.epochs.map(\.number) == running.epochs.map(\.number))
        #expect(final.epochs.map { $0.arms.map(\.users) } == running.epochs.map { $0.arms.map(\.users) })
        // Made a test again, it reads on from a new epoch, found by its number past the ended one.
        try await store.importText(RampTests.onOff)
        let again = try await store.experiments.results(of: "checkout", in: Self.path)
        #expect(!again.isFinal && again.epochs.map(\.number) == [1, 2, 4])
        #expect(
            try await store.experiments.results(of: "checkout", in: Self.path, epoch: 4).epochs.map(\.number) == [4])
        await #expect(throws: ResultsError.self) {
            try await store.experiments.results(of: "checkout", in: Self.path, epoch: 3)
        }
        try await store.importText(#"{"features": [{"name": "plain", "enabled": true}]}"#)
        #expect(try await !store.experiments.hasResults(of: "plain", in: Self.path))
        let refused = await #expect(throws: ResultsError.self) {
            try await store.experiments.results(of: "plain", in: Self.path)
        }
        #expect(refused?.code == "not_a_test")
    }

    @Test(
        "A test's named control is what every readout compares with unless asked for another; no revision, no user moves"
    )
    func namedControl() async throws {
        let store = try await Self.store()
        _ = try await store.assignments.assign(Self.users(40), to: "Checkout", in: Self.path)
        let before = try await store.catalog.revision(of: Self.path).number
        #expect(try await store.experiments.results(of: "Checkout", in: Self.path).epochs.last?.control == "A")
        try await store.experiments.setControl(of: "Checkout", to: "B", in: Self.path, actor: "ada")
        let named = try await store.experiments.results(of: "Checkout", in: Self.path)
        #expect(named.namedControl == "B" && named.epochs.map(\.control) == ["B"])
        #expect(
            try await store.experiments.results(of: "Checkout", in: Self.path, control: "C").epochs.map(\.control) == [
                "C"
            ])
        #expect(try await store.catalog.revision(of: Self.path).number == before)
        await #expect(
            throws: ResultsError.controlNotAVariation(
                Self.path, feature: "Checkout", control: "Z", variations: ["A", "B", "C"])
        ) {
            try await store.experiments.setControl(of: "Checkout", to: "Z", in: Self.path, actor: "ada")
        }
        await #expect(throws: ResultsError.notATest(Self.path, feature: "Dark mode")) {
            try await store.experiments.setControl(of: "Dark mode", to: "Enabled", in: Self.path, actor: "ada")
        }
        #expect(
            try await store.experiments.results(of: "Checkout", in: Self.path).namedControl == "B",
            "a refusal changes nothing")
        try await store.experiments.setControl(of: "Checkout", to: nil, in: Self.path, actor: "ada")
        let cleared = try await store.experiments.results(of: "Checkout", in: Self.path)
        #expect(cleared.namedControl == nil && cleared.epochs.map(\.control) == ["A"])
    }

    @Test("A user overridden into another variation of the same epoch is left out, totals and all")
    func exclusion() async throws {
        let store = try await Self.store()
        let groups = try await Self.groups(Self.users(40), in: store)
        let user = try #require(groups["A"]?.first)
        _ = try await store.experiments.record(
            [Self.event("1", user, "revenue", value: 100, at: Self.later())], in: Self.path)
        var revenue = try Self.goal(try await store.experiments.results(of: "Checkout", in: Self.path), "revenue")
        #expect(revenue.variations.first { $0.variation == "A" }?.events == 1)
        _ = try await store.assignments.setOverride(
            "Checkout", user: UserID(rawValue: user), variation: "B", in: Self.path)
        let results = try await store.experiments.results(of: "Checkout", in: Self.path)
        revenue = try Self.goal(results, "revenue")
        let a = try #require(revenue.variations.first { $0.variation == "A" })
        #expect(a.events == 0 && a.mean == 0 && a.users == groups["A"]!.count - 1)
        #expect(results.epochs[0].arms.first { $0.variation == "A" }?.excludedUsers == 1)
        // Later events of the excluded user count nowhere.
        _ = try await store.experiments.record(
            [Self.event("2", user, "revenue", value: 5, at: Self.later(2))], in: Self.path)
        revenue = try Self.goal(try await store.experiments.results(of: "Checkout", in: Self.path), "revenue")
        #expect(revenue.variations.allSatisfy { $0.events == 0 })
    }

    @Test("With exposures, users count from their first; events before it don't, however late the exposure arrives")
    func exposure() async throws {
        let store = try await Self.store()
        let groups = try await Self.groups(Self.users(60), in: store)
        let (early, late) = (groups["A"]![0], groups["A"]![1])
        let t = Self.later(1)
        // `early` is exposed before its events arrive; `late`'s exposure arrives after them.
        _ = try await store.experiments.record(
            [Self.event("x1", early, Goal.exposure, feature: "Checkout", at: t + 10_000)], in: Self.path)
        _ = try await store.experiments.record(
            [
                Self.event("1", early, "revenue", value: 1, at: t),
                Self.event("2", early, "revenue", value: 2, at: t + 20_000),
                Self.event("3", late, "revenue", value: 4, at: t),
                Self.event("4", late, "revenue", value: 8, at: t + 20_000),
            ], in: Self.path)
        _ = try await store.experiments.record(
            [Self.event("x2", late, Goal.exposure, feature: "Checkout", at: t + 10_000)], in: Self.path)
        let results = try await store.experiments.results(of: "Checkout", in: Self.path)
        #expect(results.epochs[0].analysis == .exposure)
        let a = try #require(try Self.goal(results, "revenue").variations.first { $0.variation == "A" })
        #expect(a.users == 2 && a.events == 2 && a.mean == 5)
    }

    @Test("Forgetting a user deletes their events and their part in the tests")
    func forget() async throws {
        let store = try await Self.store()
        let groups = try await Self.groups(Self.users(10), in: store)
        let user = try #require(groups.values.first?.first)
        _ = try await store.experiments.record([Self.event("1", user, "purchase", at: Self.later())], in: Self.path)
        let report = try await store.assignments.forget(UserID(rawValue: user), in: Self.path.tenant, actor: "test")
        #expect(report.events == 2)
        let kept = try await store.read { db in try db.experiments.eventCount() }
        #expect(kept == 0)
    }

    @Test("A user's state reads back as written, and damaged bytes read as nothing")
    func stateRoundTrip() {
        var state = ExperimentUserState()
        var stint = ExperimentUserState.Stint(
            epoch: 2, variation: "Grüne B", joinedAt: 1_795_000_000_000, bySplit: true)
        stint.exposedAt = 1_795_000_001_000
        stint.setTotal(.init(goalID: 7, total: 12.5, exposedTotal: 2.5, events: 3, exposedEvents: 1))
        var excluded = ExperimentUserState.Stint(epoch: 1, variation: "A", joinedAt: 1_794_000_000_000, bySplit: false)
        excluded.isExcluded = true
        state.memberships = [.init(featureID: 42, stints: [excluded, stint]), .init(featureID: 43, stints: [])]
        state.pending = [
            .init(goalID: 7, time: 1_795_000_000_500, value: nil), .init(goalID: 8, time: 5, value: -1.25),
        ]
        let bytes = state.encoded
        #expect(ExperimentUserState(encoded: bytes) == state)
        #expect(ExperimentUserState(encoded: Array(bytes.dropLast())) == nil)
        #expect(ExperimentUserState(encoded: bytes + [0]) == nil)
        #expect(ExperimentUserState(encoded: [2] + bytes.dropFirst()) == nil)
    }
}
