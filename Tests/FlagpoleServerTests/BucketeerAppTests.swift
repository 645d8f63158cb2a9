import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// An app with the stock Bucketeer iOS SDK through its life, on the demo's data: installs,
/// polls, a user switch, relaunches, writes between polls, tags, the host root and both kinds of
/// environment. `BucketeerApp` keeps what the SDK keeps and decodes every answer the strict way
/// it does; every full answer is held to OFREP's for the same user: one user, one answer,
/// whichever protocol asks.
@Suite("Bucketeer: an app's life with the stock iOS SDK")
struct BucketeerAppTests {
    static let abTest = "Example A/B Test"
    static let mvtTest = "Example MVT Test"
    static let unlockFlag = "Example Unlock Flag"
    /// A flag the app's code reads that the store lacks.
    static let missingFlag = "flag-this-app-reads-but-the-store-lacks"
    /// Country DE gets Group B of the A/B test, and of the config that follows it.
    static let germany =
        #"{"rules": [{"id": "germany", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "Group B"}}]}"#

    @Test(
        "A fresh install gets every flag, each readable by its getter and equal to OFREP; polls keep token and cache; a token never issued gets everything"
    )
    func freshInstallAndPolls() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var app = BucketeerApp(
                client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free", "country": "FR"])
            let first = try await app.fetch()
            first.expectFull("initialize on a fresh install")
            #expect(app.install.token == first.answer.userEvaluationsId && app.install.evaluatedAt != "0")
            #expect(Set(app.stored().keys) == DemoServer.allFlags)
            app.readEveryFlag()
            #expect(app.variation(Self.missingFlag, .bool) == nil, "a flag the store lacks is the app's default")
            try await app.expectSameAsOFREP(first)
            // Nothing changed: the token back, nothing else, whatever evaluatedAt the app sends.
            let token = app.install.token
            for poll in 1...3 { try await app.expectUnchangedPoll("poll \(poll)") }
            #expect(app.install.token == token)
            // A token the server never issued (Bucketeer's own style, or an old word): the whole set
            // and the current answer's token.
            for presented in ["9368942808824859638", "no_evaluations"] {
                var stranger = app
                stranger.install.token = presented
                let fetched = try await stranger.fetch()
                fetched.expectFull("presenting \(presented)")
                #expect(fetched.answer.userEvaluationsId == token)
            }
        }
    }

    @Test("A user switch on one install gets the new user's whole set; switching back gives the first user's token")
    func userSwitch() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var alice = BucketeerApp(
                client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free", "country": "FR"])
            try await alice.fetch().expectFull("Alice's first fetch")
            let aliceToken = alice.install.token
            // flush, destroy, initialize with Bob: the install presents Alice's token (§7).
            var bob = BucketeerApp(
                client, install: alice.install, key: demo.productionKey, user: "bk-bob", attributes: ["country": "FR"])
            let switched = try await bob.fetch()
            switched.expectFull("Bob presenting Alice's token")
            #expect(switched.answer.evaluations.evaluations.allSatisfy { !$0.id.contains("bk-alice") })
            #expect(Set(bob.stored().keys) == DemoServer.allFlags)
            try await bob.expectSameAsOFREP(switched)
            try await bob.expectUnchangedPoll("Bob's poll")
            // Alice again, on the install that now holds Bob's token.
            var back = BucketeerApp(
                client, install: bob.install, key: demo.productionKey, user: "bk-alice", attributes: alice.attributes)
            let again = try await back.fetch()
            again.expectFull("back to Alice")
            #expect(again.answer.userEvaluationsId == aliceToken, "nothing of Alice's changed")
            try await back.expectSameAsOFREP(again)
        }
    }

    @Test(
        "New attributes at a relaunch or by updateUserAttributes get a fresh whole set with the rule; attributes removed drop it"
    )
    func relaunchWithNewAttributes() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            try await demo.admin(client, .put, DemoServer.feature(Self.abTest) + "/rules", body: Self.germany)
            var bob = BucketeerApp(client, key: demo.productionKey, user: "bk-bob", attributes: ["country": "FR"])
            try await bob.fetch().expectFull("Bob in France")
            // initialize sends userAttributesUpdated false even when the attributes changed.
            bob = BucketeerApp(
                client, install: bob.install, key: demo.productionKey, user: "bk-bob", attributes: ["country": "DE"])
            let relaunched = try await bob.fetch()
            relaunched.expectFull("relaunch in Germany")
            try await bob.expectSameAsOFREP(relaunched)
            for name in [Self.abTest, "mainViewTitle"] {
                #expect(bob.stored()[name]?.reason == BucketeerWire.Reason(type: .RULE, ruleId: "germany"), "\(name)")
                #expect(bob.stored()[name]?.variationName == "Group B", "\(name)")
            }
            try await bob.expectUnchangedPoll("poll after the relaunch")
            bob.updateAttributes(["country": "DE", "plan": "pro"])
            #expect(
                bob.requestBody["userEvaluationCondition"]?["userAttributesUpdated"] == .bool(true),
                "the SDK says the attributes were updated")
            let updated = try await bob.fetch()
            updated.expectFull("after updateUserAttributes")
            try await bob.expectSameAsOFREP(updated)
            try await bob.expectUnchangedPoll("poll after updateUserAttributes")

            // §12 MUST 3: the flags are evaluated for user.id and user.data as sent, not as last kept.
            var carol = BucketeerApp(client, key: demo.productionKey, user: "bk-carol", attributes: ["country": "DE"])
            try await carol.fetch().expectFull("Carol in Germany")
            #expect(carol.stored()[Self.abTest]?.reason.type == .RULE)
            carol = BucketeerApp(client, install: carol.install, key: demo.productionKey, user: "bk-carol")
            let bare = try await carol.fetch()
            bare.expectFull("relaunch with user.data {}")
            #expect(carol.stored()[Self.abTest]?.reason != BucketeerWire.Reason(type: .RULE, ruleId: "germany"))
            try await carol.expectSameAsOFREP(bare)
        }
    }

    @Test(
        "An override, an unlock and new biases between polls: the next poll gets a new token and everything; others keep theirs"
    )
    func storeChangesBetweenPolls() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var alice = BucketeerApp(client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"])
            var bob = BucketeerApp(client, key: demo.productionKey, user: "bk-bob", attributes: ["country": "DE"])
            try await alice.fetch().expectFull("Alice")
            try await bob.fetch().expectFull("Bob")
            let revision = try #require(bob.stored()[Self.mvtTest]).featureVersion

            // A user is unchanged while the revision is; when it moved, they get everything.
            func bystander(_ what: String) async throws {
                let ofrep = try await client.send(
                    .post, "/t/demo/production/ofrep/v1/evaluate/flags/\(segment(Self.mvtTest))",
                    body: #"{"context": {"targetingKey": "bk-alice", "plan": "free"}}"#
                ).json
                if ofrep["metadata"]?["revision"]?.number == Double(revision) {
                    try await alice.expectUnchangedPoll("\(what): Alice, the revision still \(revision)")
                } else {
                    let fetched = try await alice.fetch()
                    fetched.expectFull("\(what): Alice, after a new revision")
                    try await alice.expectSameAsOFREP(fetched)
                }
            }

            let current = try #require(bob.stored()[Self.mvtTest]).variationName
            let target = try #require(["Group A", "Group B", "Group C"].first { $0 != current })
            try await demo.admin(
                client, .put, DemoServer.feature(Self.mvtTest) + "/overrides/bk-bob",
                body: #"{"variation": "\#(target)"}"#)
            let overridden = try await bob.fetch()
            overridden.expectFull("Bob after his override")
            try await bob.expectSameAsOFREP(overridden)
            #expect(bob.stored()[Self.mvtTest]?.variationName == target)
            #expect(bob.stored()[Self.mvtTest]?.reason.type == .TARGET)
            try await bystander("after Bob's override")

            try await demo.admin(client, .put, DemoServer.feature(Self.unlockFlag) + "/unlocks/bk-bob", body: "{}")
            let unlocked = try await bob.fetch()
            unlocked.expectFull("Bob after his unlock")
            try await bob.expectSameAsOFREP(unlocked)
            #expect(bob.stored()[Self.unlockFlag]?.variationValue == "true")
            #expect(bob.stored()[Self.unlockFlag]?.reason.type == .TARGET)
            try await bystander("after Bob's unlock")

            try await demo.admin(
                client, .post, DemoServer.feature("New Onboarding") + "/biases", body: #"{"biases": [30, 70]}"#)
            let biased = try await bob.fetch()
            biased.expectFull("Bob after new biases")
            try await bob.expectSameAsOFREP(biased)
            let versions = Set(biased.answer.evaluations.evaluations.map(\.featureVersion))
            #expect(versions.count == 1 && versions.first.map { $0 > revision } == true, "\(versions)")
            let aliceAfter = try await alice.fetch()
            aliceAfter.expectFull("Alice after a new revision")
            try await alice.expectSameAsOFREP(aliceAfter)
            try await bob.expectUnchangedPoll("Bob's poll after that")
            try await alice.expectUnchangedPoll("Alice's poll after that")
        }
    }

    @Test("featureTag: the tagged flags, as OFREP's ?tag=; a token issued for another tag is never current")
    func featureTag() async throws {
        let demo = try await DemoServer()
        let tagged = ["New Onboarding", "Example Feature Flag"]
        try await demo.test { client in
            for name in tagged {
                try await demo.admin(client, .put, DemoServer.feature(name) + "/tags", body: #"{"tags": ["ios"]}"#)
            }
            var plain = BucketeerApp(client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"])
            try await plain.fetch().expectFull("untagged")
            var ios = BucketeerApp(
                client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"], tag: "ios")
            let fetched = try await ios.fetch()
            fetched.expectFull("featureTag ios")
            let names = Set(ios.stored().keys)
            // The two features tagged here, and the demo's two configs tagged ios.
            #expect(names == Set(tagged + ["mainViewTitle", "numberOfItemsToDisplay"]), "\(names)")
            try await ios.expectSameAsOFREP(fetched)
            try await ios.expectUnchangedPoll("poll with featureTag ios")
            // MUST 4: either way, another tag's token is answered with everything and a new token.
            for (tag, token) in [("ios", plain.install.token), ("", ios.install.token)] {
                var other = BucketeerApp(
                    client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"], tag: tag)
                other.install.token = token
                let answer = try await other.fetch()
                answer.expectFull("tag \(tag) presenting the other tag's token")
            }
        }
    }

    @Test("apiEndpoint at the host root with a key scoped to demo/production: the same token and answer")
    func hostRoot() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var alice = BucketeerApp(client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"])
            try await alice.fetch().expectFull("at /t/demo/production")
            var root = BucketeerApp(
                client, install: alice.install, base: "", key: demo.productionKey, user: "bk-alice",
                attributes: ["plan": "free"])
            try await root.expectUnchangedPoll("at the root, presenting the environment's token")
            var fresh = BucketeerApp(
                client, base: "", key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"])
            let fetched = try await fresh.fetch()
            fetched.expectFull("a fresh install at the root")
            #expect(fetched.answer.userEvaluationsId == alice.install.token)
            #expect(fresh.storedSummary() == alice.storedSummary())
            try await fresh.expectSameAsOFREP(fetched)
        }
    }

    @Test("The private demo/staging with its key, demo/production with a key the server doesn't know: answered, polled")
    func privateAndPublicEnvironments() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var frank = BucketeerApp(
                client, base: "/t/demo/staging", key: demo.stagingKey, user: "bk-frank", attributes: ["plan": "team"])
            let staged = try await frank.fetch()
            staged.expectFull("demo/staging")
            try await frank.expectSameAsOFREP(staged, environment: "staging", key: demo.stagingKey)
            try await frank.expectUnchangedPoll("poll on demo/staging")
            // The SDK can't send an empty key: a public environment takes any.
            var grace = BucketeerApp(client, key: "any-key-the-app-was-built-with", user: "bk-grace")
            let fetched = try await grace.fetch()
            fetched.expectFull("demo/production with an unknown key")
            try await grace.expectSameAsOFREP(fetched)
            try await grace.expectUnchangedPoll("poll with that key")
        }
    }

    @Test("An SDK before 2.1 (no userEvaluationCondition, no sdkVersion) gets the same whole set and token, then polls")
    func olderBodies() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            var alice = BucketeerApp(client, key: demo.productionKey, user: "bk-alice", attributes: ["plan": "free"])
            try await alice.fetch().expectFull("a current SDK")
            var token = ""
            for round in 0..<2 {
                let body =
                    #"{"sourceId": 2, "tag": "", "user": {"data": {"plan": "free"}, "id": "bk-alice"}, "userEvaluationsId": "\#(token)"}"#
                let response = try await client.send(
                    .post, "/t/demo/production/get_evaluations", headers: BucketeerApp.headers(demo.productionKey),
                    body: body)
                let answer = try BucketeerApp.decodeEvaluations(response, user: "bk-alice")
                let fetched = BucketeerApp.Fetched(answer: answer, presented: token, text: response.text)
                if round == 0 {
                    fetched.expectFull("a 2.0 body")
                    #expect(answer.userEvaluationsId == alice.install.token)
                    token = answer.userEvaluationsId
                } else {
                    fetched.expectUnchanged("a 2.0 poll")
                }
            }
        }
    }

    @Test("User ids as apps have them come back byte for byte, polls match, and their events are taken")
    func userIDs() async throws {
        let demo = try await DemoServer()
        let ids = [
            "alice@example.com", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "Jos\u{E9} N\u{FA}\u{F1}ez",
            "Jose\u{301} (NFD)", "a/b:c?d#e&f=g", "\u{1F600} ", String(repeating: "u", count: 200),
        ]
        try await demo.test { client in
            for user in ids {
                var app = BucketeerApp(
                    client, key: demo.productionKey, user: user,
                    attributes: ["name": "Zo\u{EB}", "signup": "2026-11-24T10:00:00Z"])
                let fetched = try await app.fetch()
                fetched.expectFull("user \(user)")
                try await app.expectSameAsOFREP(fetched)
                try await app.expectUnchangedPoll("poll of \(user)")
                app.track(DemoServer.goal)
                #expect(try await app.flush() == [:], "\(user)'s events")
            }
        }
    }
}
