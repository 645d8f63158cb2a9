import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("A feature's history")
struct FeatureHistoryTests {
    static let features = #"""
        {"features": [
            {"name": "Onboarding", "test-variations": ["Group A", "Group B"], "test-biases": [50, 50]},
            {"name": "Dark mode", "enabled": false}
        ]}
        """#

    @Test("Every revision that changed a feature, newest first, with its fields, its reason and its key's name")
    func history() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(Self.features)
        let key = try await store.access.createKey(
            for: .tenant(EnvironmentPath.acmeProduction.tenant), role: .editor, name: "Ana's laptop")
        _ = try await store.catalog.setBiases(
            [20, 80], of: "Onboarding", in: .acmeProduction,
            options: EditOptions(message: "phase 2 of the roll-out", actor: "key:\(key.info.prefix)"))
        _ = try await store.catalog.setEnabled(
            true, feature: "Dark mode", in: .acmeProduction, options: EditOptions(actor: "cli:ana"))

        let history = try await store.catalog.history(of: "Onboarding", in: .acmeProduction)
        #expect(history.map(\.change.revision) == [2, 1])
        #expect(history[0].change.actor == "Ana's laptop")
        #expect(history[0].change.message == "phase 2 of the roll-out")
        #expect(history[0].fields.map(\.field) == ["test-biases"])
        #expect(
            history[0].fields[0].before?.contains("50") == true && history[0].fields[0].after?.contains("20") == true)
        #expect(history[1].fields.map(\.kind) == [.added])

        let last = try await store.catalog.lastChanges(in: .acmeProduction)
        #expect(last["Onboarding"]?.revision == 2 && last["Onboarding"]?.actor == "Ana's laptop")
        #expect(last["Dark mode"]?.revision == 3 && last["Dark mode"]?.actor == "cli:ana")
        // Another environment's revisions are not this one's history.
        #expect(try await store.catalog.history(of: "Onboarding", in: .globexProduction).isEmpty)
    }
}
