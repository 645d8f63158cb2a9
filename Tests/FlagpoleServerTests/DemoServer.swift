import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import FlagpoleServer

/// `serve --demo`'s data in a test's own store, without its 10 000 recorded users: the example
/// features and configs `flagpole demo` imports (read from the binary's resources, so the tests
/// follow them), in the public demo/production and the private demo/staging; the goal `signup`;
/// and the keys an app and a team are given.
struct DemoServer {
    static let tenant = TenantSlug(rawValue: "demo")
    static let production = EnvironmentPath(tenant: tenant, environment: .production)
    static let staging = EnvironmentPath(tenant: tenant, environment: EnvironmentName(rawValue: "staging"))
    static let goal = "signup"

    /// The demo's features by name, with the kind OFREP's `metadata.kind` names.
    static let featureKinds: [String: String] = [
        "Example Feature Flag": "flag", "Example Development Flag": "development-flag",
        "Example Unlock Flag": "unlock-flag", "Example A/B Test": "ab-test", "New Onboarding": "on-off-ab-test",
        "Example MVT Test": "mvt-test", "Checkout Button Colour": "mvt-test",
    ]
    /// The demo's tests: a group per user.
    static let tests = ["Example A/B Test", "New Onboarding", "Example MVT Test", "Checkout Button Colour"]
    static let configs = ["mainViewTitle", "numberOfItemsToDisplay", "someFeatureEnabled", "discountRate", "theme"]
    static var allFlags: Set<String> { Set(featureKinds.keys).union(configs) }

    let server: TestServer
    /// A tenant-wide admin key of demo, as `serve --demo` prints one.
    let admin: String
    /// Delivery keys scoped to one environment, as an app is given.
    let productionKey: String
    let stagingKey: String

    var store: FeatureStore { server.store }

    /// Every user here comes from one client, the test: no limit on new users unless asked.
    init(
        configuration: ServerConfiguration = ServerConfiguration(
            accessLogLevel: .warning, newUsersPerSecond: 1e6, newUserBurst: 1_000_000)
    ) async throws {
        server = try await TestServer(configuration: configuration)
        let store = server.store
        _ = try await store.access.createTenant(Self.tenant, name: "Demo App")
        let (configs, _) = try ConfigsDecoder.decode(try Self.resource("example-configs.json"))
        for path in [Self.production, Self.staging] {
            if path != Self.production { _ = try await store.access.createEnvironment(path) }
            _ = try await store.catalog.importDocument(
                try Self.resource("example-features.json"), into: path, options: ImportOptions(actor: "test"))
            _ = try await store.catalog.importConfigs(configs, in: path, options: EditOptions(actor: "test"))
        }
        try await store.access.updateDelivery(of: Self.staging) { $0.isPrivate = true }
        try await store.experiments.createGoal(Goal(name: Self.goal, kind: .conversion), in: Self.production)
        admin = try await store.access.createKey(for: .tenant(Self.tenant), role: .admin).secret
        productionKey = try await store.access.createKey(
            for: .tenant(Self.tenant), role: .delivery, environment: .production
        ).secret
        stagingKey = try await store.access.createKey(
            for: .tenant(Self.tenant), role: .delivery, environment: Self.staging.environment
        ).secret
    }

    /// A file of the `flagpole` binary's resources, the demo's data.
    static func resource(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/FlagpoleCommands/Resources/\(name)")
        return Array(try Data(contentsOf: url))
    }

    /// Runs `test` against the router, in memory.
    func test<Value: Sendable>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        try await server.test(test)
    }

    /// Runs `test` against the router on a free port, for what needs a socket (a stream never
    /// ends, and the test clients wait for the end of a body), with the change streams' service
    /// and a heartbeat of `heartbeat`.
    func live<Value: Sendable>(
        heartbeat: Duration = .seconds(15), _ test: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        var configuration = server.configuration
        configuration.changeStreamHeartbeat = heartbeat
        let delivery = ServerApplication.delivery(store: store, configuration: configuration, registry: testRegistry)
        let application = Application(
            router: ServerApplication.router(delivery: delivery, configuration: configuration, registry: testRegistry),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            services: [
                ChangeBroadcasterService(
                    broadcaster: delivery.cache.changes, store: store, logger: Logger(label: "test"))
            ],
            logger: Logger(label: "test"))
        return try await application.test(.live, test)
    }

    /// An admin API call on demo, which must succeed.
    @discardableResult
    func admin(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, body: String? = nil,
        environment: EnvironmentPath = production
    ) async throws -> TestResponse {
        let response = try await client.send(
            method, "/api/v1/tenants/demo/environments/\(environment.environment.rawValue)\(path)", key: admin,
            body: body)
        #expect(response.status == .ok, "\(method) \(path): \(response.text)")
        return response
    }

    /// The admin API's path of a feature.
    static func feature(_ name: String) -> String { "/features/\(segment(name))" }
}
