import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import NIOCore
import Prometheus
import Testing

@testable import FlagpoleServer

/// The registry of the test servers that share one: swift-metrics is bootstrapped with it once,
/// as `flagpole serve` bootstraps it with its own, so Hummingbird's request metrics land in it too.
/// A test that compares counts gives its application a registry of its own.
let testRegistry: PrometheusCollectorRegistry = {
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    return registry
}()

/// A store with tenants `acme` and `globex`, each with a real fixture imported into
/// production, and a key of every role for each; and the server's router on top of it.
struct TestServer {
    let store: FeatureStore
    let configuration: ServerConfiguration
    /// `keys["acme"]![.editor]` is a secret of that role.
    let keys: [String: [KeyRole: String]]
    let serverAdminKey: String

    static let acme = EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: .production)
    static let globex = EnvironmentPath(tenant: TenantSlug(rawValue: "globex"), environment: .production)
    /// Every kind of feature, from the FeatureFlags library's own repository.
    static let mainFixture = "rwbutler-HEAD-Features.json"
    /// A test of the fixture, bucketed by user.
    static let abTest = "Example A/B Test"

    init(
        configuration: ServerConfiguration = ServerConfiguration(accessLogLevel: .debug), store: FeatureStore? = nil
    ) async throws {
        let store = try store ?? FeatureStore.inMemory()
        var keys: [String: [KeyRole: String]] = [:]
        for path in [Self.acme, Self.globex] {
            try await store.access.createTenant(path.tenant)
            _ = try await store.catalog.importDocument(
                try Self.fixture(path == Self.acme ? Self.mainFixture : "vantientu1703-master-Features.json"),
                into: path,
                options: ImportOptions(actor: "test"))
            for role in [KeyRole.admin, .editor, .reader, .delivery] {
                keys[path.tenant.rawValue, default: [:]][role] = try await store.access.createKey(
                    for: .tenant(path.tenant), role: role
                ).secret
            }
        }
        self.store = store
        self.configuration = configuration
        self.keys = keys
        serverAdminKey = try await store.access.createKey(for: .server, role: .serverAdmin).secret
    }

    func key(_ tenant: String, _ role: KeyRole) -> String {
        keys[tenant]![role]!
    }

    var application: some ApplicationProtocol {
        Application(
            router: ServerApplication.router(store: store, configuration: configuration, registry: testRegistry))
    }

    /// Runs `test` against the router, in memory.
    func test<Value: Sendable>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        try await application.test(.router, test)
    }

    /// Runs `test` against the whole application on a real port, the event loop's fast path
    /// (`DeliveryFastPath`) included. The application counts in a registry of its own: the counts
    /// a test compares are its alone, whatever other tests' servers count meanwhile.
    func live<Value: Sendable>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let application = ServerApplication.make(
            store: store, configuration: ServerConfiguration(port: 0, accessLogLevel: .debug),
            registry: PrometheusCollectorRegistry(), logger: Logger(label: "test"))
        return try await application.test(.live, test)
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/real/\(name)")
        return Array(try Data(contentsOf: url))
    }
}

/// Builds request headers in one line.
func headers(key: String? = nil, _ fields: [HTTPField.Name: String] = [:]) -> HTTPFields {
    var headers = HTTPFields()
    if let key { headers[.authorization] = "Bearer \(key)" }
    for (name, value) in fields { headers[name] = value }
    return headers
}

extension TestClientProtocol {
    /// Sends a request and returns the response, whatever its status.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, key: String? = nil, headers fields: [HTTPField.Name: String] = [:],
        body: String? = nil
    ) async throws -> TestResponse {
        try await execute(
            uri: uri, method: method, headers: headers(key: key, fields), body: body.map { ByteBuffer(string: $0) }
        ) { $0 }
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var bytes: [UInt8] { Array(body.readableBytesView) }

    /// The body parsed as JSON.
    var json: JSONValue {
        get throws { try JSONParser.parse(bytes).value }
    }

    /// The `code` of an error body.
    var errorCode: String? {
        guard case .object(let body)? = try? json, case .object(let error)? = body["error"],
            case .string(let code)? = error["code"]
        else {
            return nil
        }
        return code
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    var string: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    var number: Double? {
        guard case .number(let value) = self else { return nil }
        return value
    }

    /// How many items an array has; `nil` for anything else.
    var arrayCount: Int? {
        guard case .array(let items) = self else { return nil }
        return items.count
    }

    var array: [JSONValue]? {
        guard case .array(let items) = self else { return nil }
        return items
    }
}

/// Percent-encodes a path segment (feature names have spaces).
func segment(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
}
