import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

@testable import FlagpoleStore

/// Re-evaluation visits only the points whose owner changed, which is right only while every
/// recorded user (QA overrides aside) sits in the group of their point. These tests drive long
/// random sequences of edits and check that invariant, and that history agrees with the present,
/// after every step.
@Suite("Re-evaluation keeps every recorded user in the group of their point")
struct ReevaluationInvariantSoakTests {
    static let document = """
        {"features": [
            {"name": "colour", "test-variations": ["Blue", "Green", "Orange"], "test-biases": [34, 33, 33]},
            {"name": "onboarding", "test-variations": ["Enabled", "Disabled"], "test-biases": [10, 90]}
        ]}
        """

    @Test("Random bias changes, toggles, rollbacks, variation changes and overrides", arguments: [1, 2, 3] as [UInt64])
    func randomEdits(seed: UInt64) async throws {
        let store = try await FeatureStore.makeWithTenants()
        let path = EnvironmentPath.acmeProduction
        try await store.importText(Self.document)
        let users = UserID.numbered(500)
        for feature in ["colour", "onboarding"] {
            _ = try await store.assignments.assign(users, to: feature, in: path)
        }
        var random = SeededGenerator(seed: seed)
        let options = EditOptions(isForced: true, actor: "test")
        for step in 0..<30 {
            let feature = random.next() % 2 == 0 ? "colour" : "onboarding"
            let count = feature == "colour" ? 3 : 2
            switch random.next() % 6 {
            case 0, 1:
                _ = try await store.catalog.setBiases(
                    Self.biases(count: count, using: &random), of: feature, in: path, options: options)
            case 2:
                _ = try await store.catalog.setEnabled(
                    random.next() % 2 == 0, feature: feature, in: path, options: options)
            case 3:
                let latest = try await store.catalog.revisions(of: path).first!.number
                _ = try await store.catalog.rollBack(
                    path, to: Int(random.next() % UInt64(latest)) + 1, options: options)
            case 4:
                let user = users[Int(random.next() % UInt64(users.count))]
                let current = try await store.catalog.feature(feature, in: path).feature
                if current.isBucketed, current.isEnabled,
                    let variation = current.effectiveVariations.randomElement(using: &random),
                    VariationRanges(of: current).point(in: variation, preferring: 0) != nil
                {
                    _ = try await store.assignments.setOverride(feature, user: user, variation: variation, in: path)
                } else if let overridden = try await store.recordedAssignments(of: feature).values.first(
                    where: \.isOverride)
                {
                    _ = try await store.assignments.clearOverride(feature, user: overridden.user, in: path)
                }
            default:
                // Re-ordered or renamed variations, through an import.
                let names =
                    feature == "colour"
                    ? ["Orange", "Blue", "Green"].shuffled(using: &random) : ["Disabled", "Enabled"]
                var document = try await store.catalog.snapshot(of: path).document
                let index = document.features.firstIndex { $0.name == feature }!
                document.features[index].testVariations = names
                try await store.importText(String(decoding: document.rendered(), as: UTF8.self))
            }
            try await Self.checkInvariant(store, step: step)
        }
    }

    /// Every recorded user not under an override is in the group their point gives, and their
    /// latest event names the group they are in.
    static func checkInvariant(_ store: FeatureStore, step: Int) async throws {
        let document = try await store.catalog.snapshot(of: .acmeProduction).document
        let events = try await store.allAssignmentEvents()
        var latest: [String: AssignmentEvent] = [:]
        for event in events.reversed() { latest["\(event.feature)/\(event.user)"] = event }
        for feature in document.features {
            for assignment in try await store.recordedAssignments(of: feature.name).values {
                if !assignment.isOverride {
                    #expect(
                        assignment.variation == feature.variation(at: assignment.point),
                        "step \(step): \(assignment.user) of \(feature.name) at \(assignment.point)")
                }
                #expect(
                    latest["\(feature.name)/\(assignment.user)"]?.variation == assignment.variation,
                    "step \(step): history of \(assignment.user) in \(feature.name) disagrees with the present")
            }
        }
    }

    /// `count` whole-number biases that add up to exactly 100.
    static func biases(count: Int, using random: inout SeededGenerator) -> [Double] {
        var left = 100
        var biases: [Double] = []
        for _ in 0..<count - 1 {
            let bias = Int(random.next() % UInt64(left + 1))
            biases.append(Double(bias))
            left -= bias
        }
        return biases + [Double(left)]
    }
}
