import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// The identity rule through the API, delivery and the dashboard: two spellings of a user id
/// are two users; two spellings of a feature name are one feature.
@Suite("Identity of users and feature names over HTTP")
struct IdentityOverHTTPTests {
    static let nfc = "Caf\u{E9} test"
    static let nfd = "Cafe\u{301} test"
    static let document =
        #"{"features": [{"name": "Caf\u00e9 test", "test-variations": ["A", "B"], "test-biases": [50, 50]}]}"#

    func makeServer() async throws -> TestServer {
        let server = try await TestServer()
        _ = try await server.store.catalog.importDocument(
            Array(Self.document.utf8), into: TestServer.acme, options: ImportOptions(actor: "test"))
        return server
    }

    @Test("The API finds a feature by either spelling of its name, and keeps two spellings of a user id apart")
    func api() async throws {
        let server = try await makeServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let features = "/api/v1/tenants/acme/environments/production/features/"
            for spelling in [Self.nfc, Self.nfd] {
                let shown = try await client.send(.get, features + segment(spelling), key: editor)
                #expect(shown.status == .ok)
                #expect(
                    try shown.json["name"]?.string.map { Array($0.utf8) } == Array(Self.nfc.utf8), "the name as written"
                )
            }
            let assigned = try await client.send(
                .post, features + segment(Self.nfd) + "/assignments", key: editor,
                body: #"{"users": ["caf\u00e9", "cafe\u0301", "caf\u00e9"]}"#)
            #expect(assigned.status == .ok)
            #expect(try assigned.json["recorded"]?.number == 2)
            #expect(try assigned.json["known"]?.number == 1)
            let points = try assigned.json["assignments"]?.array?.compactMap { $0["point"]?.number } ?? []
            #expect(points.count == 3 && points[0] != points[1] && points[0] == points[2])

            let history = try await client.send(
                .get, "/api/v1/tenants/acme/environments/production/assignments?user=" + segment("cafe\u{301}"),
                key: editor)
            #expect(try history.json["events"]?.array?.count == 1)
        }
    }

    @Test(
        "Pinned documents of two spellings of one id pin two points; the dashboard's pages find the feature by either spelling"
    )
    func deliveryAndDashboard() async throws {
        let server = try await makeServer()
        try await server.test { client in
            let one = try await client.send(.get, "/t/acme/production/features.json?user=" + segment("caf\u{E9}"))
            let other = try await client.send(.get, "/t/acme/production/features.json?user=" + segment("cafe\u{301}"))
            #expect(one.status == .ok && other.status == .ok)
            #expect(one.bytes != other.bytes)
            #expect(try await server.store.allUsers(in: TestServer.acme).count == 2)

            var browser = DashboardBrowser(client)
            _ = try await browser.signIn(with: server.key("acme", .editor))
            for spelling in [Self.nfc, Self.nfd] {
                let page = try await browser.get("/tenants/acme/production/features/" + segment(spelling))
                #expect(page.status == .ok, "\(Array(spelling.utf8))")
                #expect(page.text.contains("· 2 recorded users</p>"), "both users are counted")
            }
            let user = try await browser.get("/tenants/acme/production/users?user=" + segment("cafe\u{301}"))
            #expect(user.status == .ok)
        }
    }
}

extension FeatureStore {
    /// Every user with an assignment in the environment, by bytes.
    func allUsers(in path: EnvironmentPath) async throws -> Set<UserID> {
        Set(try await assignments.assignmentEvents(in: path, matching: AssignmentEventQuery(limit: 10_000)).map(\.user))
    }
}
