import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

/// Configs a SwiftFeatureConfigs app declares, and configs an earlier version stored that no app
/// can take: every write path goes through `setConfig` or `importConfigs`.
@Suite("Declared configs and what apps can take, in the store")
struct DeclaredConfigTests {
    static let options = EditOptions(actor: "test")

    /// A store whose environment has the SwiftFeatureConfigs fixture's twelve declarations.
    static func declaredStore() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "Onboarding", "test-variations": ["A", "B"]}]}"#)
        try await importDeclarations(try fixture(), into: store)
        return store
    }

    static func fixture() throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Fixtures/swiftfeatureconfigs/featureConfigs.json")
        return Array(try Data(contentsOf: url))
    }

    @discardableResult
    static func importDeclarations(
        _ bytes: [UInt8], into store: FeatureStore, options: EditOptions = options
    ) async throws -> (DeclarationsMerge, ConfigsOutcome) {
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        let merge = DeclarationsMerge(try ConfigDeclarations.decode(bytes).configs, into: snapshot.document)
        var options = options
        options.expectedRevision = snapshot.revision ?? 0
        return (merge, try await store.catalog.importDeclarations(merge, in: .acmeProduction, options: options))
    }

    static func refusal(_ work: () async throws -> Void) async -> [ConfigIssue] {
        do {
            try await work()
        } catch ConfigError.refused(_, let issues) {
            return issues
        } catch {
            Issue.record("expected a refusal, got \(error)")
        }
        return []
    }

    @Test("A declared Int can't become a string unless forced: apps would skip it and show their compiled default")
    func retypeRefused() async throws {
        let store = try await Self.declaredStore()
        let before = try await store.catalog.configs(in: .acmeProduction)
        var retyped = try #require(before.document.config(named: "numberOfCellsToDisplaySomeWhere"))
        retyped.type = .string
        retyped.defaultValue = .string("15")
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(retyped, in: .acmeProduction, options: Self.options)
        }
        #expect(issues.map(\.pointer.description) == ["/type"])
        #expect(issues.first?.message.contains("as? Int") == true)
        #expect(try await store.catalog.configs(in: .acmeProduction).revision == before.revision, "nothing written")

        var forced = Self.options
        forced.isForced = true
        let outcome = try await store.catalog.setConfig(retyped, in: .acmeProduction, options: forced)
        #expect(outcome.isApplied)
        let shared = String(decoding: try await store.catalog.sharedConfigs(in: .acmeProduction).bytes, as: UTF8.self)
        #expect(shared.contains(#""numberOfCellsToDisplaySomeWhere": "15""#))
        // The app still declares Int: the declaration stays on record (forcedRetypeKept goes on).
        let after = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(named: retyped.name))
        #expect(after.declaration?.type == .int)
    }

    @Test("A Float takes 0.5 but not 0.1, which `as? Float` skips; the declared 12.4 itself stays")
    func floatValues() async throws {
        let store = try await Self.declaredStore()
        var config = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(named: "specialFloatValue"))
        #expect(config.defaultValue == .double(12.4))
        config.defaultValue = .double(0.1)
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(config, in: .acmeProduction, options: Self.options)
        }
        #expect(issues.map(\.pointer.description) == ["/default"])
        #expect(issues.first?.message.contains("Float") == true)
        config.defaultValue = .double(0.5)
        #expect(try await store.catalog.setConfig(config, in: .acmeProduction, options: Self.options).isApplied)
    }

    @Test("A config written without its declaration (an API body, a configs file) keeps the stored one")
    func declarationKept() async throws {
        let store = try await Self.declaredStore()
        let (body, _) = try ConfigsDecoder.decodeConfig(
            Array(#"{"type": "int", "default": 20, "tags": ["ios"]}"#.utf8), name: "numberOfCellsToDisplaySomeWhere")
        #expect(body.declaration == nil)
        _ = try await store.catalog.setConfig(body, in: .acmeProduction, options: Self.options)
        let stored = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(
                named: "numberOfCellsToDisplaySomeWhere"))
        #expect(stored.declaration == ConfigDeclaration(type: .int, defaultValue: .int(12)))
        #expect(stored.defaultValue == .int(20))
        // A configs file without `declared` keeps them too: export, drop the key, import.
        var file = try await store.catalog.configs(in: .acmeProduction).document
        for index in file.configs.indices { file.configs[index].declaration = nil }
        let outcome = try await store.catalog.importConfigs(file, in: .acmeProduction, options: Self.options)
        #expect(outcome.isUnchanged)
    }

    @Test("The unchanged declaration file imported again after the team's edits changes nothing")
    func reimportKeepsEdits() async throws {
        let store = try await Self.declaredStore()
        var cells = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(
                named: "numberOfCellsToDisplaySomeWhere"))
        cells.defaultValue = .int(20)
        cells.tags = ["ios"]
        cells.follows = "Onboarding"
        cells.values = [Config.Variant(variation: "B", value: .int(30))]
        cells.description = "Cells on the home screen"
        _ = try await store.catalog.setConfig(cells, in: .acmeProduction, options: Self.options)
        let before = try await store.catalog.configs(in: .acmeProduction)
        let (merge, outcome) = try await Self.importDeclarations(try Self.fixture(), into: store)
        #expect(merge.steps.isEmpty && merge.unchanged == 12)
        #expect(outcome.isUnchanged)
        #expect(try await store.catalog.configs(in: .acmeProduction) == before)
    }

    @Test("A re-import that changes a declared type is refused unless forced, and names the config")
    func reimportRetypeNeedsForce() async throws {
        let store = try await Self.declaredStore()
        let text = String(decoding: try Self.fixture(), as: UTF8.self).replacingOccurrences(
            of: #""type":"Int","#, with: #""type":"String","#)
        let issues = await Self.refusal { try await Self.importDeclarations(Array(text.utf8), into: store) }
        #expect(issues.map(\.config) == ["numberOfCellsToDisplaySomeWhere"])
        #expect(issues.map(\.pointer.description) == ["/type"], "located in the config it names")
        var forced = Self.options
        forced.isForced = true
        let (merge, outcome) = try await Self.importDeclarations(Array(text.utf8), into: store, options: forced)
        #expect(merge.steps.map(\.kind) == [.retyped])
        #expect(outcome.isApplied)
        let config = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(
                named: "numberOfCellsToDisplaySomeWhere"))
        #expect(config.type == .string && config.defaultValue == .string("12") && config.declaration?.type == .string)
    }

    @Test(
        "A null an earlier version stored is served without it, reported, and gone once the configs are written again")
    func storedNulls() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "Dark mode", "enabled": true}]}"#)
        let stored =
            #"{"configs": [{"name": "theme", "type": "json", "default": {"accent": null, "size": 8, "list": [1, null]}}]}"#
        try await store.write { db in
            let scope = try db.environments.scope(of: .acmeProduction)
            let latest = try #require(try db.environments.revision(nil, in: scope))
            try db.environments.insertRevision(
                number: latest.number + 1, kind: .edit, actor: "an earlier version",
                message: RevisionMessage("configs an earlier version took", else: ""),
                document: Array(latest.document), configs: Array(stored.utf8), targeting: nil, changes: [], in: scope,
                at: Date())
        }
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        #expect(
            snapshot.warnings.map(\.pointer.description) == ["/configs/0/default/accent", "/configs/0/default/list/1"])
        let shared = String(decoding: try await store.catalog.sharedConfigs(in: .acmeProduction).bytes, as: UTF8.self)
        #expect(!shared.contains("null") && shared.contains(#""theme": {"size":8,"list":[1]}"#), "\(shared)")
        let user = String(
            decoding: try await store.assignments.userConfigs(for: UserID(rawValue: "u1"), in: .acmeProduction).bytes,
            as: UTF8.self
        )
        #expect(!user.contains("null"))
        #expect(try await store.catalog.configWarnings().map(\.path) == [.acmeProduction])

        // Writing any config stores the configs as they are served; the audit names each null removed.
        let outcome = try await store.catalog.setConfig(
            Config(name: "count", type: .int, defaultValue: .int(1)), in: .acmeProduction, options: Self.options)
        #expect(
            outcome.changes.filter { $0.kind == .removed && $0.before == .null }.map(\.field) == [
                "/configs/0/default/accent", "/configs/0/default/list/1",
            ])
        #expect(try await store.catalog.configs(in: .acmeProduction).warnings.isEmpty)
        #expect(try await store.catalog.configWarnings().isEmpty)

        // A rollback to the revision with the nulls restores its configs as they are served.
        let withNulls = outcome.revision - 1
        let rollback = try await store.catalog.rollBack(.acmeProduction, to: withNulls, options: Self.options)
        #expect(try await store.catalog.configs(in: .acmeProduction).warnings.isEmpty)
        #expect(try await store.catalog.configWarnings().isEmpty)
        let audit = try await store.auditRows(ofRevision: rollback.revision)
        #expect(
            audit.filter { $0.change == "removed" && $0.beforeJSON == "null" }.compactMap(\.field).sorted() == [
                "/configs/0/default/accent", "/configs/0/default/list/1",
            ], "\(audit)")
    }

    /// A json value `levels` objects deep.
    static func nested(_ levels: Int) -> JSONObject {
        (1..<levels).reduce(["a": .number(1)]) { inner, _ in ["a": .object(inner)] }
    }

    /// Writes a revision whose configs are `bytes`, as an earlier version (or damage) left them.
    static func storeConfigs(_ bytes: String, in store: FeatureStore) async throws {
        try await store.write { db in
            let scope = try db.environments.scope(of: .acmeProduction)
            let latest = try #require(try db.environments.revision(nil, in: scope))
            try db.environments.insertRevision(
                number: latest.number + 1, kind: .edit, actor: "an earlier version",
                message: RevisionMessage("configs as found", else: ""),
                document: Array(latest.document), configs: Array(bytes.utf8), targeting: nil, changes: [], in: scope,
                at: Date())
        }
    }

    @Test(
        "A json value an earlier version stored 511 levels deep still reads: served, reported, and the config can be deleted"
    )
    func storedDeepValue() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "Dark mode", "enabled": true}]}"#)
        let deep = JSONWriter(style: .compact).string(of: .object(Self.nested(JSONParser.maximumDepth - 1)))
        try await Self.storeConfigs(
            #"{"configs": [{"name": "deep", "type": "json", "default": \#(deep)}, {"name": "count", "type": "int", "default": 3}]}"#,
            in: store)
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        #expect(snapshot.document.configs.map(\.name) == ["deep", "count"])
        #expect(snapshot.warnings.map(\.message) == ["\(ConfigValue.depthProblem.message): served as it is"])
        #expect(try await store.catalog.configWarnings().map(\.path) == [.acmeProduction])
        let shared = String(decoding: try await store.catalog.sharedConfigs(in: .acmeProduction).bytes, as: UTF8.self)
        #expect(shared.contains(#""count": 3"#))
        _ = try await store.assignments.userConfigs(for: UserID(rawValue: "u1"), in: .acmeProduction)
        // A write of another config leaves it as it is; deleting it clears the warning.
        _ = try await store.catalog.setConfig(
            Config(name: "count", type: .int, defaultValue: .int(4)), in: .acmeProduction, options: Self.options)
        _ = try await store.catalog.deleteConfig(named: "deep", in: .acmeProduction, options: Self.options)
        #expect(try await store.catalog.configWarnings().isEmpty)
    }

    @Test(
        "Configs a revision keeps that no longer decode are that environment's reported error: served without them, refused to partial writes, replaced by an import"
    )
    func undecodableStoredConfigs() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "Dark mode", "enabled": true}]}"#)
        try await Self.storeConfigs(#"{"configs": [{"name": "x", "type": "json", "default": {"a": [}}]}"#, in: store)
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        #expect(snapshot.document.configs.isEmpty)
        #expect(snapshot.warnings.count == 1 && snapshot.warnings.first?.severity == .error)
        #expect(snapshot.warnings.first?.message.contains("do not decode") == true)
        #expect(try await store.catalog.configWarnings().map(\.path) == [.acmeProduction])
        let served = try await store.catalog.sharedConfigs(in: .acmeProduction).bytes
        #expect(try JSONParser.parse(served).value == .object(JSONObject()))
        _ = try await store.assignments.userConfigs(for: UserID(rawValue: "u1"), in: .acmeProduction)
        let refused = await Self.refusal {
            _ = try await store.catalog.setConfig(
                Config(name: "count", type: .int, defaultValue: .int(4)), in: .acmeProduction, options: Self.options)
        }
        #expect(refused.first?.message.contains("do not decode") == true)
        _ = try await store.catalog.importConfigs(
            ConfigsDocument(configs: [Config(name: "count", type: .int, defaultValue: .int(4))]), in: .acmeProduction,
            options: Self.options)
        #expect(try await store.catalog.configs(in: .acmeProduction).document.configs.map(\.name) == ["count"])
        #expect(try await store.catalog.configWarnings().isEmpty)
    }

    @Test(
        "A declaration file imported as a release is what that release is served: its declared keys, none whose key is no getter, nothing added later"
    )
    func releasesServeWhatTheyDeclare() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "Onboarding", "test-variations": ["A", "B"]}]}"#)
        let declarations = try ConfigDeclarations.decode(try Self.fixture())
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        let merge = DeclarationsMerge(
            declarations.configs, into: snapshot.document, release: "5.2",
            leavingOut: declarations.keysWithoutGetters)
        let outcome = try await store.catalog.importDeclarations(merge, in: .acmeProduction, options: Self.options)
        #expect(outcome.changes.contains { $0.field == "/releases/5.2" && $0.kind == .added })
        // The next release's config, set before 5.3 ships: 5.2 must never be served it.
        _ = try await store.catalog.setConfig(
            Config(name: "newInFiveThree", type: .bool, defaultValue: .bool(true)), in: .acmeProduction,
            options: Self.options)
        let expected = declarations.configs.map(\.name).filter { !declarations.keysWithoutGetters.contains($0) }
        #expect(expected.count == 8)
        let shared = try await store.catalog.sharedConfigs(in: .acmeProduction, release: "5.2")
        #expect(shared.entries.map(\.key) == expected)
        let user = try await store.assignments.userConfigs(
            for: UserID(rawValue: "u1"), in: .acmeProduction, release: "5.2")
        #expect(user.entries.map(\.key) == expected)
        #expect(
            try await store.catalog.sharedConfigs(in: .acmeProduction).entries.count == 13, "without a release, all")
        // An unknown release is refused, and its user is not recorded.
        await #expect {
            try await store.assignments.userConfigs(for: UserID(rawValue: "u2"), in: .acmeProduction, release: "4.0")
        } throws: { error in
            guard case ConfigError.unknownRelease(_, "4.0", let known) = error else { return false }
            return known == ["5.2"]
        }
        #expect(try await store.recordedAssignments(of: "Onboarding")[UserID(rawValue: "u2")] == nil)
    }

    @Test(
        "After a forced retype, going back to the declared type needs no force, and a re-import keeps the team's type")
    func forcedRetypeKept() async throws {
        let store = try await Self.declaredStore()
        let name = "numberOfCellsToDisplaySomeWhere"
        let declared = try #require(try await store.catalog.configs(in: .acmeProduction).document.config(named: name))
        var retyped = declared
        retyped.type = .string
        retyped.defaultValue = .string("15")
        var forced = Self.options
        forced.isForced = true
        _ = try await store.catalog.setConfig(retyped, in: .acmeProduction, options: forced)
        // Another write of the string still needs force: the app reads an Int.
        var again = retyped
        again.defaultValue = .string("16")
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(again, in: .acmeProduction, options: Self.options)
        }
        #expect(issues.map(\.pointer.description) == ["/default"])
        // The unchanged declaration file keeps the forced type: no step, no refusal.
        let (merge, outcome) = try await Self.importDeclarations(try Self.fixture(), into: store)
        #expect(merge.steps.isEmpty && outcome.isUnchanged)
        // Back to the declared type: no force needed.
        var back = declared
        back.defaultValue = .int(15)
        #expect(try await store.catalog.setConfig(back, in: .acmeProduction, options: Self.options).isApplied)
    }

    @Test("A `declared` sent in a body or a configs file is ignored: only a declaration import sets one")
    func declaredFromInputIgnored() async throws {
        let store = try await Self.declaredStore()
        let (body, _) = try ConfigsDecoder.decodeConfig(
            Array(#"{"type": "double", "default": 0.1, "declared": {"type": "Double", "default": 0.1}}"#.utf8),
            name: "specialFloatValue")
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(body, in: .acmeProduction, options: Self.options)
        }
        #expect(issues.map(\.pointer.description) == ["/default"])
        var file = try await store.catalog.configs(in: .acmeProduction).document
        let index = try #require(file.index(of: "specialFloatValue"))
        file.configs[index].declaration = ConfigDeclaration(type: .double, defaultValue: .double(99))
        file.configs[index].description = "changed"
        _ = try await store.catalog.importConfigs(file, in: .acmeProduction, options: Self.options)
        let stored = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(named: "specialFloatValue"))
        #expect(stored.declaration == ConfigDeclaration(type: .float, defaultValue: .double(12.4)))
        #expect(stored.description == "changed")
    }

    @Test("A config whose feature is gone doesn't block a re-import that only updates what is on record")
    func staleConfigDoesNotBlockReimport() async throws {
        let store = try await Self.declaredStore()
        // The team's edit of isaEnabledKey: on, and following a test that a later import removes.
        var isa = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(named: "isaEnabledKey"))
        isa.defaultValue = .bool(true)
        isa.follows = "Onboarding"
        isa.values = [Config.Variant(variation: "B", value: .bool(false))]
        _ = try await store.catalog.setConfig(isa, in: .acmeProduction, options: Self.options)
        try await store.importText(#"{"features": []}"#)
        // The app's next release declares it on by default: only the declaration on record changes.
        let text = String(decoding: try Self.fixture(), as: UTF8.self).replacingOccurrences(
            of: #""default":"false""#, with: #""default":"true""#)
        let (merge, outcome) = try await Self.importDeclarations(Array(text.utf8), into: store)
        #expect(merge.steps.map(\.details) == [["keeps the team's default true (declared false → true)"]])
        #expect(outcome.isApplied)
        // A change of the stale config itself is checked, and refused while its feature is gone.
        var edited = try #require(
            try await store.catalog.configs(in: .acmeProduction).document.config(named: "isaEnabledKey"))
        edited.description = "ISAs"
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(edited, in: .acmeProduction, options: Self.options)
        }
        #expect(issues.map(\.pointer.description) == ["/follows"])
    }

    @Test("A control character in a config's name is refused: the name is the plist's key")
    func controlInName() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let issues = await Self.refusal {
            _ = try await store.catalog.setConfig(
                Config(name: "bell\u{7}", type: .int, defaultValue: .int(1)), in: .acmeProduction, options: Self.options
            )
        }
        #expect(issues.map(\.pointer.description) == ["/name"])
    }

    @Test(
        "setConfig and importConfigs refuse a null, a control character and a value nested too deep: the store checks what it stores"
    )
    func storeChecksWhatItStores() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let nulls = Config(name: "nulls", type: .json, defaultValue: .json(["a": .null]))
        let bell = Config(name: "bell", type: .string, defaultValue: .string("ding\u{7}"))
        let deep = Config(name: "deep", type: .json, defaultValue: .json(Self.nested(ConfigValue.maximumJSONDepth + 1)))
        for config in [nulls, bell, deep] {
            let issues = await Self.refusal {
                _ = try await store.catalog.setConfig(config, in: .acmeProduction, options: Self.options)
            }
            #expect(issues.count == 1)
            let imported = await Self.refusal {
                _ = try await store.catalog.importConfigs(
                    ConfigsDocument(configs: [config]), in: .acmeProduction, options: Self.options)
            }
            #expect(imported.map(\.pointer.description.count).allSatisfy { $0 > 0 })
        }
        #expect(try await store.catalog.configs(in: .acmeProduction).revision == nil, "nothing written")
    }
}
