import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Rules and segments in the store")
struct TargetingStoreTests {
    static let features = #"""
        {"features": [
            {"name": "Checkout", "test-variations": ["A", "B", "C"], "test-biases": [50, 50, 0]},
            {"name": "Dark mode", "enabled": true}
        ]}
        """#
    static let options = EditOptions(actor: "test")

    static func store() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(features)
        return store
    }

    static func rules(_ text: String) throws -> [TargetingRule] {
        try TargetingDecoder.decodeRules(Array(text.utf8)).rules
    }

    static let staff = Segment(
        name: "staff", description: "Employees", users: [UserID(rawValue: "u1"), UserID(rawValue: "u2")],
        clauses: [Clause(attribute: "email", op: .endsWith, values: [.string("@corp.com")])])

    /// Each audit row: revision number, feature_name, segment_name, field, change.
    func auditRows(_ store: FeatureStore) async throws -> [[String: String]] {
        try await store.read { db in
            try db.rows(
                """
                SELECT r.number, a.feature_name, a.segment_name, a.field, a.change FROM audit a
                JOIN revisions r ON r.id = a.revision_id ORDER BY a.id
                """
            ).map { row in
                var values: [String: String] = ["number": String(row["number"] as Int)]
                for column in ["feature_name", "segment_name", "field", "change"] {
                    if let value: String = row[column] { values[column] = value }
                }
                return values
            }
        }
    }

    @Test("A segment is a revision with audit rows; its users come back; features.json and configs stay")
    func segments() async throws {
        let store = try await Self.store()
        let before = try await store.catalog.revision(of: .acmeProduction)
        let outcome = try await store.catalog.setSegment(Self.staff, in: .acmeProduction, options: Self.options)
        #expect(outcome.isApplied && outcome.revision == before.number + 1)
        #expect(outcome.changes.map(\.segment) == ["staff"])
        let after = try await store.catalog.revision(of: .acmeProduction)
        #expect(after.document == before.document)
        let snapshot = try await store.catalog.targeting(in: .acmeProduction)
        #expect(snapshot.segments == [Self.staff] && snapshot.revision == after.number)
        let rows = try await auditRows(store).filter { $0["number"] == String(after.number) }
        #expect(rows.count == 1 && rows[0]["segment_name"] == "staff" && rows[0]["change"] == "added")

        // The same again changes nothing; another segment with the same users shares their list.
        #expect(try await store.catalog.setSegment(Self.staff, in: .acmeProduction, options: Self.options).isUnchanged)
        var copy = Self.staff
        copy.name = "staff-copy"
        _ = try await store.catalog.setSegment(copy, in: .acmeProduction, options: Self.options)
        #expect(try await store.read { db in try db.value(Int.self, "SELECT count(*) FROM segment_lists")! } == 1)

        // A changed segment: a row per field, the list by its digest and count.
        var changed = Self.staff
        changed.users.insert(UserID(rawValue: "u3"))
        let change = try await store.catalog.setSegment(changed, in: .acmeProduction, options: Self.options)
        #expect(change.changes.map(\.field) == ["users"])
        #expect(
            try await store.catalog.targeting(in: .acmeProduction).segments.first { $0.name == "staff" }?.users.count
                == 3)
    }

    @Test("Rules are checked against the feature and the segments; a refusal writes nothing")
    func rulesChecked() async throws {
        let store = try await Self.store()
        let revision = try await store.catalog.revision(of: .acmeProduction).number
        let refusals: [(String, String)] = [
            (#"{"rules": [{"id": "r", "serve": {"variation": "D"}}]}"#, "no variation \"D\""),
            (
                #"{"rules": [{"id": "r", "clauses": [{"operator": "inSegment", "values": ["ghosts"]}], "serve": {"variation": "A"}}]}"#,
                "no segment is named \"ghosts\""
            ),
            (#"{"rules": [{"id": "r", "serve": {"variation": "C"}}]}"#, "\"C\" owns no points"),
        ]
        for (text, message) in refusals {
            await #expect {
                try await store.catalog.setRules(
                    try Self.rules(text), ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
            } throws: { error in
                guard case TargetingError.refused(_, let issues) = error else { return false }
                return issues.contains { $0.message.contains(message) }
            }
        }
        await #expect(throws: DocumentError.self) {
            try await store.catalog.setRules([], ofFeature: "Nope", in: .acmeProduction, options: Self.options)
        }
        #expect(try await store.catalog.revision(of: .acmeProduction).number == revision)
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules.isEmpty)
    }

    @Test("Rules built in code hold only what reads back: a number for `before`, text for `versionEquals`, are refused")
    func rulesBuiltInCodeChecked() async throws {
        let store = try await Self.store()
        let revision = try await store.catalog.revision(of: .acmeProduction).number
        let clauses = [
            Clause(attribute: "signedUp", op: .before, values: [.number(1_700_000_000)]),
            Clause(attribute: "appVersion", op: .versionEquals, values: [.string("five")]),
            Clause(attribute: "age", op: .greaterThan, values: [.string("old")]),
        ]
        for clause in clauses {
            await #expect {
                try await store.catalog.setRules(
                    [TargetingRule(id: "r", clauses: [clause], serve: .variation("A"))], ofFeature: "Checkout",
                    in: .acmeProduction, options: Self.options)
            } throws: { error in
                guard case TargetingError.refused(_, let issues) = error else { return false }
                return issues.map(\.pointer.description) == ["/rules/0/clauses/0/values/0"]
            }
        }
        #expect(try await store.catalog.revision(of: .acmeProduction).number == revision)
        // The same values written the way the decoder reads them are taken.
        let taken = Clause(attribute: "signedUp", op: .before, values: [.string("2026-11-23T09:30:00Z")])
        _ = try await store.catalog.setRules(
            [TargetingRule(id: "r", clauses: [taken], serve: .variation("A"))], ofFeature: "Checkout",
            in: .acmeProduction, options: Self.options)
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules.count == 1)
    }

    @Test("Rules: applied with warnings, kept through feature and config edits, gone and back with rollbacks")
    func rulesThroughRevisions() async throws {
        let store = try await Self.store()
        _ = try await store.catalog.setSegment(Self.staff, in: .acmeProduction, options: Self.options)
        let rules = try Self.rules(
            #"{"rules": [{"id": "staff-b", "clauses": [{"operator": "inSegment", "values": ["staff"]}], "serve": {"variation": "B"}}, {"id": "all", "serve": {"split": [{"variation": "A", "weight": 10}, {"variation": "B", "weight": 90}]}}, {"id": "never", "serve": {"variation": "A"}}]}"#
        )
        let dryRun = try await store.catalog.setRules(
            rules, ofFeature: "Checkout", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))
        #expect(!dryRun.isApplied && dryRun.warnings.map(\.config) == ["never"])
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules.isEmpty, "a dry run writes nothing")
        let applied = try await store.catalog.setRules(
            rules, ofFeature: "Checkout", in: .acmeProduction, options: Self.options)
        #expect(applied.isApplied && applied.changes.map(\.feature) == ["Checkout"])
        #expect(applied.changes.first?.field == "rules")
        let withRules = applied.revision

        // A segment in use can't go.
        await #expect(throws: TargetingError.segmentInUse(.acmeProduction, name: "staff", rules: ["Checkout/staff-b"]))
        {
            try await store.catalog.deleteSegment(named: "staff", in: .acmeProduction, options: Self.options)
        }
        // Edits of features and configs carry the rules over.
        _ = try await store.importText(
            Self.features.replacingOccurrences(of: "\"enabled\": true", with: "\"enabled\": false"))
        _ = try await store.catalog.setConfig(
            Config(name: "items", type: .int, defaultValue: .int(3)), in: .acmeProduction, options: Self.options)
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules["Checkout"] == rules)

        // A rollback to before the rules takes them away, with audit rows; forward again brings them back.
        let back = try await store.catalog.rollBack(.acmeProduction, to: withRules - 1, options: Self.options)
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules.isEmpty)
        let rows = try await auditRows(store).filter { $0["number"] == String(back.revision) }
        #expect(
            rows.contains { $0["feature_name"] == "Checkout" && $0["field"] == "rules" && $0["change"] == "removed" })
        _ = try await store.catalog.rollBack(.acmeProduction, to: withRules, options: Self.options)
        #expect(try await store.catalog.targeting(in: .acmeProduction).featureRules["Checkout"] == rules)
        // `diff` between two revisions shows the rules that came.
        let diff = try await store.catalog.diff(.acmeProduction, from: withRules - 1, to: withRules)
        #expect(diff.changes.contains { $0.feature == "Checkout" && $0.field == "rules" && $0.kind == .added })

        // Stale If-Match: refused.
        await #expect(throws: DocumentError.self) {
            try await store.catalog.setRules(
                [], ofFeature: "Checkout", in: .acmeProduction,
                options: EditOptions(actor: "test", expectedRevision: withRules))
        }
    }
}
