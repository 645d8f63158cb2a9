import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer

@Suite("The limit on new users per anonymous client")
struct NewUserLimitTests {
    static let url = "/t/acme/production/features.json"

    @Test("A bucket gives `burst` users at once, then `rate` a second, and forgets no one it holds")
    func tokenBucket() throws {
        let limiter = NewUserLimiter(limit: .init(rate: 2, burst: 3))
        let client = NewUserLimiter.Client(try SocketAddress(ipAddress: "203.0.113.7", port: 1))
        let start = ContinuousClock.now
        #expect((0..<4).map { _ in limiter.admit(client, now: start) } == [true, true, true, false])
        // Half a second later, one token; a second after that, two (never more than the burst).
        #expect(limiter.admit(client, now: start + .milliseconds(500)))
        #expect(!limiter.admit(client, now: start + .milliseconds(500)))
        #expect((0..<3).map { _ in limiter.admit(client, now: start + .milliseconds(1500)) } == [true, true, false])
        #expect((0..<4).map { _ in limiter.admit(client, now: start + .seconds(60)) } == [true, true, true, false])
        // Another address has its own bucket.
        #expect(limiter.admit(NewUserLimiter.Client(try SocketAddress(ipAddress: "203.0.113.8", port: 1)), now: start))
    }

    @Test("IPv6 clients are their /64; an IPv4 address mapped into IPv6 is that IPv4 client")
    func clientKeys() throws {
        func client(_ address: String) throws -> NewUserLimiter.Client {
            NewUserLimiter.Client(try SocketAddress(ipAddress: address, port: 443))
        }
        #expect(try client("2001:db8:1:2::1") == client("2001:db8:1:2:ffff:eeee:dddd:cccc"))
        #expect(try client("2001:db8:1:2::1") != client("2001:db8:1:3::1"))
        #expect(try client("::ffff:198.51.100.4") == client("198.51.100.4"))
        #expect(try client("198.51.100.4") != client("198.51.100.5"))
        #expect(NewUserLimiter.Client(forwardedFor: "10.0.0.1, 198.51.100.4") == (try client("198.51.100.4")))
        #expect(NewUserLimiter.Client(forwardedFor: "unknown") == nil)
    }

    @Test("A flood of clients is bounded: full buckets are forgotten first, then new clients wait")
    func trackedClientsAreBounded() throws {
        let limiter = NewUserLimiter(limit: .init(rate: 1, burst: 2), trackedClientLimit: 3)
        let now = ContinuousClock.now
        let clients = try (1...5).map { NewUserLimiter.Client(try SocketAddress(ipAddress: "192.0.2.\($0)", port: 1)) }
        #expect(clients.prefix(3).allSatisfy { limiter.admit($0, now: now) })
        #expect(!limiter.admit(clients[3], now: now), "three clients with tokens taken are all remembered")
        // Two seconds later their buckets are full again: forgotten, and the newcomer gets in.
        #expect(limiter.admit(clients[3], now: now + .seconds(2)))
    }

    @Test(
        "Over its limit, an anonymous client's new user gets the groups the store would record, unrecorded; known users and keyed requests are never limited"
    )
    func overTheLimit() async throws {
        let server = try await TestServer(
            configuration: ServerConfiguration(accessLogLevel: .debug, newUsersPerSecond: 0, newUserBurst: 2))
        try await server.test { client in
            var answers: [TestResponse] = []
            for user in ["u1", "u2", "u3"] { answers.append(try await client.send(.get, Self.url + "?user=" + user)) }
            #expect(answers.map(\.status) == [.ok, .ok, .ok])
            #expect(answers.map { $0.headers[.recorded] } == ["true", "true", "false"])
            #expect(answers[2].headers[.cacheControl] == "private, no-store")
            #expect(
                try await server.store.assignments.assignmentEvents(
                    in: TestServer.acme, matching: .init(user: UserID(rawValue: "u3"))
                ).isEmpty)

            // A user already recorded, and any request with a key, are served as usual.
            #expect(try await client.send(.get, Self.url + "?user=u1").headers[.recorded] == "true")
            let keyed = try await client.send(.get, Self.url + "?user=u4", key: server.key("acme", .delivery))
            #expect(keyed.headers[.recorded] == "true")
            #expect(try await client.send(.get, Self.url + "?user=u5").headers[.recorded] == "false")

            // The unrecorded document pins what recording would: the same bytes once recorded.
            let later = try await server.store.assignments.pinnedDocument(
                for: UserID(rawValue: "u3"), in: TestServer.acme)
            #expect(later.isRecorded && later.bytes == answers[2].bytes)
        }
    }

    @Test(
        "Only a valid key of this environment escapes the limit: an invalid key, another tenant's, or one scoped elsewhere is anonymous, on every surface"
    )
    func onlyAKeyOfTheEnvironmentEscapes() async throws {
        let server = try await TestServer(
            configuration: ServerConfiguration(accessLogLevel: .debug, newUsersPerSecond: 0, newUserBurst: 1))
        _ = try await server.store.access.createEnvironment(
            EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "staging")))
        let staging = try await server.store.access.createKey(
            for: .tenant(TenantSlug(rawValue: "acme")), role: .delivery,
            environment: EnvironmentName(rawValue: "staging")
        ).secret
        try await server.test { client in
            // The one new user this client may have recorded.
            #expect(try await client.send(.get, Self.url + "?user=first").headers[.recorded] == "true")
            let notOfThisEnvironment = [
                "fp_" + String(repeating: "0", count: 48), "not a key", server.key("globex", .admin), staging,
            ]
            for (index, key) in notOfThisEnvironment.enumerated() {
                let features = try await client.send(.get, Self.url + "?user=k\(index)", key: key)
                #expect(
                    features.status == .ok && features.headers[.recorded] == "false",
                    "features.json with \(key.prefix(6))")
                let configs = try await client.send(
                    .get, "/t/acme/production/configs.json?user=c\(index)", headers: [.authorization: "Bearer \(key)"])
                #expect(configs.headers[.recorded] == "false", "configs.json with \(key.prefix(6))")
            }
            // OFREP refuses an unknown key outright, and answers another tenant's as anonymous: limited.
            let ofrep = try await client.send(
                .post, "/t/acme/production/ofrep/v1/evaluate/flags/\(segment(TestServer.abTest))",
                headers: [.xAPIKey: server.key("globex", .admin)], body: #"{"context": {"targetingKey": "o1"}}"#)
            #expect(ofrep.status == .tooManyRequests)
            // A key of this environment, of any role, is the team's own.
            for role in [KeyRole.delivery, .reader] {
                let keyed = try await client.send(.get, Self.url + "?user=team-\(role)", key: server.key("acme", role))
                #expect(keyed.headers[.recorded] == "true", "\(role)")
            }
        }
    }

    @Test("X-Forwarded-For names the client only with --trust-proxy")
    func forwardedFor() async throws {
        for trustsProxy in [false, true] {
            let server = try await TestServer(
                configuration: ServerConfiguration(
                    accessLogLevel: .debug, newUsersPerSecond: 0, newUserBurst: 1, trustsProxy: trustsProxy))
            let answers = try await server.test { client in
                try await (1...3).asyncMap { index in
                    try await client.send(
                        .get, Self.url + "?user=f\(index)", headers: [.xForwardedFor: "192.0.2.1, 198.51.100.\(index)"]
                    )
                    .headers[.recorded]
                }
            }
            // Behind a trusted proxy each forwarded address has its own bucket; otherwise all come
            // from one peer, whatever the header claims.
            #expect(answers == (trustsProxy ? ["true", "true", "true"] : ["true", "false", "false"]))
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
