import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

@testable import FlagpoleStore

/// Files written to hurt the store: each imports correctly, in time linear in its size, or is
/// refused without a write. At these sizes, a step that compares every element with every
/// other one takes minutes in a debug build (a 50 000-variation file took over 2 minutes in
/// release), where one pass takes a second.
@Suite("Hostile imports")
struct HostileImportTests {
    /// 100 000 features are decoded in FlagpoleCoreTests and imported by the release binary in the
    /// measurements of docs/DIAGNOSTICS.md (Limits); 20 000 keep this debug test short.
    @Test("20 000 features import, export as rendered and re-import unchanged")
    func manyFeatures() async throws {
        // Given a file of 20 000 small features of every kind
        let store = try await FeatureStore.makeOnFileWithTenants()
        let features = (0..<20_000).map { index -> String in
            switch index % 4 {
            case 0: #"{"name": "flag \#(index)", "enabled": true}"#
            case 1: #"{"name": "test \#(index)", "test-variations": ["A", "B"], "test-biases": [10, 90]}"#
            case 2: #"{"name": "mvt \#(index)", "test-variations": ["A", "B", "C"]}"#
            default: #"{"name": "unlock \#(index)", "unlocked": false, "section": "s"}"#
            }
        }
        let text = #"{"features": ["# + features.joined(separator: ",\n") + "]}"

        // When it is imported, then imported again as exported
        let outcome = try await store.importText(text)
        let exported = try await store.catalog.revision(of: .acmeProduction).document
        let again = try await store.catalog.importDocument(
            exported, into: .acmeProduction, options: ImportOptions(actor: "test"))

        // Then every feature is stored, and the export is stable
        #expect(outcome.added.count == 20_000)
        #expect(again.status == .unchanged(revision: 1))
        #expect(try await store.catalog.snapshot(of: .acmeProduction).document.features.count == 20_000)
    }

    @Test("20 000 top-level keys, changed on a second import, are diffed in one pass")
    func manyTopLevelKeys() async throws {
        let store = try await FeatureStore.makeWithTenants()
        for round in 0..<2 {
            let keys = (0..<20_000).map { #""k\#($0)": \#($0 + round)"# }.joined(separator: ", ")
            try await store.importText("{" + keys + #", "features": [{"name": "a"}]}"#)
        }
        let audit = try await store.auditRows(ofRevision: 2)
        #expect(audit.count == 20_000)
    }

    @Test("A test with 5 000 variations, re-ordered on a second import, re-evaluates its users in one sweep")
    func manyVariations() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let names = (0..<5_000).map { #""v\#($0)""# }
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["# + names.joined(separator: ",") + "]}]}")
        let users = UserID.numbered(500)
        _ = try await store.assignments.assign(users, to: "t", in: .acmeProduction)

        let outcome = try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["# + names.reversed().joined(separator: ",") + "]}]}")

        // Reversed, almost every user changes group, and every recorded one is in the group of its point
        #expect(outcome.reassigned > 450)
        let feature = try #require(try await store.catalog.snapshot(of: .acmeProduction).document.features.first)
        let assignments = try await store.recordedAssignments(of: "t")
        #expect(assignments.count == 500)
        #expect(assignments.values.allSatisfy { $0.variation == feature.assignmentRanges.variation(at: $0.point) })
        #expect(try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction).count == 5_000)
    }

    @Test(
        "The sweep over two tests' ranges finds exactly the intervals that pairing every range with every other finds")
    func sweepMatchesPairs() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            func ranges() -> VariationRanges {
                let count = Int.random(in: 1...6, using: &random)
                let biases = (0..<count).map { _ in [0, 0.5, 10, 25, 33.3, 50, 100].randomElement(using: &random)! }
                return VariationRanges(names: (0..<count).map { ["A", "B", "C", "a"][$0 % 4] }, biases: biases)
            }
            let (old, new) = (ranges(), ranges())
            var pairs: [String] = []
            for oldIndex in old.ranges.indices {
                for newIndex in new.ranges.indices where old.ranges[oldIndex].name != new.ranges[newIndex].name {
                    let (a, b) = (old.bounds(of: oldIndex), new.bounds(of: newIndex))
                    let (lower, upper) = (max(a.lower, b.lower), min(a.upper, b.upper))
                    if lower < upper {
                        pairs.append("\(lower) \(upper) \(old.ranges[oldIndex].name) \(new.ranges[newIndex].name)")
                    }
                }
            }
            let swept = old.changedIntervals(to: new).map { "\($0.lower) \($0.upper) \($0.from) \($0.to)" }
            #expect(swept == pairs, "\(old) → \(new)")
            var transitions: [String] = []
            for a in old.ranges where a.width > 0 {
                for b in new.ranges where b.width > 0 && a.name.lowercased() != b.name.lowercased() {
                    let overlap = min(a.upper, b.upper) - max(a.lower, b.lower)
                    if overlap > 0 { transitions.append("\(a.name) \(b.name) \(overlap)") }
                }
            }
            #expect(
                old.transitions(to: new).map { "\($0.from) \($0.to) \($0.share)" } == transitions, "\(old) → \(new)")
        }
    }

    @Test("Variations equal as Unicode text but stored as different bytes are counted without a crash")
    func canonicallyEqualVariations() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "t", "test-variations": ["\u00e9", "e\u0301"]}]}"#)
        _ = try await store.assignments.assign(UserID.numbered(200), to: "t", in: .acmeProduction)
        let counts = try await store.assignments.assignmentCounts(of: "t", in: .acmeProduction)
        #expect(counts.reduce(0) { $0 + $1.users } == 200)
    }

    @Test("Nesting at the parser's limit in an unknown key and a top-level key is stored and exported whole")
    func deepUnknownValues() async throws {
        let store = try await FeatureStore.makeOnFileWithTenants()
        let inFeature = String(repeating: "[", count: 509) + "1" + String(repeating: "]", count: 509)
        let atTop = String(repeating: #"{"k": "#, count: 511) + "1" + String(repeating: "}", count: 511)
        let text = #"{"top": "# + atTop + #", "features": [{"name": "a", "deep": "# + inFeature + "}]}"
        let document = try #require(DocumentDecoder.decode(Array(text.utf8)).document)

        try await store.importText(text)

        #expect(try await store.catalog.snapshot(of: .acmeProduction).document == document)
        #expect(try await store.catalog.revision(of: .acmeProduction).document == document.rendered())
    }
}
