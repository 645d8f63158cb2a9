import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Pinned per-user documents")
struct PinnedDocumentTests {
    static let file = #"""
        {"features": [
            {"name": "ab", "test-variations": ["A", "B"], "test-biases": [25, 75]},
            {"name": "mvt", "test-variations": ["X", "Y", "Z"]},
            {"name": "off", "enabled": false, "test-variations": ["P", "Q"]},
            {"name": "plain", "enabled": true},
            {"name": "unlock", "unlocked": false}
        ], "version": 3}
        """#
    static let tests = ["ab", "mvt", "off"]

    @Test("Each test carries the user's recorded point, which lands a fresh install in the recorded group")
    func pinnedPointsLandInTheRecordedGroup() async throws {
        // Given a document with three tests and two flags, and a user never seen (on a file)
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(Self.file)
        let alice = UserID(rawValue: "alice")
        #expect(try await store.allAssignmentEvents().isEmpty)

        // When her document is fetched
        let pinned = try await store.assignments.pinnedDocument(for: alice, in: .acmeProduction)

        // Then her first assignments are recorded, one per test
        #expect(pinned.revision == 1)
        let events = try await store.allAssignmentEvents()
        #expect(events.count == 3)
        #expect(Set(events.map(\.feature)) == Set(Self.tests))
        #expect(events.allSatisfy { $0.reason == .first && $0.user == alice && $0.revision == 1 })

        // And each test carries her recorded point, in the recorded group
        let features = try JSONParser.parse(pinned.bytes).value.featuresByName
        try await expectPinned(features, for: alice, in: store)
        #expect(features["plain"]?[Feature.assignmentKey] == nil)
        #expect(features["unlock"]?[Feature.assignmentKey] == nil)
        #expect(Set(pinned.assignments.map(\.feature)) == Set(Self.tests))

        // And the document is one the app accepts, with the top-level keys kept
        let decoded = DocumentDecoder.decode(pinned.bytes)
        #expect(decoded.document?.features.map(\.name) == ["ab", "mvt", "off", "plain", "unlock"])
        guard case .object(let root) = try JSONParser.parse(pinned.bytes).value else { return }
        #expect(root["version"] == .number(3))

        // When fetched again, nothing new is recorded and the bytes are the same
        let again = try await store.assignments.pinnedDocument(for: alice, in: .acmeProduction)
        #expect(again.bytes == pinned.bytes)
        #expect(try await store.allAssignmentEvents().count == 3)
    }

    @Test("After a bias change the pinned point is the same and lands in the new recorded group")
    func pinnedAfterABiasChange() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.file)
        let users = UserID.numbered(200)
        _ = try await store.assignments.assign(users, to: "ab", in: .acmeProduction)
        _ = try await store.catalog.setBiases(
            [75, 25], of: "ab", in: .acmeProduction, options: EditOptions(actor: "test"))
        let feature = try await store.catalog.feature("ab", in: .acmeProduction).feature
        let recorded = try await store.recordedAssignments(of: "ab")
        #expect(recorded.values.contains { $0.revision == 2 })

        for user in users.prefix(40) {
            let features = try JSONParser.parse(
                try await store.assignments.pinnedDocument(for: user, in: .acmeProduction).bytes
            )
            .value.featuresByName
            guard case .number(let point)? = features["ab"]?[Feature.assignmentKey] else {
                Issue.record("no point for \(user)")
                continue
            }
            #expect(point == recorded[user]?.point)
            #expect(feature.variation(at: point) == recorded[user]?.variation)
        }
    }

    @Test("The shared export never carries test-variation-assignment, even after users fetched pinned documents")
    func sharedExportHasNoAssignments() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.file)
        for user in UserID.numbered(5) {
            _ = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
        }
        _ = try await store.catalog.setBiases(
            [50, 50], of: "ab", in: .acmeProduction, options: EditOptions(actor: "test"))

        for revision in try await store.catalog.revisions(of: .acmeProduction) {
            let document = try await store.catalog.revision(revision.number, of: .acmeProduction).document
            #expect(!String(decoding: document, as: UTF8.self).contains(Feature.assignmentKey))
        }
        let snapshot = try await store.catalog.snapshot(of: .acmeProduction)
        #expect(!String(decoding: snapshot.document.rendered(), as: UTF8.self).contains(Feature.assignmentKey))
        // A pinned document does carry it, so the check above can fail.
        let pinned = try await store.assignments.pinnedDocument(for: UserID(rawValue: "user-0"), in: .acmeProduction)
        #expect(String(decoding: pinned.bytes, as: UTF8.self).contains(Feature.assignmentKey))
    }

    @Test("A pinned document for an environment without a revision is refused")
    func noRevision() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let error = await #expect(throws: DocumentError.self) {
            try await store.assignments.pinnedDocument(for: UserID(rawValue: "alice"), in: .acmeProduction)
        }
        guard case .noRevision? = error else {
            Issue.record("expected noRevision, got \(String(describing: error))")
            return
        }
    }

    /// Every test of `features` carries `user`'s recorded point, whose variation is the recorded one.
    private func expectPinned(_ features: [String: JSONObject], for user: UserID, in store: FeatureStore) async throws {
        for name in Self.tests {
            let detail = try await store.catalog.feature(name, in: .acmeProduction)
            let recorded = try #require(try await store.recordedAssignments(of: name)[user])
            guard case .number(let point)? = features[name]?[Feature.assignmentKey] else {
                Issue.record("\(name) has no \(Feature.assignmentKey)")
                continue
            }
            #expect(point == recorded.point, "\(name)")
            #expect(point == UserPoints(salt: detail.salt).point(for: user.rawValue), "\(name)")
            #expect(detail.feature.variation(at: point) == recorded.variation, "\(name)")
        }
        let off = try await store.recordedAssignments(of: "off")[user]
        #expect(off?.variation == "Disabled")
    }
}
