import Crypto
import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("Dashboard sessions")
struct SessionTests {
    let acme = KeyOwner.tenant(EnvironmentPath.acmeProduction.tenant)

    @Test("A session acts with its key; the file keeps only the token's SHA-256")
    func onlyTheHashIsStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-sessions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("sessions.sqlite").path
        let store = try FeatureStore.open(atPath: path)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        let key = try await store.access.createKey(for: acme, role: .editor)
        let session = try #require(try await store.access.openSession(withKey: key.secret))
        #expect(session.token.hasPrefix("fps_") && session.token.count == 68)
        #expect(session.identity == KeyIdentity(prefix: key.info.prefix, owner: acme, role: .editor))
        #expect(try await store.access.sessionIdentity(session.token) == session.identity)

        var file = try Data(contentsOf: URL(fileURLWithPath: path))
        file.append((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
        #expect(
            file.range(of: Data(SHA256.hash(data: Array(session.token.utf8)))) != nil,
            "the search would find the digest")
        #expect(file.range(of: Data(session.token.utf8)) == nil, "the token is nowhere in the database file")
        #expect(file.range(of: Data(session.token.dropFirst(4).utf8)) == nil)
    }

    @Test("Delivery, unknown and revoked keys open no session")
    func refusedKeys() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let delivery = try await store.access.createKey(for: acme, role: .delivery)
        #expect(try await store.access.openSession(withKey: delivery.secret) == nil)
        #expect(try await store.access.openSession(withKey: "fp_" + String(repeating: "0", count: 48)) == nil)
        #expect(try await store.access.openSession(withKey: "not a key") == nil)
        let reader = try await store.access.createKey(for: acme, role: .reader)
        try await store.access.revokeKey(reader.info.prefix, of: acme)
        #expect(try await store.access.openSession(withKey: reader.secret) == nil)
    }

    @Test("A session ends when signed out, when it expires, and when its key is revoked")
    func sessionsEnd() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let key = try await store.access.createKey(for: acme, role: .admin)
        let start = Date()
        let first = try #require(try await store.access.openSession(withKey: key.secret, now: start))
        let second = try #require(try await store.access.openSession(withKey: key.secret, now: start))
        #expect(first.token != second.token)

        try await store.access.closeSession(first.token)
        #expect(try await store.access.sessionIdentity(first.token) == nil)
        #expect(try await store.access.sessionIdentity(second.token) != nil, "signing out ends only that session")

        let late = start.addingTimeInterval(Access.sessionLifetime + 1)
        #expect(try await store.access.sessionIdentity(second.token, now: late) == nil)
        #expect(try await store.access.sessionIdentity(second.token, now: start.addingTimeInterval(60)) != nil)

        try await store.access.revokeKey(key.info.prefix, of: acme)
        #expect(try await store.access.sessionIdentity(second.token, now: start.addingTimeInterval(60)) == nil)
        for malformed in ["", "fps_", second.token.uppercased(), second.token + "0"] {
            #expect(try await store.access.sessionIdentity(malformed) == nil)
        }
    }

    @Test("Opening a session sweeps the expired ones")
    func expiredSessionsAreSwept() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let key = try await store.access.createKey(for: acme, role: .reader)
        let start = Date()
        _ = try await store.access.openSession(withKey: key.secret, now: start)
        _ = try await store.access.openSession(
            withKey: key.secret, now: start.addingTimeInterval(Access.sessionLifetime + 1))
        let count = try await store.read { db in try db.value(Int.self, "SELECT count(*) FROM sessions") }
        #expect(count == 1)
    }
}
