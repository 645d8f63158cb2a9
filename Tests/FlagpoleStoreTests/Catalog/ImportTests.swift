import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Import")
struct ImportTests {
    @Test(
        "Every real fixture imports, exports its rendering, and re-imports to the same state", arguments: Fixtures.valid
    )
    func realFixtureRoundTrip(name: String) async throws {
        // Given a store and a real file
        let store = try await FeatureStore.makeWithTenants()
        let bytes = try Fixtures.bytes(name)
        let expected = try #require(DocumentDecoder.decode(bytes).document)

        // When it is imported
        let first = try await store.catalog.importDocument(
            bytes, into: .acmeProduction, options: ImportOptions(actor: "test"))

        // Then it is revision 1, its tables hold the file's model, and the export is its rendering
        #expect(first.status == .applied(revision: 1))
        #expect(first.added == expected.features.map(\.name))
        let snapshot = try await store.catalog.snapshot(of: .acmeProduction)
        #expect(snapshot.document == expected)
        let exported = try await store.catalog.revision(of: .acmeProduction).document
        #expect(exported == expected.rendered())

        // And re-importing the export changes nothing and creates no revision
        let again = try await store.catalog.importDocument(
            exported, into: .acmeProduction, options: ImportOptions(actor: "test"))
        #expect(again.status == .unchanged(revision: 1))
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)
        #expect(try await store.catalog.snapshot(of: .acmeProduction).document == expected)
    }

    @Test(
        "A refused file leaves the database exactly as it was",
        arguments: [
            Fixtures.commented, "features-null", "duplicate-key",
        ])
    func refusedImportChangesNothing(case name: String) async throws {
        // Given an environment at revision 1
        let store = try await FeatureStore.makeWithTenants()
        _ = try await store.catalog.importDocument(
            try Fixtures.bytes("rwbutler-HEAD-Features.json"), into: .acmeProduction,
            options: ImportOptions(actor: "test"))
        let before = try await store.fingerprint()
        let exportBefore = try await store.catalog.revision(of: .acmeProduction).document

        // When a file the app would reject is imported
        let bytes: [UInt8] =
            switch name {
            case "features-null": Array(#"{"features": null}"#.utf8)
            case "duplicate-key": Array(#"{"features": [{"name": "a", "enabled": true, "enabled": false}]}"#.utf8)
            default: try Fixtures.bytes(name)
            }
        let error = await #expect(throws: DocumentError.self) {
            try await store.catalog.importDocument(bytes, into: .acmeProduction, options: ImportOptions(actor: "test"))
        }

        // Then it is refused with errors, and nothing changed
        guard case .importRefused(_, let diagnostics, false) = error else {
            Issue.record("expected importRefused, got \(String(describing: error))")
            return
        }
        #expect(diagnostics.hasErrors)
        #expect(try await store.fingerprint() == before)
        #expect(try await store.catalog.revision(of: .acmeProduction).document == exportBefore)
    }

    @Test("The commented fixture is refused at the comment's line and column")
    func commentedFixtureIsRefusedWithItsPosition() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let error = await #expect(throws: DocumentError.self) {
            try await store.catalog.importDocument(
                try Fixtures.bytes(Fixtures.commented), into: .acmeProduction, options: ImportOptions(actor: "test"))
        }
        guard case .importRefused(_, let diagnostics, _) = error else { return }
        #expect(diagnostics.map(\.code) == [.notStrictJSON])
        #expect(diagnostics.first?.location == SourceLocation(line: 7, column: 9))
        #expect(try await store.catalog.revisions(of: .acmeProduction).isEmpty)
    }

    @Test("--strict refuses a file with warnings and writes nothing; without it the same file imports")
    func strictRefusesWarnings() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let file = #"{"features": [{"name": "a", "test-variations": ["x", "y"], "test-biases": [50, 49]}]}"#
        let error = await #expect(throws: DocumentError.self) { try await store.importText(file, strict: true) }
        guard case .importRefused(_, let diagnostics, true) = error else {
            Issue.record("expected a strict refusal, got \(String(describing: error))")
            return
        }
        #expect(diagnostics.map(\.code) == [.biasSumShort])
        #expect(try await store.catalog.revisions(of: .acmeProduction).isEmpty)

        let outcome = try await store.importText(file)
        #expect(outcome.status == .applied(revision: 1))
        #expect(outcome.warnings.map(\.code) == [.biasSumShort])
    }

    @Test("A dry run reports the change and writes nothing")
    func dryRunWritesNothing() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "a"}, {"name": "b"}]}"#)
        let before = try await store.fingerprint()

        let outcome = try await store.importText(
            #"{"features": [{"name": "a", "enabled": true}, {"name": "c"}]}"#, dryRun: true)

        #expect(outcome.status == .planned(revision: 2))
        #expect(outcome.added == ["c"])
        #expect(outcome.changed == ["a"])
        #expect(outcome.archived == ["b"])
        #expect(outcome.warnings.map(\.code) == [.featureAbsent])
        #expect(try await store.fingerprint() == before)
    }

    @Test("An archived feature keeps its salt and gets it back when it returns")
    func archiveAndReturnKeepSalt() async throws {
        // Given two features
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "a"}, {"name": "b"}]}"#)
        let salts = Dictionary(
            uniqueKeysWithValues: try await store.storedFeatures().map { ($0.feature.name, $0.salt) })
        #expect(salts["a"] != salts["b"])

        // When b leaves the file, it is archived with a warning that devices keep it
        let removal = try await store.importText(#"{"features": [{"name": "a"}]}"#)
        #expect(removal.archived == ["b"])
        #expect(removal.warnings.map(\.code) == [.featureAbsent])
        #expect(removal.warnings.first?.feature == "b")
        #expect(try await store.catalog.snapshot(of: .acmeProduction).document.features.map(\.name) == ["a"])

        // Then when it comes back it has its old salt, and a new feature gets a new one
        let comeback = try await store.importText(#"{"features": [{"name": "b"}, {"name": "a"}, {"name": "c"}]}"#)
        #expect(comeback.added == ["b", "c"])
        #expect(comeback.returned == ["b"])
        let after = Dictionary(
            uniqueKeysWithValues: try await store.storedFeatures().map { ($0.feature.name, $0.salt) })
        #expect(after["a"] == salts["a"])
        #expect(after["b"] == salts["b"])
        #expect(after["c"] != nil && after["c"] != salts["a"] && after["c"] != salts["b"])
        #expect(try await store.catalog.snapshot(of: .acmeProduction).document.features.map(\.name) == ["b", "a", "c"])
    }

    @Test("Identical content creates no revision, even when the file is laid out differently")
    func identicalContentCreatesNoRevision() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "a", "enabled": true, "test-variation-assignment": 12}]}"#)
        let outcome = try await store.importText(
            "{\n  \"features\" : [ { \"enabled\" : true , \"name\" : \"a\" } ]\n}\n")
        #expect(outcome.status == .unchanged(revision: 1))
        #expect(try await store.catalog.revisions(of: .acmeProduction).map(\.number) == [1])
    }

    @Test("Audit rows describe each change, field by field, with values before and after")
    func auditRowsDescribeChanges() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"version": 1, "features": [{"name": "a", "enabled": false}, {"name": "b"}]}"#)
        let first = try await store.auditRows(ofRevision: 1)
        #expect(first.map(\.featureName) == ["a", "b", nil])
        #expect(first.map(\.change) == ["added", "added", "added"])
        #expect(first[0].afterJSON == #"{"name":"a","enabled":false}"#)
        #expect(first[2].field == "version")

        try await store.importText(
            #"{"version": 2, "features": [{"name": "a", "enabled": true, "section": "QA"}, {"name": "c"}]}"#)
        let rows = try await store.auditRows(ofRevision: 2)
        let described = rows.map {
            "\($0.featureName ?? "-") \($0.field ?? "*") \($0.change) \($0.beforeJSON ?? "∅") → \($0.afterJSON ?? "∅")"
        }
        #expect(
            described == [
                "a section added ∅ → \"QA\"",
                "a enabled changed false → true",
                #"c * added ∅ → {"name":"c"}"#,
                #"b * removed {"name":"b"} → ∅"#,
                "- version changed 1 → 2",
            ])
    }

    @Test("Moving the features key among the top-level keys is a revision with its audit row")
    func topLevelOrderIsAudited() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "a"}], "version": 1}"#)
        let outcome = try await store.importText(#"{"version": 1, "features": [{"name": "a"}]}"#)
        #expect(outcome.status == .applied(revision: 2))
        let rows = try await store.auditRows(ofRevision: 2)
        #expect(
            rows.map {
                "\($0.featureName ?? "-") \($0.field ?? "*") \($0.change) \($0.beforeJSON ?? "∅") → \($0.afterJSON ?? "∅")"
            } == [
                #"- * changed ["features","version"] → ["version","features"]"#
            ])
        #expect(
            try await store.catalog.revision(of: .acmeProduction).document.starts(
                with: Array("{\n    \"version\": 1,".utf8)))
    }

    @Test("The tables and the revision's document always agree")
    func tablesMatchRevisionDocument() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let steps = [
            #"{"features": [{"name": "a", "test-variations": ["x", "y", "z"], "test-biases": [50, 30], "labels": ["l", null, "n", "o"]}], "z": {"k": [1, 2.5]}}"#,
            #"{"top": true, "features": [{"name": "b", "unlocked": false, "type": {"feature-flag": "f", "extra": 1}, "custom": null}, {"name": "a"}]}"#,
            #"[{"name": "a", "test-variations": ["on"]}]"#,
        ]
        for step in steps {
            try await store.importText(step)
            let snapshot = try await store.catalog.snapshot(of: .acmeProduction)
            let revision = try await store.catalog.revision(of: .acmeProduction)
            #expect(snapshot.document.rendered() == revision.document)
            #expect(snapshot.document == DocumentDecoder.decode(Array(step.utf8)).document)
        }
    }

    @Test("Re-ordered variations and a flag turned into a test are reported against the store")
    func reviewWarnings() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "flag", "enabled": true}, {"name": "mvt", "test-variations": ["A", "B", "C"], "test-biases": [70, 20, 10]}]}"#
        )
        let outcome = try await store.importText(
            #"{"features": [{"name": "flag", "test-variations": ["A", "B"]}, {"name": "mvt", "test-variations": ["C", "B", "A"], "test-biases": [10, 20, 70]}]}"#
        )
        #expect(outcome.warnings.map(\.code) == [.flagBecameTest, .needlessMoves])
        #expect(outcome.warnings[1].pointer.description == "/features/1/test-variations")
        #expect(outcome.warnings[1].location == SourceLocation(line: 1, column: 99))
    }

    @Test("A flag that returns from the archive as a test is still reported: devices kept it (W251)")
    func returningFlagBecomesTest() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "f", "enabled": true}, {"name": "g"}]}"#)
        try await store.importText(#"{"features": [{"name": "g"}]}"#)
        let outcome = try await store.importText(
            #"{"features": [{"name": "g"}, {"name": "f", "test-variations": ["A", "B"]}]}"#)
        #expect(outcome.returned == ["f"])
        #expect(outcome.warnings.map(\.code) == [.flagBecameTest])
        #expect(outcome.warnings.first?.feature == "f")
    }

    @Test("Growing the last group of a roll-out moves only the growth: no W252")
    func growingLastGroupIsQuiet() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["Disabled", "Enabled"], "test-biases": [90, 10]}]}"#)
        let outcome = try await store.importText(
            #"{"features": [{"name": "t", "test-variations": ["Disabled", "Enabled"], "test-biases": [80, 20]}]}"#)
        #expect(outcome.warnings.isEmpty)
        #expect(outcome.changed == ["t"])
    }

    @Test("Importing into an unknown tenant or environment says so and how to create it")
    func unknownEnvironment() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let missing = EnvironmentPath(
            tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "staging"))
        let error = await #expect(throws: TenancyError.self) {
            try await store.importText(#"{"features": []}"#, into: missing)
        }
        #expect(error?.description.contains("flagpole env create staging --tenant acme") == true)
        #expect(error?.description.contains("it has: production") == true)
    }
}
