import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Typed configs")
struct ConfigTests {
    static let features = #"""
        {"features": [
            {"name": "Onboarding", "test-variations": ["Group A", "Group B"], "test-biases": [50, 50]},
            {"name": "Dark mode", "enabled": false},
            {"name": "Pro", "unlocked": false}
        ]}
        """#

    static let options = EditOptions(actor: "test")

    static func config(_ text: String) throws -> Config {
        let name = try #require(JSONParser.parse(Array(text.utf8)).member("name")).node.value
        guard case .string(let configName) = name else { throw ConfigsRefused([]) }
        return try ConfigsDecoder.decodeConfig(Array(text.utf8), name: configName).0
    }

    static func store() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(features)
        for text in [
            #"{"name": "mainViewTitle", "type": "string", "default": "Welcome", "follows": "Onboarding", "values": {"Group A": "Welcome", "Group B": "Hello"}}"#,
            #"{"name": "numberOfItems", "type": "int", "default": 15, "tags": ["ios"]}"#,
            #"{"name": "ratio", "type": "double", "default": 2, "follows": "Dark mode", "values": {"Enabled": 0.5}}"#,
            #"{"name": "proBadge", "type": "bool", "default": false, "follows": "Pro", "values": {"Unlocked": true}}"#,
            #"{"name": "theme", "type": "json", "default": {"accent": "red", "sizes": [1, 2.5]}, "tags": ["ios", "watch"]}"#,
        ] {
            _ = try await store.catalog.setConfig(try config(text), in: .acmeProduction, options: options)
        }
        return store
    }

    static func dictionary(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("A user's dictionary has every value of its type, and the value of the variation their features.json pins")
    func userDictionary() async throws {
        let store = try await Self.store()
        let user = UserID(rawValue: "user-7")
        let configs = try await store.assignments.userConfigs(for: user, in: .acmeProduction)
        let text = String(decoding: configs.bytes, as: UTF8.self)
        // Integers as integers, doubles always with a point, booleans as true/false.
        #expect(text.contains(#""numberOfItems": 15"#))
        #expect(text.contains(#""ratio": 2.0"#))
        #expect(text.contains(#""proBadge": false"#))
        #expect(text.contains(#""theme": {"accent":"red","sizes":[1,2.5]}"#))
        let pinned = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
        let group = try #require(pinned.assignments.first { $0.feature == "Onboarding" }).variation
        #expect(
            try Self.dictionary(configs.bytes)["mainViewTitle"] as? String == (group == "Group A" ? "Welcome" : "Hello")
        )
        // Recorded once, whichever document came first.
        #expect(try await store.allAssignmentEvents(user: user).count == 1)
    }

    @Test("An unlock, and enabling a flag, change the value of the configs that follow them")
    func followsFlagsAndUnlocks() async throws {
        let store = try await Self.store()
        let user = UserID(rawValue: "buyer")
        try await store.assignments.setUnlocked(
            true, feature: "Pro", user: user, source: nil, actor: "test", in: .acmeProduction)
        _ = try await store.catalog.setEnabled(true, feature: "Dark mode", in: .acmeProduction, options: Self.options)
        let dictionary = try Self.dictionary(
            try await store.assignments.userConfigs(for: user, in: .acmeProduction).bytes)
        #expect(dictionary["proBadge"] as? Bool == true)
        #expect(dictionary["ratio"] as? Double == 0.5)
        let shared = try Self.dictionary(try await store.catalog.sharedConfigs(in: .acmeProduction).bytes)
        #expect(shared["proBadge"] as? Bool == false)
        #expect(shared["ratio"] as? Double == 0.5)
        #expect(shared["mainViewTitle"] as? String == "Welcome")
    }

    @Test("?tag= keeps the configs tagged so, in order")
    func tags() async throws {
        let store = try await Self.store()
        let watch = String(
            decoding: try await store.catalog.sharedConfigs(in: .acmeProduction, tag: "watch").bytes, as: UTF8.self)
        #expect(watch.hasPrefix("{\n    \"theme\"") && !watch.contains("numberOfItems"))
        let ios = try Self.dictionary(try await store.catalog.sharedConfigs(in: .acmeProduction, tag: "ios").bytes)
        #expect(Set(ios.keys) == ["numberOfItems", "theme"])
    }

    @Test("A value of the wrong type, an unknown feature or variation, is refused with its path; nothing is written")
    func refusals() async throws {
        let store = try await Self.store()
        let before = try await store.fingerprint()
        do {
            _ = try Self.config(#"{"name": "count", "type": "int", "default": "12"}"#)
            Issue.record("a quoted integer was accepted")
        } catch let refused as ConfigsRefused {
            #expect(refused.issues.first?.pointer.description == "/default")
            #expect(refused.issues.first?.location == SourceLocation(line: 1, column: 45))
            #expect(refused.issues.first?.fix.contains("without quotes") == true)
        }
        for (text, pointer) in [
            (#"{"name": "x", "type": "string", "default": "a", "follows": "Nope", "values": {}}"#, "/follows"),
            (
                #"{"name": "x", "type": "string", "default": "a", "follows": "Onboarding", "values": {"Group C": "c"}}"#,
                "/values/Group C"
            ),
        ] {
            await #expect {
                try await store.catalog.setConfig(try Self.config(text), in: .acmeProduction, options: Self.options)
            } throws: { error in
                guard case ConfigError.refused(_, let issues) = error else { return false }
                return issues.map(\.pointer.description) == [pointer]
            }
        }
        #expect(try await store.fingerprint() == before)
    }

    @Test("A config built in code is checked as a file's is: a bad one is refused, and the others stay readable")
    func configsBuiltInCode() async throws {
        let store = try await Self.store()
        let before = try await store.fingerprint()
        for (config, pointer) in [
            (Config(name: "", type: .bool, defaultValue: .bool(true)), "/name"),
            (Config(name: "n", type: .int, defaultValue: .string("x")), "/default"),
            (Config(name: "n", type: .int, defaultValue: .int(1 << 60)), "/default"),
            (Config(name: "n", type: .string, defaultValue: .string("a\u{0}b")), "/default"),
            (Config(name: "n", type: .bool, defaultValue: .bool(true), tags: ["a,b"]), "/tags/0"),
            (Config(name: "n", type: .bool, defaultValue: .bool(true), description: "\u{0}"), "/description"),
        ] {
            await #expect {
                try await store.catalog.setConfig(config, in: .acmeProduction, options: Self.options)
            } throws: { error in
                guard case ConfigError.refused(_, let issues) = error else { return false }
                return issues.map(\.pointer.description) == [pointer]
            }
        }
        #expect(try await store.fingerprint() == before)
        #expect(try await store.catalog.configs(in: .acmeProduction).document.configs.count == 5)
    }

    @Test("Each change is a revision with audit rows; a rollback restores features and configs together")
    func revisionsAndRollback() async throws {
        let store = try await Self.store()
        // 1 import + 5 configs
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 6)
        let audit = try await store.auditRows(ofRevision: 3)
        #expect(audit.map(\.configName) == ["numberOfItems"] && audit.map(\.change) == ["added"])
        _ = try await store.catalog.setBiases([10, 90], of: "Onboarding", in: .acmeProduction, options: Self.options)
        // The feature edit keeps the configs.
        #expect(try await store.catalog.configs(in: .acmeProduction).document.configs.count == 5)
        let deleted = try await store.catalog.deleteConfig(named: "ratio", in: .acmeProduction, options: Self.options)
        #expect(deleted.revision == 8 && deleted.changes.map(\.kind) == [.removed])

        let back = try await store.catalog.rollBack(.acmeProduction, to: 2, options: Self.options)
        #expect(back.isApplied)
        let snapshot = try await store.catalog.configs(in: .acmeProduction)
        #expect(snapshot.document.configs.map(\.name) == ["mainViewTitle"])
        #expect(try await store.catalog.feature("Onboarding", in: .acmeProduction).feature.testBiases == [50, 50])
        let diff = try await store.catalog.diff(.acmeProduction, from: 8, to: 9)
        #expect(Set(diff.changes.compactMap(\.config)) == ["numberOfItems", "proBadge", "theme"])
    }

    @Test("Setting the same config again writes nothing; names are one name as apps compare them")
    func unchangedAndIdentity() async throws {
        let store = try await Self.store()
        let again = try await store.catalog.setConfig(
            try Self.config(#"{"name": "numberOfItems", "type": "int", "default": 15, "tags": ["ios"]}"#),
            in: .acmeProduction, options: Self.options)
        #expect(again.isUnchanged && again.revision == 6)
        // "Café" in NFC, then in NFD: the same key to the app, so the second replaces the first.
        _ = try await store.catalog.setConfig(
            try Self.config(#"{"name": "Caf\u00e9", "type": "bool", "default": true}"#), in: .acmeProduction,
            options: Self.options)
        _ = try await store.catalog.setConfig(
            try Self.config(#"{"name": "Cafe\u0301", "type": "bool", "default": false}"#), in: .acmeProduction,
            options: Self.options)
        let names = try await store.catalog.configs(in: .acmeProduction).document.configs.map(\.name)
        #expect(names.count == 6 && names.last == "Cafe\u{301}")
    }

    @Test(
        "One user, one group: features.json, configs.json and OFREP agree for every user of a 1 000-user sample, recorded once"
    )
    func invariantOverASample() async throws {
        let store = try await Self.store()
        // Agreement is the point, not scale: a thousand users cover the three orders of asking.
        let users = UserID.numbered(1_000)
        for (index, user) in users.enumerated() {
            // Each user asks in one of three orders: configs, features.json, OFREP first.
            var configs: UserConfigs?
            var pinned: PinnedDocument?
            var flags: FlagEvaluations?
            for step in [0, 1, 2].map({ ($0 + index) % 3 }) {
                switch step {
                case 0: configs = try await store.assignments.userConfigs(for: user, in: .acmeProduction)
                case 1: pinned = try await store.assignments.pinnedDocument(for: user, in: .acmeProduction)
                default:
                    flags = try await store.assignments.evaluateFlags(for: FlagContext(user: user), in: .acmeProduction)
                }
            }
            let group = pinned?.assignments.first { $0.feature == "Onboarding" }?.variation
            let title = try Self.dictionary(configs!.bytes)["mainViewTitle"] as? String
            let byKey = Dictionary(
                uniqueKeysWithValues: flags!.flags.compactMap { try? $0.get() }.map { ($0.key, $0) })
            guard title == (group == "Group A" ? "Welcome" : "Hello"), byKey["Onboarding"]?.variant == group,
                byKey["mainViewTitle"]?.value == .string(title ?? ""), byKey.count == 3 + 5
            else {
                Issue.record(
                    "\(user): features.json pins \(group ?? "nothing"), configs.json says \(title ?? "nothing"), OFREP \(byKey["Onboarding"]?.variant ?? "nothing")"
                )
                return
            }
        }
        #expect(try await store.allAssignmentEvents().count == users.count)
    }
}
