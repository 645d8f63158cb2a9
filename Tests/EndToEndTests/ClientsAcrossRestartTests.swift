import EndToEndSupport
import Foundation
import Testing

/// What apps hold from a server, held to a new server process on the same database: the
/// Bucketeer SDK's tokens and answers and OFREP's ETags and bodies are the store's, not the
/// process's, so a restart (or a deploy) sends no app its whole set again and no 304 is lost.
@Suite("Bucketeer and OFREP clients across a restart of the server")
struct ClientsAcrossRestartTests {
    /// The demo's data as `serve --demo` loads it, without its 10 000 recorded users, on the
    /// running `server`: demo/production and the private demo/staging, a rule (country DE gets
    /// Group B of the A/B test), and a delivery key for each environment. Through the admin API
    /// with `admin`: a command-line process for each would double the test's time.
    static func demo(on server: ServerProcess, admin: String) throws -> (production: String, staging: String) {
        let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/FlagpoleCommands/Resources")
        let features = try String(
            contentsOf: resources.appendingPathComponent("example-features.json"), encoding: .utf8)
        let configs = try String(contentsOf: resources.appendingPathComponent("example-configs.json"), encoding: .utf8)
        let tenant = server.baseURL + "/api/v1/tenants/demo"
        func call(_ method: String, _ url: String, _ body: String) throws -> Curl.Result {
            let response = try Curl.send(method, url, headers: ["Authorization": "Bearer \(admin)"], body: body)
            try #require((200..<300).contains(response.status), "\(method) \(url): \(response.text)")
            return response
        }
        _ = try call("POST", tenant + "/environments", #"{"name": "staging"}"#)
        for environment in ["production", "staging"] {
            _ = try call("POST", tenant + "/environments/\(environment)/import", features)
            _ = try call("PUT", tenant + "/environments/\(environment)/configs", configs)
        }
        _ = try call("PATCH", tenant + "/environments/staging", #"{"private": true}"#)
        _ = try call(
            "PUT", tenant + "/environments/production/features/Example%20A%2FB%20Test/rules",
            #"{"rules": [{"id": "germany", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "Group B"}}]}"#
        )
        func key(_ environment: String) throws -> String {
            let created = try call("POST", tenant + "/keys", #"{"role": "delivery", "environment": "\#(environment)"}"#)
            return try #require((try created.json() as? [String: Any])?["key"] as? String)
        }
        return (try key("production"), try key("staging"))
    }

    /// An app's install: where it asks, with which key, for whom, and what it keeps.
    struct Install {
        var base: String
        var key: String
        var user: String
        var data: String
        var tag = ""
        var token = ""
        var evaluations: [[String: Any]] = []

        func body(token: String) -> String {
            #"{"sdkVersion": "2.2.1", "sourceId": 2, "tag": "\#(tag)", "user": {"data": \#(data), "id": "\#(user)"}, "userEvaluationCondition": {"evaluatedAt": "0", "userAttributesUpdated": false}, "userEvaluationsId": "\#(token)"}"#
        }

        /// One poll presenting `token`: the answer's token, whether it is the whole set, and the evaluations by id.
        func poll(
            _ server: ServerProcess, token: String
        ) throws -> (token: String, full: Bool, evaluations: [[String: Any]]) {
            let response = try Curl.send(
                "POST", server.baseURL + base + "/get_evaluations", headers: ["Authorization": key],
                body: body(token: token))
            try #require(response.status == 200, "\(base) \(user): \(response.text)")
            let answer = try #require(try response.json() as? [String: Any])
            let inner = try #require(answer["evaluations"] as? [String: Any])
            let evaluations = try #require(inner["evaluations"] as? [[String: Any]])
            return (
                try #require(answer["userEvaluationsId"] as? String), try #require(inner["forceUpdate"] as? Bool),
                evaluations.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
            )
        }
    }

    /// An OFREP bulk evaluation an app made, with the ETag it keeps.
    struct Bulk {
        var path: String
        var key: String?
        var context: String
        var etag = ""
        var body: [UInt8] = []

        func send(_ server: ServerProcess, ifNoneMatch: String? = nil) throws -> Curl.Result {
            var headers: [String: String] = [:]
            if let key { headers["Authorization"] = "Bearer \(key)" }
            if let ifNoneMatch { headers["If-None-Match"] = ifNoneMatch }
            return try Curl.send("POST", server.baseURL + path, headers: headers, body: context)
        }
    }

    @Test("Tokens, answers and ETags from before a restart are current after it; a fresh install gets the same")
    func acrossARestart() async throws {
        let cli = try CLI()
        try await cli.succeed(["tenant", "create", "demo"])
        let printed = await cli.run(["key", "create", "--tenant", "demo", "--role", "admin"]).stdout
        let admin = String(try #require(printed.firstMatch(of: /fp_[0-9a-f]{48}/), "a key in \(printed)").0)
        var server = try ServerProcess(cli)
        let keys = try Self.demo(on: server, admin: admin)

        var installs = [
            Install(base: "/t/demo/production", key: keys.production, user: "bk-alice", data: #"{"plan": "free"}"#),
            Install(base: "", key: keys.production, user: "bk-alice", data: #"{"plan": "free"}"#),
            Install(
                base: "/t/demo/production", key: keys.production, user: "bk-bob", data: #"{"country": "DE"}"#,
                tag: "ios"),
            Install(base: "/t/demo/staging", key: keys.staging, user: "bk-frank", data: #"{"plan": "team"}"#),
        ]
        for index in installs.indices {
            let first = try installs[index].poll(server, token: "")
            #expect(first.full && !first.evaluations.isEmpty, "\(installs[index].user) at \(installs[index].base)")
            if installs[index].user == "bk-bob" {
                let rule = first.evaluations.first { $0["featureId"] as? String == "mainViewTitle" }?["reason"]
                #expect((rule as? [String: Any])?["ruleId"] as? String == "germany", "Bob's answer by rule")
            }
            installs[index].token = first.token
            installs[index].evaluations = first.evaluations
        }
        let production = "/t/demo/production/ofrep/v1/evaluate/flags"
        var bulks = [
            Bulk(path: production, context: #"{"context": {"targetingKey": "demo-user-7"}}"#),
            Bulk(path: production, context: #"{"context": {"targetingKey": "demo-user-8"}}"#),
            Bulk(path: production, context: #"{"context": {"targetingKey": "demo-user-7", "development": true}}"#),
            Bulk(path: production + "?tag=ios", context: #"{"context": {"targetingKey": "ofrep-user-1"}}"#),
            Bulk(
                path: "/t/demo/staging/ofrep/v1/evaluate/flags", key: admin,
                context: #"{"context": {"targetingKey": "demo-user-7"}}"#),
        ]
        for index in bulks.indices {
            let response = try bulks[index].send(server)
            try #require(response.status == 200, "\(bulks[index].path): \(response.text)")
            bulks[index].etag = try #require(response.headers["etag"])
            bulks[index].body = response.body
        }
        // A private answer advertises a stream token signed for a 12-hour window: one crossed
        // between the two servers changes that answer, rightly.
        let window = Int(Date().timeIntervalSince1970) / 43_200

        #expect(server.stop() == 0)
        server = try ServerProcess(cli)

        for install in installs {
            let place = "\(install.user) at \(install.base.isEmpty ? "the host root" : install.base)"
            let poll = try install.poll(server, token: install.token)
            #expect(poll.token == install.token && !poll.full && poll.evaluations.isEmpty, "\(place): unchanged")
            let fresh = try install.poll(server, token: "")
            #expect(fresh.token == install.token && fresh.full, "\(place): a fresh install's token")
            #expect(
                try Self.canonical(fresh.evaluations) == Self.canonical(install.evaluations),
                "\(place): the same evaluations")
            // And still OFREP's answer for the same user.
            let environment = install.base == "/t/demo/staging" ? "staging" : "production"
            let ofrep = try Curl.send(
                "POST",
                server.baseURL + "/t/demo/\(environment)/ofrep/v1/evaluate/flags"
                    + (install.tag.isEmpty ? "" : "?tag=\(install.tag)"),
                headers: environment == "staging" ? ["Authorization": "Bearer \(admin)"] : [:],
                body: #"{"context": {"targetingKey": "\#(install.user)"\#(Self.attributes(install.data))}}"#)
            let flags = try #require((try ofrep.json() as? [String: Any])?["flags"] as? [[String: Any]])
            let variants = Dictionary(flags.map { ($0["key"] as? String ?? "", $0["variant"] as? String ?? "") }) {
                a, _ in a
            }
            for evaluation in fresh.evaluations {
                let name = evaluation["featureId"] as? String ?? ""
                #expect(variants[name] == evaluation["variationName"] as? String, "\(place): \(name) against OFREP")
            }
        }
        let sameWindow = Int(Date().timeIntervalSince1970) / 43_200 == window
        for bulk in bulks where sameWindow || bulk.key == nil {
            let response = try bulk.send(server)
            #expect(response.status == 200 && response.headers["etag"] == bulk.etag, "\(bulk.path) \(bulk.context)")
            #expect(response.body == bulk.body, "\(bulk.path) \(bulk.context): the same bytes")
            #expect(try bulk.send(server, ifNoneMatch: bulk.etag).status == 304, "\(bulk.path) \(bulk.context)")
        }
        _ = server.stop()
    }

    /// JSON with sorted keys, to compare what two answers hold.
    static func canonical(_ value: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
    }

    /// `{"plan": "free"}` as members to follow the targetingKey: `, "plan": "free"`.
    static func attributes(_ data: String) -> String {
        let inner = data.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
        return inner.isEmpty ? "" : ", " + inner
    }
}
