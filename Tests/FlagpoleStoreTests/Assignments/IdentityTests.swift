import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

/// One identity rule for each kind of name: user ids are bytes (two spellings are two users with
/// two points), feature names are what the app's Swift strings compare (two spellings are one
/// feature, kept in the bytes last written).
@Suite("Identity of users and feature names")
struct IdentityTests {
    /// Pairs Swift's `==` calls equal though their bytes differ: NFC and NFD, singletons that
    /// normalise to another character (Kelvin, Ångström), Hangul syllables and their jamo.
    static let equivalentPairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),
        ("K", "\u{212A}"),
        ("\u{C5}", "\u{212B}"),
        ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"),
    ]

    static let document = """
        {"features": [
            {"name": "Caf\\u00e9 test", "test-variations": ["A", "B"], "test-biases": [50, 50]},
            {"name": "Unlock", "unlocked": false}
        ]}
        """

    @Test("The pairs are one string to Swift and two byte strings to SQLite")
    func pairsAreEquivalent() {
        for (first, second) in Self.equivalentPairs {
            #expect(first == second)
            #expect(Array(first.utf8) != Array(second.utf8))
            #expect(UserID(rawValue: first) != UserID(rawValue: second))
            #expect(Set([UserID(rawValue: first), UserID(rawValue: second)]).count == 2)
            #expect(Feature.nameKey(first) == Feature.nameKey(second))
        }
    }

    @Test(
        "Bulk assignment keeps two spellings of an id apart, below and above the batch size, on a new test and on one with users",
        arguments: [10, 200, 5000])
    func bulkAssignmentKeepsSpellingsApart(userCount: Int) async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.document)
        for isWarm in [false, true] {
            let prefix = isWarm ? "warm-" : "cold-"
            // Both spellings of each pair, twice, among other users.
            var users = UserID.numbered(userCount, prefix: prefix)
            for (first, second) in Self.equivalentPairs {
                users += [first, second, first, second].map { UserID(rawValue: prefix + $0) }
            }
            let distinct = userCount + 2 * Self.equivalentPairs.count
            let summary = try await store.assignments.assign(users, to: "Caf\u{E9} test", in: .acmeProduction)
            #expect(summary.recorded == distinct)
            #expect(summary.known == users.count - distinct)
            let recorded = try await store.recordedAssignments(of: "Caf\u{E9} test", in: .acmeProduction)
            #expect(recorded.keys.filter { $0.rawValue.hasPrefix(prefix) }.count == distinct)
            for (first, second) in Self.equivalentPairs {
                let a = try #require(recorded[UserID(rawValue: prefix + first)])
                let b = try #require(recorded[UserID(rawValue: prefix + second)])
                // Each has the point of its own bytes.
                let salt = try await store.salt(of: "Caf\u{E9} test")
                #expect(a.point == UserPoints(salt: salt).point(for: prefix + first))
                #expect(b.point == UserPoints(salt: salt).point(for: prefix + second))
                #expect(a.point != b.point)
            }
        }
        let events = try await store.read { db in try db.value(Int.self, "SELECT count(*) FROM assignment_events") }
        #expect(events == 2 * (userCount + 2 * Self.equivalentPairs.count))
    }

    @Test("Pinned documents, history, unlocks and overrides of one spelling leave the other alone")
    func perUserStateKeepsSpellingsApart() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.document)
        for (first, second) in Self.equivalentPairs {
            let one = UserID(rawValue: first)
            let other = UserID(rawValue: second)
            let pinnedOne = try await store.assignments.pinnedDocument(for: one, in: .acmeProduction)
            let pinnedOther = try await store.assignments.pinnedDocument(for: other, in: .acmeProduction)
            #expect(pinnedOne.assignments.map(\.point) != pinnedOther.assignments.map(\.point))
            #expect(try await store.assignments.pinnedDocument(for: one, in: .acmeProduction) == pinnedOne)

            let history = try await store.assignments.assignmentEvents(
                in: .acmeProduction, matching: AssignmentEventQuery(user: one))
            #expect(history.count == 1 && history.allSatisfy { $0.user == one })

            try await store.assignments.setUnlocked(
                true, feature: "Unlock", user: one, source: nil, actor: "test", in: .acmeProduction)
            #expect(try await store.assignments.unlocks(in: .acmeProduction, user: one).map(\.isUnlocked) == [true])
            #expect(try await store.assignments.unlocks(in: .acmeProduction, user: other).isEmpty)
            let unlocked = try await store.assignments.evaluate(other, in: .acmeProduction).first {
                $0.feature == "Unlock"
            }
            #expect(unlocked?.variation == "Locked")

            let forced = pinnedOne.assignments[0].variation == "A" ? "B" : "A"
            _ = try await store.assignments.setOverride(
                "Caf\u{E9} test", user: one, variation: forced, in: .acmeProduction)
            let otherNow = try await store.assignments.evaluate(other, in: .acmeProduction).first {
                $0.feature == "Caf\u{E9} test"
            }
            #expect(otherNow?.reason == .bucket && otherNow?.variation == pinnedOther.assignments[0].variation)
        }
        #expect(try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments).isEmpty)
    }

    @Test(
        "A feature is found by any spelling of its name, and a re-import in another spelling is the same feature, respelled"
    )
    func featureNamesFollowTheApp() async throws {
        let store = try await FeatureStore.makeWithTenants()
        for (written, other) in Self.equivalentPairs {
            let document = #"{"features": [{"name": "\#(written)", "test-variations": ["A", "B"]}]}"#
            try await store.importText(document)
            let salt = try await store.salt(of: written)
            // Found by either spelling, with the bytes as written.
            for spelling in [written, other] {
                #expect(
                    Array(try await store.catalog.feature(spelling, in: .acmeProduction).feature.name.utf8)
                        == Array(written.utf8))
            }
            _ = try await store.assignments.assign([UserID(rawValue: "u")], to: other, in: .acmeProduction)

            // The same file in the other spelling: the same feature (its salt, its users), now
            // spelled as the new file spells it, in the tables and in the revision alike.
            let respelled = #"{"features": [{"name": "\#(other)", "test-variations": ["A", "B"]}]}"#
            let outcome = try await store.importText(respelled)
            #expect(outcome.added.isEmpty && outcome.archived.isEmpty)
            #expect(try await store.salt(of: other) == salt)
            let snapshot = try await store.catalog.snapshot(of: .acmeProduction)
            #expect(Array(snapshot.document.features[0].name.utf8) == Array(other.utf8))
            #expect(snapshot.document.rendered() == (try await store.catalog.revision(of: .acmeProduction).document))
            #expect(try await store.recordedAssignments(of: written, in: .acmeProduction).count == 1)
            let rows = try await store.read { db in
                try db.value(Int.self, "SELECT count(*) FROM features WHERE name IN (?, ?)", [written, other])
            }
            #expect(rows == 1)
            // The audit says what changed: the name's spelling.
            let latest = try #require(try await store.catalog.revisions(of: .acmeProduction).first)
            let diff = try await store.catalog.diff(.acmeProduction, from: latest.number - 1, to: latest.number)
            #expect(diff.changes.map(\.field) == ["name"])
            // Back to an empty store for the next pair.
            try await store.importText(#"{"features": []}"#)
        }
    }

    @Test("A file with two spellings of one name is one feature to the app: the first is kept, with W220")
    func duplicateSpellingsAreOneName() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let outcome = try await store.importText(
            #"{"features": [{"name": "caf\u00e9"}, {"name": "cafe\u0301", "enabled": true}]}"#)
        #expect(outcome.warnings.map(\.code) == [.duplicateName])
        let features = try await store.catalog.snapshot(of: .acmeProduction).document.features
        #expect(features.map { Array($0.name.utf8) } == [Array("caf\u{E9}".utf8)])
    }

    @Test("A variation respelled in NFD keeps its users, and a later bias change moves them with deltas that match")
    func respelledVariationMovesWithMatchingDeltas() async throws {
        // Given users recorded in "Caf\u{E9}" (NFC bytes)
        let store = try await FeatureStore.makeWithTenants()
        let nfc = "Caf\u{E9}"
        let nfd = nfc.decomposedForTest
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["\#(nfc)", "B"], "test-biases": [50, 50]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(400), to: "t", in: .acmeProduction)

        // When the file respells the variation in NFD (the same to the app: nobody moves), then a
        // bias change moves users out of it
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["\#(nfd)", "B"], "test-biases": [50, 50]}]}"#)
        let outcome = try await store.catalog.setBiases(
            [20, 80], of: "t", in: .acmeProduction, options: EditOptions(actor: "test"))

        // Then the movers left the NFC group, as their rows held it, and the deltas agree by bytes
        #expect(outcome.plans.first?.moves.contains { $0.recordedUsers > 0 } == true)
        #expect(try await store.read(MigrationFixtureTests.deltasDisagreeingWithAssignments).isEmpty)
    }
}
