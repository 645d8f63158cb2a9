import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Environment marking")
struct EnvironmentMarkingTests {
    @Test("A new environment has no colour and needs no reason")
    func defaults() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let environment = try await store.access.environment(.acmeProduction)
        #expect(environment.marking == EnvironmentMarking())
    }

    @Test("The colour is kept in lowercase and the reason flag as set, apart from the delivery settings")
    func updateKeepsBoth() async throws {
        // Given
        let store = try await FeatureStore.makeWithTenants()
        let before = try await store.access.deliveryState(of: .acmeProduction)

        // When
        let colour = try EnvironmentColour(validating: "#C0392B")
        try await store.access.updateMarking(of: .acmeProduction) { marking in
            marking.colour = colour
            marking.requiresReason = true
        }

        // Then
        let environment = try await store.access.environment(.acmeProduction)
        #expect(environment.marking.colour?.rawValue == "#c0392b")
        #expect(environment.marking.requiresReason)
        #expect(
            try await store.access.environments(of: EnvironmentPath.acmeProduction.tenant).first?.marking.requiresReason
                == true)
        // Apps are served nothing of it: the delivery settings and their version stay.
        let after = try await store.access.deliveryState(of: .acmeProduction)
        #expect(after.settings == before.settings)
        #expect(after.settingsVersion == before.settingsVersion)
        // Another tenant's environment is untouched.
        #expect(try await store.access.environment(.globexProduction).marking == EnvironmentMarking())
    }

    @Test("A field left alone keeps its value, and the colour can be removed")
    func partialUpdates() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let colour = try EnvironmentColour(validating: "#0a0B0c")
        try await store.access.updateMarking(of: .acmeProduction) { $0.colour = colour }
        try await store.access.updateMarking(of: .acmeProduction) { $0.requiresReason = true }
        #expect(try await store.access.environment(.acmeProduction).marking.colour?.rawValue == "#0a0b0c")

        try await store.access.updateMarking(of: .acmeProduction) { $0.colour = nil }
        let marking = try await store.access.environment(.acmeProduction).marking
        #expect(marking.colour == nil)
        #expect(marking.requiresReason)
    }

    @Test(
        "Only # and six hexadecimal digits make a colour",
        arguments: ["", "red", "#c0392", "#c0392bb", "c0392b#", "#g0392b", " #c0392b", "#c0392b ", "#ｃ0392b"])
    func badColours(_ text: String) throws {
        let error = #expect(throws: TenancyError.self) { try EnvironmentColour(validating: text) }
        guard case .invalidColour(let refused) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(refused == text)
    }

    @Test("The refusal says what, where and how to fix it")
    func refusalMessage() {
        let message = TenancyError.invalidColour("red").description
        #expect(message.contains("\"red\"") && message.contains("colour") && message.contains("#c0392b"))
        #expect(TenancyError.invalidColour("red").code == "invalid")
    }

    @Test("The database refuses a colour the type would not make, on both backends")
    func databaseChecksTheColour() async throws {
        let store = try await FeatureStore.makeWithTenants()
        await #expect(throws: (any Error).self) {
            try await store.write { db in
                try db.execute("UPDATE environments SET colour = ? WHERE name = ?", ["#C0392B", "production"])
            }
        }
        #expect(try await store.access.environment(.acmeProduction).marking.colour == nil)
    }

    @Test("Updating an environment that does not exist says so")
    func unknownEnvironment() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let path = EnvironmentPath(
            tenant: EnvironmentPath.acmeProduction.tenant, environment: EnvironmentName(rawValue: "nope"))
        await #expect(throws: TenancyError.self) {
            try await store.access.updateMarking(of: path) { $0.requiresReason = true }
        }
    }

    /// Every way a person changes an environment's revisions, from its options.
    static let changes: [(String, @Sendable (FeatureStore, EditOptions) async throws -> Void)] = [
        (
            "import",
            { store, options in
                _ = try await store.catalog.importDocument(
                    Array(
                        RampTests.onOff.replacingOccurrences(of: #""name": "other""#, with: #""name": "another""#).utf8),
                    into: .acmeProduction,
                    options: ImportOptions(isDryRun: options.isDryRun, message: options.message, actor: "test"))
            }
        ),
        ("biases", { _ = try await $0.catalog.setBiases([30, 70], of: "checkout", in: .acmeProduction, options: $1) }),
        (
            "toggle",
            { _ = try await $0.catalog.setEnabled(false, feature: "checkout", in: .acmeProduction, options: $1) }
        ),
        ("roll-out", { _ = try await $0.catalog.rollOut("other", to: "A", in: .acmeProduction, options: $1) }),
        ("roll-back", { _ = try await $0.catalog.rollBack(.acmeProduction, to: 1, options: $1) }),
        (
            "tags",
            { _ = try await $0.catalog.setTags(["ios"], ofFeature: "checkout", in: .acmeProduction, options: $1) }
        ),
        (
            "description",
            { _ = try await $0.catalog.setDescription("Checkout", of: "checkout", in: .acmeProduction, options: $1) }
        ),
        (
            "config",
            { store, options in
                _ = try await store.catalog.setConfig(
                    try ConfigTests.config(#"{"name": "limit", "type": "int", "default": 3}"#), in: .acmeProduction,
                    options: options)
            }
        ),
        ("config deletion", { _ = try await $0.catalog.deleteConfig(named: "kept", in: .acmeProduction, options: $1) }),
        (
            "rules",
            { store, options in
                _ = try await store.catalog.setRules(
                    try TargetingStoreTests.rules(
                        #"{"rules": [{"id": "staff", "clauses": [{"attribute": "email", "operator": "endsWith", "values": ["@corp.com"]}], "serve": {"variation": "Disabled"}}]}"#
                    ), ofFeature: "checkout", in: .acmeProduction, options: options)
            }
        ),
        (
            "segment",
            { _ = try await $0.catalog.setSegment(TargetingStoreTests.staff, in: .acmeProduction, options: $1) }
        ),
    ]

    @Test(
        "Where changes need a reason, every way in is refused without one, writing nothing; a dry run plans, a reason applies",
        arguments: changes.indices)
    func reasonRequiredEverywhere(_ index: Int) async throws {
        let (name, change) = Self.changes[index]
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.catalog.setConfig(
            try ConfigTests.config(#"{"name": "kept", "type": "bool", "default": true}"#), in: .acmeProduction,
            options: EditOptions(actor: "test"))
        try await store.access.updateMarking(of: .acmeProduction) { $0.requiresReason = true }
        let before = try await store.fingerprint()

        for blank in [nil, "", "  \n"] {
            let refused = await #expect(throws: DocumentError.self, "\(name)") {
                try await change(store, EditOptions(message: blank, actor: "test"))
            }
            #expect(refused?.code == "reason_required", "\(name)")
            #expect(refused?.description.contains("--message") == true)
        }
        #expect(try await store.fingerprint() == before, "\(name): a refused change writes nothing")
        try await change(store, EditOptions(isDryRun: true, actor: "test"))
        try await change(store, EditOptions(message: "phase 2 of the roll-out", actor: "test"))
        let latest = try #require(try await store.catalog.revisions(of: .acmeProduction).max { $0.number < $1.number })
        #expect(latest.number == 3 && latest.message == "phase 2 of the roll-out", "\(name)")
    }

    @Test("A ramp's steps and a trigger's switch carry their own words as the reason")
    func mechanismsCarryTheirReason() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        try await store.access.updateMarking(of: .acmeProduction) { $0.requiresReason = true }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let ramp = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: "Enabled", steps: [10, 100], hold: .duration(seconds: 3600)),
            in: .acmeProduction, actor: "cli:ada", now: start)
        #expect(ramp.applied.map(\.step) == [0])
        let trigger = try await store.rollouts.createTrigger(
            for: "checkout", action: .disable, name: "crash alert", in: .acmeProduction, actor: "cli:ada", now: start)
        let called = try await store.rollouts.callTrigger(
            trigger.token, address: "203.0.113.9", userAgent: nil, now: start.addingTimeInterval(60))
        #expect(called.acted)
        let messages = try await store.catalog.revisions(of: .acmeProduction).sorted { $0.number < $1.number }.map(
            \.message)
        #expect(
            messages.count == 3 && messages[1].hasPrefix("ramp 1: step 1 of 2")
                && messages[2].hasPrefix("disable checkout"))
    }
}
