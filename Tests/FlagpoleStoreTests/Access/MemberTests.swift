import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Members")
struct MemberTests {
    let acme = EnvironmentPath.acmeProduction.tenant
    let globex = EnvironmentPath.globexProduction.tenant
    /// A cheap scrypt, so that the tests set passwords quickly; verifying reads the cost from
    /// the stored hash, as it does for the real one.
    let cost = PasswordCost(log2N: 10, blockSize: 8, parallelism: 1)
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A member of acme with `role` who has accepted their invitation, and their session.
    func acceptedMember(
        _ email: String = "ada@example.com", role: KeyRole = .editor, in store: FeatureStore
    ) async throws -> OpenedSession {
        let link = try #require(
            try await store.access.addMember(
                email, name: "Ada Lovelace", role: role, to: acme, by: "cli:ops", now: start))
        return try await store.access.useLink(
            link.token, password: "correct horse battery", address: "192.0.2.1", cost: cost, now: start)
    }

    @Test("An invitation sets the password once, signs the member in, and names them in what they write")
    func invitationSignsIn() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let link = try #require(
            try await store.access.addMember(
                " Ada@Example.com ", name: "Ada Lovelace", role: .editor, to: acme, by: "cli:ops", now: start))
        #expect(link.token.hasPrefix("fpl_") && link.email == "ada@example.com")
        #expect(link.expiresAt == start.addingTimeInterval(72 * 3600))
        let invited = try await store.access.members(of: acme)
        #expect(invited.map(\.email) == ["ada@example.com"])
        #expect(invited.first?.hasPassword == false && invited.first?.invitedUntil == link.expiresAt)
        #expect(try await store.access.memberLink(link.token, now: start).name == "Ada Lovelace")

        let session = try await store.access.useLink(
            link.token, password: "correct horse battery", address: "192.0.2.1", cost: cost, now: start)
        #expect(session.identity.actor == "Ada Lovelace <ada@example.com>")
        #expect(session.identity.permits(.editor, on: acme) && !session.identity.permits(.admin, on: acme))
        #expect(try await store.access.sessionIdentity(session.token, now: start) == session.identity)
        #expect(try await store.access.members(of: acme).first?.hasPassword == true)

        await #expect(throws: MemberError.linkUsed(at: start)) {
            try await store.access.useLink(
                link.token, password: "another long one", address: "x", cost: cost, now: start)
        }
        _ = try await store.catalog.importDocument(
            Array(#"{"features":[{"name":"Search","enabled":true}]}"#.utf8), into: .acmeProduction,
            options: ImportOptions(actor: session.identity.actor))
        #expect(try await store.catalog.revisions(of: .acmeProduction).first?.actor == "Ada Lovelace <ada@example.com>")
    }

    @Test("Expired, unknown and replaced links are refused, and nothing is set")
    func refusedLinks() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let first = try #require(
            try await store.access.addMember(
                "ada@example.com", name: "Ada", role: .reader, to: acme, by: "cli:ops", now: start))
        let late = start.addingTimeInterval(72 * 3600 + 1)
        await #expect(throws: MemberError.linkExpired(at: first.expiresAt)) {
            try await store.access.useLink(
                first.token, password: "correct horse battery", address: "x", cost: cost, now: late)
        }
        let second = try await store.access.invitation(for: "ada@example.com", in: acme, by: "cli:ops", now: start)
        await #expect(throws: MemberError.linkNotFound, "the newer link replaces the older") {
            try await store.access.memberLink(first.token, now: start)
        }
        await #expect(throws: MemberError.linkNotFound) {
            try await store.access.memberLink("fpl_" + String(repeating: "0", count: 64), now: start)
        }
        await #expect(throws: MemberError.passwordTooShort(minimum: 10)) {
            try await store.access.useLink(second.token, password: "short", address: "x", cost: cost, now: start)
        }
        await #expect(throws: MemberError.passwordTooLong(maximumBytes: 1024)) {
            try await store.access.useLink(
                second.token, password: String(repeating: "a", count: 1 << 20), address: "x", cost: cost, now: start)
        }
        #expect(try await store.access.members(of: acme).first?.hasPassword == false, "no refusal set a password")
        _ = try await store.access.useLink(
            second.token, password: "correct horse battery", address: "x", cost: cost, now: start)
        // However the address is typed: an invitation would let a tenant's admin set the
        // password of a person who may belong to other tenants.
        for typed in ["ada@example.com", " ADA@example.com "] {
            await #expect(throws: MemberError.alreadyAccepted(email: "ada@example.com")) {
                try await store.access.invitation(for: typed, in: acme, by: "cli:ops", now: start)
            }
        }
        #expect(try await store.access.setRole(.admin, of: " Ada@Example.com", in: acme).role == .admin)
    }

    @Test("Twenty wrong passwords lock the account; its owner gets in once the lockout ends")
    func lockout() async throws {
        let store = try await FeatureStore.makeWithTenants()
        _ = try await acceptedMember(in: store)
        var outcomes: [SignInOutcome] = []
        for attempt in 0..<20 {
            outcomes.append(
                try await store.access.signIn(
                    email: "ada@example.com", password: "wrong password \(attempt)", address: "198.51.100.7",
                    now: start.addingTimeInterval(Double(attempt)), cost: cost))
        }
        let lockedUntil = start.addingTimeInterval(4 + Access.lockout)
        #expect(outcomes.prefix(4).allSatisfy { $0 == .refused })
        #expect(outcomes.dropFirst(4).allSatisfy { $0 == .lockedOut(until: lockedUntil) })

        let during = try await store.access.signIn(
            email: "ada@example.com", password: "correct horse battery", address: "203.0.113.9",
            now: lockedUntil.addingTimeInterval(-1))
        #expect(during == .lockedOut(until: lockedUntil), "the right password from elsewhere waits too")
        let after = try await store.access.signIn(
            email: "ADA@example.com", password: "correct horse battery", address: "203.0.113.9", now: lockedUntil)
        guard case .opened(let session) = after else {
            Issue.record("expected a session after the lockout, got \(after)")
            return
        }
        #expect(session.identity.actor == "Ada Lovelace <ada@example.com>")
    }

    @Test("An address that fails across many accounts is locked too; a huge password is refused before hashing")
    func addressLimit() async throws {
        let store = try await FeatureStore.makeWithTenants()
        var last = SignInOutcome.refused
        for attempt in 0..<Access.addressFailureLimit {
            last = try await store.access.signIn(
                email: "nobody\(attempt)@example.com", password: "guess", address: "198.51.100.8",
                now: start.addingTimeInterval(Double(attempt)), cost: cost)
        }
        #expect(last == .lockedOut(until: start.addingTimeInterval(19 + Access.lockout)))
        await #expect(throws: MemberError.passwordTooLong(maximumBytes: 1024)) {
            try await store.access.signIn(
                email: "ada@example.com", password: String(repeating: "a", count: 1 << 20), address: "x", now: start)
        }
    }

    @Test("A new role takes effect at once in open sessions and in the member's keys")
    func demotion() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let session = try await acceptedMember(role: .admin, in: store)
        let key = try await store.access.createKey(for: .tenant(acme), role: .editor, member: "ada@example.com")
        #expect(try await store.access.identity(ofKey: key.secret)?.actor == "Ada Lovelace <ada@example.com>")
        #expect(try await store.access.identity(ofKey: key.secret)?.role == .editor)

        try await store.access.setRole(.reader, of: "ada@example.com", in: acme)
        let now = try #require(try await store.access.sessionIdentity(session.token, now: start))
        #expect(now.permits(.reader, on: acme) && !now.permits(.editor, on: acme))
        #expect(
            try await store.access.identity(ofKey: key.secret)?.role == .reader, "the key does no more than its member")
        await #expect(throws: MemberError.keyAboveMember(.editor, member: .reader)) {
            try await store.access.createKey(for: .tenant(acme), role: .editor, member: "ada@example.com")
        }
    }

    @Test("Removing a member ends their sessions and revokes their keys at once")
    func removal() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let session = try await acceptedMember(in: store)
        let key = try await store.access.createKey(for: .tenant(acme), role: .reader, member: "ada@example.com")
        let service = try await store.access.createKey(for: .tenant(acme), role: .editor, name: "CI deploy")
        #expect(try await store.access.identity(ofKey: service.secret)?.actor == "service:CI deploy")

        try await store.access.removeMember("ada@example.com", from: acme, now: start)
        #expect(try await store.access.sessionIdentity(session.token, now: start) == nil)
        #expect(try await store.access.identity(ofKey: key.secret) == nil)
        #expect(
            try await store.access.keys(of: .tenant(acme)).first { $0.prefix == key.info.prefix }?.revokedAt == start)
        #expect(try await store.access.identity(ofKey: service.secret) != nil, "a service's key stays")
        #expect(try await store.access.members(of: acme).isEmpty)
        await #expect(throws: MemberError.memberNotFound(email: "ada@example.com", tenant: acme)) {
            try await store.access.removeMember("ada@example.com", from: acme)
        }
    }

    @Test("A member of one tenant sees nothing of another; a second tenant adds them without a link")
    func isolation() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let session = try await acceptedMember(in: store)
        #expect(session.identity.sees(acme) && !session.identity.sees(globex))
        #expect(!session.identity.permits(.reader, on: globex))
        #expect(try await store.access.members(of: globex).isEmpty)
        await #expect(throws: MemberError.memberNotFound(email: "ada@example.com", tenant: globex)) {
            try await store.access.setRole(.admin, of: "ada@example.com", in: globex)
        }

        let added = try await store.access.addMember(
            "ada@example.com", name: "Ada", role: .reader, to: globex, by: "cli:ops", now: start)
        #expect(added == nil, "someone with a password needs no invitation")
        let both = try #require(try await store.access.sessionIdentity(session.token, now: start))
        #expect(
            both.permits(.editor, on: acme) && both.permits(.reader, on: globex) && !both.permits(.editor, on: globex))
        await #expect(throws: MemberError.alreadyMember(email: "ada@example.com", tenant: globex)) {
            try await store.access.addMember(
                "ada@example.com", name: "Ada", role: .admin, to: globex, by: "x", now: start)
        }
    }

    @Test("A reset link sets a new password and ends the member's other sessions; sessions are listed and revocable")
    func resetAndSessions() async throws {
        let store = try await FeatureStore.makeWithTenants()
        let first = try await acceptedMember(in: store)
        let second = try await store.access.signIn(
            email: "ada@example.com", password: "correct horse battery", address: "203.0.113.5", now: start)
        guard case .opened(let other) = second else {
            Issue.record("expected a second session, got \(second)")
            return
        }
        let sessions = try await store.access.memberSessions(of: "ada@example.com", current: first.token, now: start)
        #expect(sessions.map(\.address).sorted() == ["192.0.2.1", "203.0.113.5"])
        #expect(sessions.filter(\.isCurrent).map(\.address) == ["192.0.2.1"])
        try await store.access.closeMemberSession(
            try #require(sessions.first { $0.address == "203.0.113.5" }).id, of: "ada@example.com")
        #expect(try await store.access.sessionIdentity(other.token, now: start) == nil)
        #expect(try await store.access.sessionIdentity(first.token, now: start) != nil)

        let reset = try await store.access.resetLink(for: "ada@example.com", by: "cli:ops", now: start)
        #expect(reset.purpose == .reset)
        let renewed = try await store.access.useLink(
            reset.token, password: "a brand new passphrase", address: "192.0.2.9", cost: cost, now: start)
        #expect(
            try await store.access.sessionIdentity(first.token, now: start) == nil, "a reset ends the other sessions")
        #expect(try await store.access.sessionIdentity(renewed.token, now: start) != nil)
        let old = try await store.access.signIn(
            email: "ada@example.com", password: "correct horse battery", address: "192.0.2.9", now: start)
        #expect(old == .refused)

        await #expect(throws: MemberError.wrongPassword) {
            try await store.access.changePassword(
                of: "ada@example.com", from: "not it at all", to: "yet another passphrase",
                keepingSession: renewed.token, cost: cost)
        }
        try await store.access.changePassword(
            of: "ada@example.com", from: "a brand new passphrase", to: "yet another passphrase",
            keepingSession: renewed.token, cost: cost)
        #expect(
            try await store.access.sessionIdentity(renewed.token, now: start) != nil,
            "the session that changed it stays")
    }

    @Test("Bad e-mails, names and roles are refused with what to write instead")
    func badInput() async throws {
        let store = try await FeatureStore.makeWithTenants()
        for email in ["", "ada", "ada@", "@example.com", "ada@example", "a da@example.com", "ada@@example.com"] {
            await #expect(throws: MemberError.invalidEmail(email)) {
                try await store.access.addMember(email, name: "Ada", role: .reader, to: acme, by: "x")
            }
        }
        await #expect(throws: MemberError.invalidName("is empty")) {
            try await store.access.addMember("ada@example.com", name: "  ", role: .reader, to: acme, by: "x")
        }
        await #expect(throws: MemberError.invalidRole("delivery")) {
            try await store.access.addMember("ada@example.com", name: "Ada", role: .delivery, to: acme, by: "x")
        }
        #expect(try await store.access.members(of: acme).isEmpty)
    }
}
