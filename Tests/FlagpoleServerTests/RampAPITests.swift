import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// `flagpole ramp` over the admin API, at the time of the server's clock.
@Suite("Ramps over HTTP")
struct RampAPITests {
    static let environment = "/api/v1/tenants/acme/environments/production"
    static let ramp = "\(environment)/features/checkout/ramp"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A server whose clock stands at `now`, with the on/off test `checkout` in acme's production.
    static func server(allowsPrivateWebhooks: Bool = false) async throws -> TestServer {
        var configuration = ServerConfiguration(accessLogLevel: .debug)
        configuration.clock = WallClock { now }
        configuration.allowsPrivateWebhooks = allowsPrivateWebhooks
        let server = try await TestServer(configuration: configuration)
        _ = try await server.store.catalog.importDocument(
            Array(
                #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]}]}"#
                    .utf8),
            into: TestServer.acme, options: ImportOptions(actor: "test"))
        return server
    }

    @Test("A ramp is planned, created, paused, resumed, advanced and aborted over the API, each answering its report")
    func lifecycle() async throws {
        let server = try await Self.server()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let plan = try await client.send(
                .post, Self.ramp, key: editor, body: #"{"steps": [1, 5, 20, 50, 100], "hold": "24h", "dryRun": true}"#)
            #expect(plan.status == .ok)
            #expect(try plan.json["dryRun"] == .bool(true) && plan.json["plans"]?.arrayCount == 5)
            #expect(try await client.send(.get, Self.ramp, key: editor).status == .notFound)

            let created = try await client.send(
                .post, Self.ramp, key: editor, body: #"{"steps": [1, 5, 20, 50, 100], "hold": "24h"}"#)
            #expect(created.status == .created)
            #expect(try created.json["applied"] == .array([.number(0)]))
            #expect(try created.json["ramp"]?["dueAt"] == .string(Self.now.addingTimeInterval(86_400).iso8601))
            let again = try await client.send(.post, Self.ramp, key: editor, body: #"{"steps": [10], "hold": "1h"}"#)
            #expect(again.status == .conflict && again.errorCode == "conflict")

            let paused = try await client.send(.post, "\(Self.ramp)/pause", key: editor, body: "{}")
            #expect(try paused.status == .ok && paused.json["ramp"]?["state"] == .string("paused"))
            #expect(try await client.send(.post, "\(Self.ramp)/pause", key: editor, body: "{}").status == .conflict)
            let resumed = try await client.send(.post, "\(Self.ramp)/resume", key: editor, body: "{}")
            #expect(try resumed.json["ramp"]?["state"] == .string("running"))
            let advanced = try await client.send(.post, "\(Self.ramp)/advance", key: editor, body: "{}")
            #expect(try advanced.json["applied"] == .array([.number(1)]))
            let aborted = try await client.send(.post, "\(Self.ramp)/abort", key: editor, body: #"{"rollBack": true}"#)
            #expect(try aborted.json["ramp"]?["state"] == .string("aborted"))

            let shown = try await client.send(.get, Self.ramp, key: server.key("acme", .reader))
            #expect(try shown.json["ramp"]?["applied"]?.arrayCount == 2)
            let listed = try await client.send(.get, "\(Self.environment)/ramps", key: server.key("acme", .reader))
            #expect(try listed.json.arrayCount == 1)
        }
        let revisions = try await server.store.catalog.revisions(of: TestServer.acme)
        #expect(revisions.prefix(3).map(\.kind) == [.bias, .bias, .bias])
        #expect(try await server.store.catalog.feature("checkout", in: TestServer.acme).feature.testBiases == [0, 100])
    }

    @Test("Bad ramps get 422 saying what to fix, and nothing is saved")
    func badRamps() async throws {
        let server = try await Self.server()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            for (body, pointer) in [
                (#"{"steps": [5, 1], "hold": "24h"}"#, nil),
                (#"{"steps": [1, 5], "hold": "0s"}"#, nil),
                (#"{"steps": [1, 5], "hold": "tomorrow"}"#, "/hold"),
                (#"{"steps": [1, 5], "hold": "1h", "start": "soon"}"#, "/start"),
                (#"{"steps": "1,5", "hold": "1h"}"#, "/steps"),
                (#"{"steps": [1, 5], "hold": "1h", "variation": "Maybe"}"#, nil),
            ] as [(String, String?)] {
                let answer = try await client.send(.post, Self.ramp, key: editor, body: body)
                #expect(answer.status == .unprocessableContent, "\(body)")
                if let pointer { #expect(try answer.json["error"]?["details"]?["pointer"] == .string(pointer)) }
            }
            let listed = try await client.send(.get, "\(Self.environment)/ramps", key: editor)
            #expect(try listed.json.arrayCount == 0)
        }
    }

    @Test(
        "A trigger made over the API answers its URL once; an alert's POST pauses the ramp, again within a minute gets 429"
    )
    func triggers() async throws {
        let server = try await Self.server()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            _ = try await client.send(.post, Self.ramp, key: editor, body: #"{"steps": [10, 100], "hold": "1h"}"#)
            let made = try await client.send(
                .post, "\(Self.environment)/features/checkout/triggers", key: editor,
                body: #"{"action": "pause", "name": "Crashlytics"}"#)
            #expect(made.status == .created)
            let url = try #require(try made.json["url"]?.string)
            let token = try #require(try made.json["token"]?.string)
            #expect(url.hasSuffix("/triggers?token=\(token)"))
            let bad = try await client.send(
                .post, "\(Self.environment)/features/checkout/triggers", key: editor,
                body: #"{"action": "explode", "name": "x"}"#)
            #expect(bad.status == .unprocessableContent)

            let alert = #"{"event": "velocity", "issue": 42}"#
            let called = try await client.send(.post, "/triggers?token=\(token)", body: alert)
            #expect(called.status == .ok)
            #expect(try called.json["acted"] == .bool(true) && called.json["outcome"] == .string("paused ramp 1"))
            let again = try await client.send(.post, "/triggers?token=\(token)", body: alert)
            #expect(again.status == .tooManyRequests && again.headers[.retryAfter] == "60")
            #expect(try await client.send(.post, "/triggers?token=fpt_nope", body: "").status == .notFound)
            #expect(try await client.send(.post, "/triggers", body: "").status == .unprocessableContent)

            let listed = try await client.send(.get, "\(Self.environment)/triggers", key: server.key("acme", .reader))
            #expect(try listed.json[0]?["calls"]?.arrayCount == 2)
            #expect(!listed.text.contains(token))
            let prefix = try #require(try listed.json[0]?["prefix"]?.string)
            let revoked = try await client.send(.delete, "\(Self.environment)/triggers/\(prefix)", key: editor)
            #expect(revoked.status == .ok)
            #expect(try await client.send(.post, "/triggers?token=\(token)", body: "").status == .gone)
        }
        #expect(try await server.store.rollouts.ramp(of: "checkout", in: TestServer.acme).ramp.state == .paused)
    }
}
