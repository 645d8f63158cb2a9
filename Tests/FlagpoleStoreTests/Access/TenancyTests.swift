import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Tenants and environments")
struct TenancyTests {
    @Test("A new tenant gets a production environment and no revision")
    func newTenantHasProduction() async throws {
        let store = try await FeatureStore.makeEmpty()
        try await store.access.createTenant(TenantSlug(rawValue: "acme"), name: "Acme Inc.")
        let tenants = try await store.access.tenants()
        #expect(tenants.map(\.slug.rawValue) == ["acme"])
        #expect(tenants.first?.name == "Acme Inc.")
        #expect(tenants.first?.environments == [.production])
        let environments = try await store.access.environments(of: TenantSlug(rawValue: "acme"))
        #expect(environments.map(\.revision) == [nil])
        await #expect(throws: DocumentError.self) { try await store.catalog.revision(of: .acmeProduction) }
    }

    @Test("Creating a tenant or an environment twice is refused")
    func duplicatesAreRefused() async throws {
        let store = try await FeatureStore.makeWithTenants()
        await #expect(throws: TenancyError.self) { try await store.access.createTenant(TenantSlug(rawValue: "acme")) }
        let staging = EnvironmentPath(
            tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "staging"))
        try await store.access.createEnvironment(staging)
        await #expect(throws: TenancyError.self) { try await store.access.createEnvironment(staging) }
        #expect(
            try await store.access.environments(of: staging.tenant).map(\.path.environment.rawValue) == [
                "production", "staging",
            ])
    }

    @Test("Tenants with the same environment and feature names never see each other's data")
    func tenantsAreIsolated() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "shared", "enabled": true}]}"#, into: .acmeProduction)
        try await store.importText(
            #"{"features": [{"name": "shared", "enabled": false}, {"name": "only-globex"}]}"#, into: .globexProduction)

        #expect(try await store.catalog.snapshot(of: .acmeProduction).document.features.map(\.enabled) == [true])
        #expect(
            try await store.catalog.snapshot(of: .globexProduction).document.features.map(\.name) == [
                "shared", "only-globex",
            ])
        let acmeSalts = Set(try await store.storedFeatures(of: .acmeProduction).map(\.salt))
        let globexSalts = Set(try await store.storedFeatures(of: .globexProduction).map(\.salt))
        #expect(acmeSalts.isDisjoint(with: globexSalts))

        // Emptying acme's environment archives only acme's feature.
        try await store.importText(#"{"features": []}"#, into: .acmeProduction)
        #expect(try await store.catalog.snapshot(of: .globexProduction).document.features.count == 2)
    }

    @Test("The schema itself refuses a row that points into another tenant")
    func schemaEnforcesTenancy() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(
            #"{"features": [{"name": "a", "test-variations": ["x", "y"]}]}"#, into: .acmeProduction)
        let error = await #expect(throws: (any Error).self) {
            try await store.write { db in
                let acme = try db.environments.scope(of: EnvironmentPath.acmeProduction)
                let globex = try db.environments.scope(of: EnvironmentPath.globexProduction)
                let feature = try db.value(Int64.self, "SELECT id FROM features WHERE tenant_id = ?", [acme.tenant.id])!
                // A variation of acme's feature, filed under globex.
                try db.execute(
                    "INSERT INTO variations (tenant_id, feature_id, position, name) VALUES (?, ?, 9, 'x')",
                    [globex.tenant.id, feature])
            }
        }
        #expect(error != nil)
        #expect(try await store.storedFeatures(of: .acmeProduction).first?.feature.testVariations == ["x", "y"])
    }
}

@Suite("The backend under test")
struct BackendUnderTestTests {
    @Test("The store's tests run on the backend FLAGPOLE_TEST_BACKEND names")
    func backendUnderTest() async throws {
        let store = try await FeatureStore.makeEmpty()
        let isSQLite = try await store.read { $0.sqlite != nil }
        #expect(isSQLite == !TestBackend.isPostgres)
    }
}
