import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Events in over HTTP, goals and readouts out, exposures from OFREP, and the dashboard page.
@Suite("Experiment results over HTTP")
struct ResultsAPITests {
    static let environment = "/api/v1/tenants/acme/environments/production"
    static let events = "/t/acme/production/events"
    static let results = "\(environment)/features/\(segment(TestServer.abTest))/results"

    static func iso(_ secondsFromNow: Double) -> String {
        Date(timeIntervalSinceNow: secondsFromNow).iso8601Milliseconds
    }

    /// Records `count` users in the A/B test through OFREP's bulk evaluation, which is no exposure.
    static func recordUsers(_ count: Int, client: some TestClientProtocol, key: String) async throws {
        for index in 0..<count {
            let answer = try await client.send(
                .post, "/t/acme/production/ofrep/v1/evaluate/flags", key: key,
                body: #"{"context": {"targetingKey": "user-\#(index)"}}"#)
            #expect(answer.status == .ok)
        }
    }

    @Test("Events need a key; bad events are refused one by one; a batch over the limit changes nothing")
    func events() async throws {
        let server = try await TestServer()
        let delivery = server.key("acme", .delivery)
        try await server.test { client in
            let goal = try await client.send(
                .post, "\(Self.environment)/goals", key: server.key("acme", .editor),
                body: #"{"name": "purchase", "kind": "conversion"}"#)
            #expect(goal.status == .created)
            let again = try await client.send(
                .post, "\(Self.environment)/goals", key: server.key("acme", .editor),
                body: #"{"name": "purchase", "kind": "count"}"#)
            #expect(again.status == .conflict && again.errorCode == "exists")
            let badKind = try await client.send(
                .post, "\(Self.environment)/goals", key: server.key("acme", .editor),
                body: #"{"name": "x", "kind": "ratio"}"#)
            #expect(badKind.status == .unprocessableContent)
            let listed = try await client.send(.get, "\(Self.environment)/goals", key: server.key("acme", .reader))
            #expect(
                try listed.json["goals"]
                    == .array([
                        ["name": .string("purchase"), "kind": .string("conversion"), "better": .string("higher")]
                    ]))

            try await Self.recordUsers(3, client: client, key: delivery)
            let body = """
                {"events": [
                  {"id": "1", "user": "user-0", "goal": "purchase", "time": "\(Self.iso(1))"},
                  {"id": "2", "user": "user-1", "goal": "purchase", "time": \(Int64(Date().timeIntervalSince1970 * 1000) + 1000)},
                  {"id": "3", "user": "user-2", "goal": "nope", "time": "\(Self.iso(1))"},
                  {"id": "4", "user": "user-2", "goal": "purchase"},
                  "not an event"
                ]}
                """
            let anonymous = try await client.send(.post, Self.events, body: body)
            #expect(anonymous.status == .unauthorized)
            let sent = try await client.send(.post, Self.events, key: delivery, body: body)
            #expect(sent.status == .ok)
            #expect(try sent.json["accepted"] == .number(2) && sent.json["duplicates"] == .number(0))
            guard case .array(let refused)? = try sent.json["refused"] else { throw CancellationError() }
            #expect(refused.map { $0["reason"] } == [.string("unknown_goal"), .string("invalid"), .string("invalid")])
            #expect(refused.map { $0["index"] } == [.number(2), .number(3), .number(4)])
            let twice = try await client.send(.post, Self.events, key: delivery, body: body)
            #expect(try twice.json["accepted"] == .number(0) && twice.json["duplicates"] == .number(2))

            let malformed = try await client.send(.post, Self.events, key: delivery, body: "{")
            #expect(malformed.status == .badRequest)
            let many = (0...Experiments.eventsPerBatch).map {
                #"{"id": "m\#($0)", "user": "user-0", "goal": "purchase", "time": "\#(Self.iso(1))"}"#
            }
            let tooMany = try await client.send(
                .post, Self.events, key: delivery, body: #"{"events": [\#(many.joined(separator: ","))]}"#)
            #expect(tooMany.status == .contentTooLarge)
            let elsewhere = try await client.send(.post, "/t/acme/nowhere/events", key: delivery, body: body)
            #expect(elsewhere.status == .notFound)

            let readout = try await client.send(.get, Self.results, key: server.key("acme", .reader))
            #expect(readout.status == .ok)
            guard case .array(let epochs)? = try readout.json["epochs"], let epoch = epochs.last,
                case .array(let goals)? = epoch["goals"], case .array(let rows)? = goals.first?["variations"]
            else { throw CancellationError() }
            let counted = rows.compactMap { row -> Double? in
                if case .number(let events)? = row["events"] { events } else { nil }
            }
            #expect(counted.reduce(0, +) == 2)
            #expect(epoch["analysis"] == .string("intention-to-treat"))
        }
    }

    @Test("A readout of a flag, of an unknown goal or epoch, is refused with what exists")
    func refusedReadouts() async throws {
        let server = try await TestServer()
        let reader = server.key("acme", .reader)
        try await server.test { client in
            let flag = try await client.send(
                .get, "\(Self.environment)/features/\(segment("Example Feature Flag"))/results", key: reader)
            #expect(flag.status == .unprocessableContent && flag.errorCode == "not_a_test")
            let goal = try await client.send(.get, "\(Self.results)?goal=nope", key: reader)
            #expect(goal.status == .notFound)
            let epoch = try await client.send(.get, "\(Self.results)?epoch=9", key: reader)
            #expect(epoch.status == .notFound && epoch.text.contains("epoch 9"))
        }
    }

    @Test("A single OFREP evaluation of a test is the user's exposure; the bulk one is not")
    func exposureFromOFREP() async throws {
        let server = try await TestServer()
        let delivery = server.key("acme", .delivery)
        try await server.test { client in
            try await Self.recordUsers(2, client: client, key: delivery)
            var readout = try await server.store.experiments.results(of: TestServer.abTest, in: TestServer.acme)
            #expect(readout.epochs.last?.analysis == .intentionToTreat)
            let single = try await client.send(
                .post, "\(OFREPTests.base)/\(segment(TestServer.abTest))", key: delivery,
                body: #"{"context": {"targetingKey": "user-0"}}"#)
            #expect(single.status == .ok)
            // Exposures are written off the request path, a fraction of a second later.
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                readout = try await server.store.experiments.results(of: TestServer.abTest, in: TestServer.acme)
                if readout.epochs.last?.analysis == .exposure { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let arms = try #require(readout.epochs.last?.arms)
            #expect(readout.epochs.last?.analysis == .exposure)
            #expect(arms.reduce(0) { $0 + $1.exposedUsers } == 1)
        }
    }

    @Test("The dashboard's results page: a table per goal and the chart of the difference over time")
    func dashboardPage() async throws {
        let server = try await TestServer()
        let delivery = server.key("acme", .delivery)
        try await server.store.experiments.createGoal(Goal(name: "purchase", kind: .conversion), in: TestServer.acme)
        try await server.test { client in
            try await Self.recordUsers(30, client: client, key: delivery)
            let events = (0..<30).map {
                #"{"id": "e\#($0)", "user": "user-\#($0)", "goal": "purchase", "time": "\#(Self.iso(1))"}"#
            }.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
            _ = try await client.send(
                .post, Self.events, key: delivery, body: #"{"events": [\#(events.joined(separator: ","))]}"#)
            var browser = DashboardBrowser(client)
            try await browser.signIn(with: server.key("acme", .reader))
            let page = try await browser.get(
                "/tenants/acme/production/features/\(segment(TestServer.abTest))/results")
            #expect(page.status == .ok)
            #expect(page.text.contains("Epoch 1"))
            #expect(page.text.contains("purchase"))
            #expect(page.text.contains("Too few users"))
            #expect(page.text.contains("<svg"))
            #expect(page.text.contains("intention to treat"))
            let feature = try await browser.get("/tenants/acme/production/features/\(segment(TestServer.abTest))")
            #expect(feature.text.contains("results-link"))
        }
    }

    @Test("Naming a test's control: editors over the API and on the results page; readers read against it")
    func namedControl() async throws {
        let server = try await TestServer()
        let (editor, reader) = (server.key("acme", .editor), server.key("acme", .reader))
        _ = try await server.store.assignments.assign(
            (0..<10).map { UserID(rawValue: "u-\($0)") }, to: TestServer.abTest, in: TestServer.acme)
        try await server.test { client in
            let refused = try await client.send(
                .put, "\(Self.results)/control", key: editor, body: #"{"control": "Group Z"}"#)
            #expect(refused.status == .unprocessableContent && refused.text.contains("can't be its control"))
            let forbidden = try await client.send(
                .put, "\(Self.results)/control", key: reader, body: #"{"control": "Group B"}"#)
            #expect(forbidden.status == .forbidden)
            let named = try await client.send(
                .put, "\(Self.results)/control", key: editor, body: #"{"control": "Group B"}"#)
            #expect(named.status == .ok && named.text.contains(#""namedControl":"Group B""#))
            let read = try await client.send(.get, Self.results, key: reader)
            #expect(read.text.contains(#""control":"Group B""#))

            var browser = DashboardBrowser(client)
            try await browser.signIn(with: editor)
            let page = try await browser.get("/tenants/acme/production/features/\(segment(TestServer.abTest))/results")
            #expect(page.text.contains("Group B is this test&#39;s control"))
            #expect(page.text.contains(#"id="clear-control""#) && !page.text.contains(#"id="name-control""#))
            let other = try await browser.get(
                "/tenants/acme/production/features/\(segment(TestServer.abTest))/results?control=Group%20A")
            #expect(other.text.contains("Compared with Group A this time; the test&#39;s control is Group B."))
            #expect(other.text.contains("Make Group A this test's control"))
            let posted = try await browser.post(
                "/tenants/acme/production/features/\(segment(TestServer.abTest))/results/control",
                ["csrf": DashboardBrowser.csrf(in: other), "control": "Group A"])
            #expect(posted.status == .seeOther && posted.headers[.location]?.contains("notice=control-named") == true)
            #expect(
                try await server.store.experiments.results(of: TestServer.abTest, in: TestServer.acme).namedControl
                    == "Group A")

            let cleared = try await client.send(.delete, "\(Self.results)/control", key: editor)
            #expect(cleared.status == .ok && cleared.text.contains(#""namedControl":null"#))
        }
    }
}
