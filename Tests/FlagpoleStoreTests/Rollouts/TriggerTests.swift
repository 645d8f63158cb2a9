import FlagpoleCore
import Foundation
import Testing

@testable import FlagpoleStore

@Suite("Triggers")
struct TriggerTests {
    let path = EnvironmentPath.acmeProduction
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A store with the on/off test `checkout` and a running ramp on it (step 1 applied).
    func storeWithRamp() async throws -> FeatureStore {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(RampTests.onOff)
        _ = try await store.assignments.assign(UserID.numbered(500), to: "checkout", in: path)
        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [10, 50, 100], hold: .duration(seconds: 3600)),
            in: path,
            actor: "cli:ada", now: start)
        return store
    }

    @Test("A pause trigger pauses the running ramp, records its caller, and acts at most once a minute")
    func pauseTrigger() async throws {
        let store = try await storeWithRamp()
        let created = try await store.rollouts.createTrigger(
            for: "checkout", action: .pause, name: "Crashlytics velocity alert", in: path, actor: "cli:ada", now: start)
        #expect(created.token.hasPrefix("fpt_") && created.token.count == 68)
        #expect(created.trigger.prefix == String(created.token.prefix(12)))

        let first = try await store.rollouts.callTrigger(
            created.token, address: "203.0.113.9", userAgent: "Crashlytics", now: start.addingTimeInterval(10))
        #expect(first.acted && first.outcome == "paused ramp 1" && first.retryAfter == nil)
        let ramp = try await store.rollouts.ramp(of: "checkout", in: path).ramp
        #expect(ramp.state == .paused && ramp.reason == "trigger Crashlytics velocity alert called from 203.0.113.9")
        #expect(ramp.events.last?.actor == "trigger:Crashlytics velocity alert")

        let again = try await store.rollouts.callTrigger(
            created.token, address: "203.0.113.9", userAgent: nil, now: start.addingTimeInterval(40))
        #expect(!again.acted && again.retryAfter == 30)
        let later = try await store.rollouts.callTrigger(
            created.token, address: "203.0.113.9", userAgent: nil, now: start.addingTimeInterval(71))
        #expect(later.acted && later.outcome == "nothing: ramp 1 is paused already")

        let listed = try #require(try await store.rollouts.triggers(in: path).first)
        #expect(listed.calls.map(\.acted) == [true, false, true])
        #expect(listed.calls.last?.userAgent == "Crashlytics" && listed.calls.last?.address == "203.0.113.9")
        #expect(!"\(listed)".contains(created.token))
    }

    @Test("A rollback trigger aborts the ramp and gives its share back; a disable trigger switches the feature off")
    func rollbackAndDisable() async throws {
        let store = try await storeWithRamp()
        let rollback = try await store.rollouts.createTrigger(
            for: "checkout", action: .rollback, name: "Sentry", in: path, actor: "t", now: start)
        let outcome = try await store.rollouts.callTrigger(
            rollback.token, address: "198.51.100.1", userAgent: nil, now: start)
        #expect(outcome.acted && outcome.outcome.hasPrefix("aborted ramp 1 and rolled Enabled back to 0 %"))
        #expect(try await store.catalog.feature("checkout", in: path).feature.testBiases == [0, 100])
        #expect(try await store.catalog.revisions(of: path).first?.actor == "trigger:Sentry")
        #expect(outcome.revision == 3)
        #expect(try await store.rollouts.ramp(of: "checkout", in: path).ramp.state == .aborted)

        _ = try await store.rollouts.createRamp(
            RampRequest(feature: "checkout", variation: nil, steps: [20, 100], hold: .duration(seconds: 3600)),
            in: path, actor: "t",
            now: start)
        let disable = try await store.rollouts.createTrigger(
            for: "checkout", action: .disable, name: "Pager", in: path, actor: "t", now: start)
        let disabled = try await store.rollouts.callTrigger(
            disable.token, address: "198.51.100.2", userAgent: nil, now: start)
        #expect(disabled.outcome == "disabled checkout as revision 5, and paused ramp 2")
        #expect(try await store.catalog.feature("checkout", in: path).feature.isEnabled == false)
        let revision = try #require(try await store.catalog.revisions(of: path).first)
        #expect(revision.actor == "trigger:Pager" && revision.message.hasSuffix("called from 198.51.100.2"))
        // Resuming needs the test enabled again, and says so.
        await #expect(throws: RampError.testDisabled(path, feature: "checkout")) {
            try await store.rollouts.resumeRamp(of: "checkout", in: path, actor: "t", now: start)
        }
    }

    @Test("Revoked, unknown and malformed tokens do nothing; bad names are refused; each tenant sees its own")
    func refusals() async throws {
        let store = try await storeWithRamp()
        let created = try await store.rollouts.createTrigger(
            for: "checkout", action: .pause, name: "A", in: path, actor: "t", now: start)
        try await store.rollouts.revokeTrigger(created.trigger.prefix, in: path, now: start)
        await #expect(throws: TriggerError.revoked(at: start)) {
            try await store.rollouts.callTrigger(created.token, address: "x", userAgent: nil, now: start)
        }
        for token in [
            "fpt_" + String(repeating: "0", count: 64), "fpt_short", "fp_" + String(repeating: "a", count: 48), "",
        ] {
            await #expect(throws: TriggerError.unknownToken) {
                try await store.rollouts.callTrigger(token, address: "x", userAgent: nil, now: start)
            }
        }
        #expect(try await store.rollouts.ramp(of: "checkout", in: path).ramp.state == .running)
        await #expect(throws: TriggerError.triggerNotFound(path, prefix: created.trigger.prefix)) {
            try await store.rollouts.revokeTrigger(created.trigger.prefix, in: path, now: start)
        }
        for name in ["", String(repeating: "n", count: 101), "two\nlines"] {
            await #expect(throws: TriggerError.self) {
                try await store.rollouts.createTrigger(
                    for: "checkout", action: .pause, name: name, in: path, actor: "t", now: start)
            }
        }
        await #expect(throws: DocumentError.self) {
            try await store.rollouts.createTrigger(
                for: "nope", action: .pause, name: "A", in: path, actor: "t", now: start)
        }
        #expect(try await store.rollouts.triggers(in: path).count == 1)
        #expect(try await store.rollouts.triggers(in: .globexProduction).isEmpty)
        await #expect(throws: TriggerError.triggerNotFound(.globexProduction, prefix: created.trigger.prefix)) {
            try await store.rollouts.revokeTrigger(created.trigger.prefix, in: .globexProduction, now: start)
        }
    }
}
