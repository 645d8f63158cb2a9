import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Environment marking")
struct EnvironmentMarkingTests {
    @Test("A new environment has no colour and needs no reason")
    func defaults() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let environment = try await store.environment(.acmeProduction)
        #expect(environment.marking == EnvironmentMarking())
    }

    @Test("The colour is kept in lowercase and the reason flag as set, apart from the delivery settings")
    func updateKeepsBoth() async throws {
        // Given
        let store = try await FeatureStore.makeWithTenants()
        let before = try await store.deliveryState(of: .acmeProduction)

        // When
        let colour = try EnvironmentColour(validating: "#C0392B")
        try await store.updateMarking(of: .acmeProduction) { marking in
            marking.colour = colour
            marking.requiresReason = true
        }

        // Then
        let environment = try await store.environment(.acmeProduction)
        #expect(environment.marking.colour?.rawValue == "#c0392b")
        #expect(environment.marking.requiresReason)
        #expect(
            try await store.environments(of: EnvironmentPath.acmeProduction.tenant).first?.marking.requiresReason
                == true)
        // Apps are served nothing of it: the delivery settings and their version stay.
        let after = try await store.deliveryState(of: .acmeProduction)
        #expect(after.settings == before.settings)
        #expect(after.settingsVersion == before.settingsVersion)
        // Another tenant's environment is untouched.
        #expect(try await store.environment(.globexProduction).marking == EnvironmentMarking())
    }

    @Test("A field left alone keeps its value, and the colour can be removed")
    func partialUpdates() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let colour = try EnvironmentColour(validating: "#0a0B0c")
        try await store.updateMarking(of: .acmeProduction) { $0.colour = colour }
        try await store.updateMarking(of: .acmeProduction) { $0.requiresReason = true }
        #expect(try await store.environment(.acmeProduction).marking.colour?.rawValue == "#0a0b0c")

        try await store.updateMarking(of: .acmeProduction) { $0.colour = nil }
        let marking = try await store.environment(.acmeProduction).marking
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
        #expect(try await store.environment(.acmeProduction).marking.colour == nil)
    }

    @Test("Updating an environment that does not exist says so")
    func unknownEnvironment() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let path = EnvironmentPath(
            tenant: EnvironmentPath.acmeProduction.tenant, environment: EnvironmentName(rawValue: "nope"))
        await #expect(throws: TenancyError.self) {
            try await store.updateMarking(of: path) { $0.requiresReason = true }
        }
    }
}
