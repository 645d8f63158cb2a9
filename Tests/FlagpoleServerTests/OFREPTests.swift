import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer

@Suite("OFREP: every feature and config as a typed flag")
struct OFREPTests {
    static let base = "/t/acme/production/ofrep/v1/evaluate/flags"

    /// The test server with typed configs in acme/production, one following the A/B test.
    static func server(
        configuration: ServerConfiguration = ServerConfiguration(accessLogLevel: .debug)
    ) async throws
        -> TestServer
    {
        let server = try await TestServer(configuration: configuration)
        let (configs, _) = try ConfigsDecoder.decode(
            Array(
                #"""
                {"configs": [
                    {"name": "title", "type": "string", "default": "Welcome", "follows": "Example A/B Test",
                     "values": {"Group A": "Welcome", "Group B": "Hello"}, "tags": ["ios"]},
                    {"name": "count", "type": "int", "default": 15},
                    {"name": "ratio", "type": "double", "default": 2},
                    {"name": "on", "type": "bool", "default": true},
                    {"name": "theme", "type": "json", "default": {"accent": "blue"}},
                    {"name": "Größentabelle", "type": "string", "default": "EU"}
                ]}
                """#.utf8))
        _ = try await server.store.catalog.importConfigs(
            configs, in: TestServer.acme, options: EditOptions(actor: "test"))
        return server
    }

    static func context(_ user: String?, development: Bool = false) -> String {
        var members: [String] = []
        if let user { members.append(#""targetingKey": "\#(user)""#) }
        if development { members.append(#""development": true"#) }
        return #"{"context": {\#(members.joined(separator: ", "))}}"#
    }

    @Test("Each kind of feature and each config type evaluates to its typed value, variant, reason and metadata")
    func typedValues() async throws {
        let server = try await Self.server()
        let user = "user-1"
        let group = try #require(
            try await server.store.assignments.pinnedDocument(for: UserID(rawValue: user), in: TestServer.acme)
                .assignments.first {
                    $0.feature == TestServer.abTest
                }
        ).variation
        try await server.test { client in
            func evaluate(_ key: String, _ body: String = Self.context(user)) async throws -> TestResponse {
                let encoded = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                return try await client.send(.post, "\(Self.base)/\(encoded)", body: body)
            }
            let expectations: [(String, String)] = [
                (
                    "Example Feature Flag",
                    #"{"key":"Example Feature Flag","value":true,"reason":"STATIC","variant":"Enabled","metadata":{"revision":2,"kind":"flag"}}"#
                ),
                (
                    "Example Development Flag",
                    #"{"key":"Example Development Flag","value":false,"reason":"DISABLED","variant":"Disabled","metadata":{"revision":2,"kind":"development-flag"}}"#
                ),
                (
                    "Example Unlock Flag",
                    #"{"key":"Example Unlock Flag","value":false,"reason":"STATIC","variant":"Locked","metadata":{"revision":2,"kind":"unlock-flag"}}"#
                ),
                (
                    "Example A/B Test",
                    #"{"key":"Example A/B Test","value":"\#(group)","reason":"SPLIT","variant":"\#(group)","metadata":{"revision":2,"kind":"ab-test","label":"label\#(group == "Group A" ? 1 : 2)-for-analytics"}}"#
                ),
                (
                    "title",
                    #"{"key":"title","value":"\#(group == "Group A" ? "Welcome" : "Hello")","reason":"SPLIT","variant":"\#(group)","metadata":{"revision":2,"kind":"config"}}"#
                ),
                (
                    "count",
                    #"{"key":"count","value":15,"reason":"STATIC","variant":"default","metadata":{"revision":2,"kind":"config"}}"#
                ),
                (
                    "ratio",
                    #"{"key":"ratio","value":2.0,"reason":"STATIC","variant":"default","metadata":{"revision":2,"kind":"config"}}"#
                ),
                (
                    "on",
                    #"{"key":"on","value":true,"reason":"STATIC","variant":"default","metadata":{"revision":2,"kind":"config"}}"#
                ),
                (
                    "theme",
                    #"{"key":"theme","value":{"accent":"blue"},"reason":"STATIC","variant":"default","metadata":{"revision":2,"kind":"config"}}"#
                ),
                (
                    "Größentabelle",
                    #"{"key":"Größentabelle","value":"EU","reason":"STATIC","variant":"default","metadata":{"revision":2,"kind":"config"}}"#
                ),
            ]
            for (key, body) in expectations {
                let response = try await evaluate(key)
                #expect(response.status == .ok, "\(key)")
                #expect(response.text == body, "\(key)")
            }
            let onOff = try await evaluate("Example Feature On/Off A/B Test").json
            #expect(onOff["value"] == .bool(onOff["variant"] == .string("Enabled")))
            // A debug build sees the development flag on.
            let development = try await evaluate("Example Development Flag", Self.context(user, development: true)).json
            #expect(development["value"] == .bool(true) && development["reason"] == .string("STATIC"))
        }
        // An unlock is a match for this user.
        try await server.store.assignments.setUnlocked(
            true, feature: "Example Unlock Flag", user: UserID(rawValue: user), source: nil, actor: "test",
            in: TestServer.acme)
        try await server.test { client in
            let unlocked = try await client.send(
                .post, "\(Self.base)/Example%20Unlock%20Flag", body: Self.context(user)
            ).json
            #expect(unlocked["value"] == .bool(true) && unlocked["reason"] == .string("TARGETING_MATCH"))
        }
    }

    @Test("Errors have the spec's codes and statuses, with the key and details")
    func errors() async throws {
        let server = try await Self.server()
        try await server.test { client in
            let cases: [(String, String, HTTPResponse.Status, String)] = [
                ("nope", Self.context("u"), .notFound, "FLAG_NOT_FOUND"),
                ("Example%20A%2FB%20Test", Self.context(nil), .badRequest, "TARGETING_KEY_MISSING"),
                ("title", Self.context(nil), .badRequest, "TARGETING_KEY_MISSING"),
                ("count", "{not json", .badRequest, "PARSE_ERROR"),
                ("count", #"{"context": 3}"#, .badRequest, "INVALID_CONTEXT"),
                ("count", #"{"context": {"targetingKey": 7}}"#, .badRequest, "INVALID_CONTEXT"),
                ("count", #"{}"#, .badRequest, "INVALID_CONTEXT"),
            ]
            for (key, body, status, code) in cases {
                let response = try await client.send(.post, "\(Self.base)/\(key)", body: body)
                #expect(response.status == status, "\(key) \(body)")
                let json = try response.json
                #expect(json["errorCode"] == .string(code), "\(key) \(body)")
                #expect(json["key"]?.string?.isEmpty == false && json["errorDetails"]?.string?.isEmpty == false)
            }
            // A flag that needs no user evaluates without one.
            #expect(try await client.send(.post, "\(Self.base)/count", body: Self.context(nil)).status == .ok)
            // Other methods: 405.
            #expect(try await client.send(.get, "\(Self.base)/count").status == .methodNotAllowed)
        }
    }

    @Test("Bulk evaluation: every flag, a strong ETag over the answer and the context, 304, stable across restarts")
    func bulk() async throws {
        let server = try await Self.server()
        let etag = try await server.test { client in
            let response = try await client.send(.post, Self.base, body: Self.context("user-1"))
            #expect(response.status == .ok)
            let json = try response.json
            guard case .array(let flags)? = json["flags"] else { throw CancellationError() }
            #expect(flags.count == 6 + 6)
            #expect(json["metadata"]?["revision"] == .number(2))
            #expect(
                json["eventStreams"]?[0]?["endpoint"]?["requestUri"] == .string("/t/acme/production/changes"))
            let etag = try #require(response.headers[.eTag])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            let again = try await client.send(
                .post, Self.base, headers: [.ifNoneMatch: etag], body: Self.context("user-1"))
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            // Another user, even with the same groups, never gets a 304 for this ETag.
            let other = try await client.send(
                .post, Self.base, headers: [.ifNoneMatch: etag], body: Self.context("user-2"))
            #expect(other.status == .ok)
            // Without a user, tests are per-flag failures.
            let anonymous = try await client.send(.post, Self.base, body: Self.context(nil)).json
            #expect(anonymous["flags"]?[3]?["errorCode"] == .string("TARGETING_KEY_MISSING"))
            let tagged = try await client.send(.post, Self.base + "?tag=ios", body: Self.context("user-1")).json
            #expect(tagged["flags"]?[0]?["key"] == .string("title") && tagged["flags"]?[1] == nil)
            return etag
        }
        // A new router on the same store (a restarted server) gives the same ETag.
        let restarted = TestServer(sharing: server)
        try await restarted.test { client in
            let response = try await client.send(.post, Self.base, body: Self.context("user-1"))
            #expect(response.headers[.eTag] == etag)
        }
        // An unlock changes the answer without a revision: the ETag changes.
        try await server.store.assignments.setUnlocked(
            true, feature: "Example Unlock Flag", user: UserID(rawValue: "user-1"), source: nil, actor: "test",
            in: TestServer.acme)
        try await server.test { client in
            let response = try await client.send(
                .post, Self.base, headers: [.ifNoneMatch: etag], body: Self.context("user-1"))
            #expect(response.status == .ok && response.headers[.eTag] != etag)
        }
    }

    @Test(
        "A private environment takes a key of its tenant as Bearer or X-API-Key; the root takes a scoped delivery key")
    func privateAndRoot() async throws {
        let server = try await Self.server()
        try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = true }
        let scoped = try await server.store.access.createKey(
            for: .tenant(TestServer.acme.tenant), role: .delivery, environment: .production
        ).secret
        try await server.store.access.createEnvironment(
            EnvironmentPath(tenant: TestServer.acme.tenant, environment: EnvironmentName(rawValue: "staging")))
        let stagingKey = try await server.store.access.createKey(
            for: .tenant(TestServer.acme.tenant), role: .delivery, environment: EnvironmentName(rawValue: "staging")
        ).secret
        try await server.test { client in
            let body = Self.context("u")
            #expect(try await client.send(.post, "\(Self.base)/count", body: body).status == .unauthorized)
            #expect(
                try await client.send(.post, "\(Self.base)/count", key: server.key("globex", .delivery), body: body)
                    .status == .forbidden)
            #expect(
                try await client.send(.post, "\(Self.base)/count", key: server.key("acme", .delivery), body: body)
                    .status == .ok)
            #expect(
                try await client.send(
                    .post, "\(Self.base)/count", headers: [.xAPIKey: server.key("acme", .reader)], body: body
                ).status == .ok)
            #expect(
                try await client.send(.post, "\(Self.base)/count", key: stagingKey, body: body).status == .forbidden)
            // The root: only a key scoped to one environment says which.
            #expect(
                try await client.send(.post, "/ofrep/v1/evaluate/flags/count", key: scoped, body: body).status == .ok)
            #expect(
                try await client.send(
                    .post, "/ofrep/v1/evaluate/flags/count", key: server.key("acme", .delivery), body: body
                ).status == .forbidden)
            #expect(try await client.send(.post, "/ofrep/v1/evaluate/flags", body: body).status == .unauthorized)
            // The private stream's URL carries a token.
            let bulk = try await client.send(.post, Self.base, key: server.key("acme", .delivery), body: body).json
            let uri = try #require(bulk["eventStreams"]?[0]?["endpoint"]?["requestUri"]?.string)
            #expect(uri.hasPrefix("/t/acme/production/changes?token="))
            // A forged token is refused as a missing key is, with the same code.
            let refused = try await client.send(.get, "/t/acme/production/changes?token=forged")
            #expect(refused.status == .unauthorized)
            #expect(try refused.json["error"]?["code"]?.string == "unauthenticated")
        }
    }

    @Test("Users new to the store beyond an anonymous client's limit get 429 with Retry-After in seconds")
    func rateLimit() async throws {
        // One new user per 1 000 s beyond a burst of 2: however slow the machine, no token comes
        // back between these four requests.
        let server = try await Self.server(
            configuration: ServerConfiguration(accessLogLevel: .debug, newUsersPerSecond: 0.001, newUserBurst: 2))
        try await server.test { client in
            var statuses: [HTTPResponse.Status] = []
            var retryAfter: String?
            for index in 0..<4 {
                let response = try await client.send(
                    .post, "\(Self.base)/Example%20A%2FB%20Test", body: Self.context("new-\(index)"))
                statuses.append(response.status)
                if response.status == .tooManyRequests { retryAfter = response.headers[.retryAfter] }
            }
            #expect(statuses == [.ok, .ok, .tooManyRequests, .tooManyRequests])
            #expect(retryAfter == "1000")
            // A flag that records nothing is never limited.
            #expect(try await client.send(.post, "\(Self.base)/count", body: Self.context("new-9")).status == .ok)
        }
        #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 2)
    }

    @Test(
        "One user, one group: features.json?user=, configs.json?user=, OFREP and Bucketeer's get_evaluations agree for 300 users, recorded once"
    )
    func oneUserOneGroup() async throws {
        // Every user here is new and comes from one client: no limit on new users.
        let server = try await Self.server(
            configuration: ServerConfiguration(accessLogLevel: .debug, newUsersPerSecond: 1e6, newUserBurst: 1_000_000))
        try await server.test { client in
            for index in 0..<300 {
                let user = "user-\(index)"
                // Each user asks in another order.
                var answers: [String: String] = [:]
                let order = [0, 1, 2, 3].shuffled()
                for step in order {
                    switch step {
                    case 0:
                        let ofrep = try await client.send(
                            .post, "\(Self.base)/Example%20A%2FB%20Test", body: Self.context(user)
                        ).json
                        answers["ofrep"] = ofrep["variant"]?.string
                    case 1:
                        let configs = try await client.send(.get, "/t/acme/production/configs.json?user=\(user)").json
                        answers["configs"] = configs["title"] == .string("Welcome") ? "Group A" : "Group B"
                    case 2:
                        let poll = try await BucketeerTests.poll(
                            client, key: "any", body: try BucketeerTests.evaluationsBody(user: user, data: [:]))
                        answers["bucketeer"] =
                            poll.evaluations.evaluations.first { $0.featureId == TestServer.abTest }?.variationValue
                    default:
                        let bytes = try await client.send(.get, "/t/acme/production/features.json?user=\(user)").bytes
                        answers["features"] = try Self.pinnedVariation(of: TestServer.abTest, in: bytes)
                    }
                }
                #expect(answers.count == 4 && Set(answers.values).count == 1, "\(user): \(answers)")
            }
        }
        #expect(try await server.store.allRecordedUsers(of: TestServer.abTest) == 300)
    }
}

extension OFREPTests {
    /// The group an app lands in from a pinned document: the range of the feature's variations
    /// (with the biases the app uses) that holds its `test-variation-assignment`.
    static func pinnedVariation(of name: String, in bytes: [UInt8]) throws -> String? {
        let root = try JSONParser.parse(bytes).value
        guard case .array(let features)? = root["features"],
            let object = features.first(where: { $0["name"] == .string(name) }),
            case .number(let point)? = object[Feature.assignmentKey],
            let feature = DocumentDecoder.decode(bytes).document?.features.first(where: { $0.name == name })
        else { return nil }
        return VariationRanges(of: feature).variation(at: point)
    }
}

extension TestServer {
    /// Another server on the same store, as after a restart.
    init(sharing other: TestServer) {
        store = other.store
        configuration = other.configuration
        keys = other.keys
        serverAdminKey = other.serverAdminKey
    }
}

extension FeatureStore {
    /// How many users have a group on record in `feature` of acme/production.
    func allRecordedUsers(of name: String) async throws -> Int {
        try await catalog.feature(name, in: TestServer.acme).recordedUsers
    }
}

@Suite("OFREP from a browser")
struct OFREPBrowserTests {
    @Test("A preflight from any origin is answered; answers expose their ETag; the admin API stays same-origin")
    func cors() async throws {
        let server = try await OFREPTests.server()
        try await server.test { client in
            let preflight = try await client.send(
                .options, OFREPTests.base,
                headers: [.origin: "https://app.example", .accessControlRequestMethod: "POST"])
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == "*")
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("x-api-key") == true)
            let bulk = try await client.send(
                .post, OFREPTests.base, headers: [.origin: "https://app.example"], body: OFREPTests.context("u"))
            #expect(bulk.headers[.accessControlAllowOrigin] == "*")
            #expect(bulk.headers[.accessControlExposeHeaders]?.contains("ETag") == true)
            let admin = try await client.send(
                .options, "/api/v1/tenants",
                headers: [.origin: "https://app.example", .accessControlRequestMethod: "GET"])
            #expect(admin.status == .methodNotAllowed && admin.headers[.accessControlAllowOrigin] == nil)
        }
    }
}
