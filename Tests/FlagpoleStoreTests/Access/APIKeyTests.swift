import Crypto
import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("API keys")
struct APIKeyTests {
    let acme = KeyOwner.tenant(EnvironmentPath.acmeProduction.tenant)

    @Test("A key identifies its tenant and role; the file keeps only its SHA-256 and prefix")
    func onlyTheHashIsStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("keys.sqlite").path
        let store = try FeatureStore.open(atPath: path)
        try await store.access.createTenant(EnvironmentPath.acmeProduction.tenant)
        let created = try await store.access.createKey(for: acme, role: .editor, name: "ci")
        #expect(created.secret.hasPrefix("fp_") && created.secret.count == 51)
        #expect(created.info.prefix == String(created.secret.prefix(11)))
        #expect(
            try await store.access.identity(ofKey: created.secret)
                == KeyIdentity(prefix: created.info.prefix, owner: acme, role: .editor, actor: "service:ci"))

        let queue = try DatabaseQueue(path: path)
        let digest = try await queue.read { db in try Data.fetchOne(db, sql: "SELECT sha256 FROM api_keys") }
        #expect(digest == Data(SHA256.hash(data: Array(created.secret.utf8))))
        // The database and its write-ahead log, where fresh pages live until a checkpoint.
        var file = try Data(contentsOf: URL(fileURLWithPath: path))
        file.append((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
        #expect(file.range(of: Data(created.info.prefix.utf8)) != nil, "the search would find text stored there")
        #expect(file.range(of: Data(created.secret.utf8)) == nil, "the secret is nowhere in the database file")
        #expect(file.range(of: Data(created.secret.dropFirst(11).utf8)) == nil)
    }

    @Test("Unknown, malformed, altered and revoked keys identify no one")
    func refusedKeys() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let created = try await store.access.createKey(for: acme, role: .reader)
        var altered = Array(created.secret)
        altered[altered.count - 1] = altered.last == "0" ? "1" : "0"
        for candidate in ["", "fp_", "fp_zz", String(altered), created.secret.uppercased(), created.secret + "0"] {
            #expect(try await store.access.identity(ofKey: candidate) == nil, "\(candidate)")
        }
        try await store.access.revokeKey(created.info.prefix, of: acme)
        #expect(try await store.access.identity(ofKey: created.secret) == nil)
        #expect(try await store.access.keys(of: acme).first?.revokedAt != nil)
        // Another tenant cannot revoke, nor see, acme's key.
        await #expect(throws: KeyError.self) {
            try await store.access.revokeKey(created.info.prefix, of: .tenant(EnvironmentPath.globexProduction.tenant))
        }
        #expect(try await store.access.keys(of: .tenant(EnvironmentPath.globexProduction.tenant)).isEmpty)
    }

    @Test("Roles: each permits what the ones below it do; delivery only fetches; a server admin acts everywhere")
    func roles() {
        let acmeSlug = EnvironmentPath.acmeProduction.tenant
        let globex = EnvironmentPath.globexProduction.tenant
        func key(_ role: KeyRole) -> KeyIdentity { KeyIdentity(prefix: "fp_", owner: .tenant(acmeSlug), role: role) }
        #expect(key(.admin).permits(.editor, on: acmeSlug) && key(.admin).permits(.reader, on: acmeSlug))
        #expect(key(.editor).permits(.reader, on: acmeSlug) && !key(.editor).permits(.admin, on: acmeSlug))
        #expect(!key(.reader).permits(.editor, on: acmeSlug))
        #expect(!key(.delivery).permits(.reader, on: acmeSlug) && key(.delivery).permits(.delivery, on: acmeSlug))
        #expect(key(.reader).permits(.delivery, on: acmeSlug))
        #expect(!key(.admin).permits(.reader, on: globex) && !key(.admin).sees(globex))
        let server = KeyIdentity(prefix: "fp_", owner: .server, role: .serverAdmin)
        #expect(server.permits(.admin, on: globex))
    }

    @Test("A server key is a server admin, and a tenant key never is")
    func ownerAndRoleAgree() async throws {
        let store = try await FeatureStore.makeWithTenants()
        await #expect(throws: KeyError.self) { try await store.access.createKey(for: .server, role: .admin) }
        await #expect(throws: KeyError.self) { try await store.access.createKey(for: acme, role: .serverAdmin) }
        let server = try await store.access.createKey(for: .server, role: .serverAdmin)
        #expect(try await store.access.identity(ofKey: server.secret)?.owner == .server)
        #expect(try await store.access.keys(of: .server).map(\.prefix) == [server.info.prefix])
    }
}
