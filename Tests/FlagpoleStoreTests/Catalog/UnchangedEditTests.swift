import FlagpoleCore
import Testing

@testable import FlagpoleStore

@Suite("Edits that change nothing")
struct UnchangedEditTests {
    @Test("Setting the biases a test already has, or enabling an enabled one, writes no revision, dry run or not")
    func noRevision() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "t", "enabled": true, "test-variations": ["A", "B"], "test-biases": [10, 90]}]}"#)
        for isDryRun in [true, false] {
            let options = EditOptions(isDryRun: isDryRun, actor: "test")
            let biases = try await store.catalog.setBiases([10, 90], of: "t", in: .acmeProduction, options: options)
            let enabled = try await store.catalog.setEnabled(true, feature: "t", in: .acmeProduction, options: options)
            for outcome in [biases, enabled] {
                #expect(outcome.isUnchanged)
                #expect(!outcome.isApplied)
                #expect(outcome.revision == 1)
                #expect(outcome.plans.isEmpty)
            }
        }
        #expect(try await store.catalog.revisions(of: .acmeProduction).count == 1)

        let changed = try await store.catalog.setBiases(
            [20, 80], of: "t", in: .acmeProduction, options: EditOptions(isDryRun: true, actor: "test"))
        #expect(!changed.isUnchanged && !changed.isApplied && changed.revision == 2)
    }
}
