import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Every admin route's success and its own errors; the role and tenant checks of every route
/// are in `IsolationMatrixTests`.
@Suite("Admin API: /api/v1")
struct AdminAPITests {
    static let environment = "/api/v1/tenants/acme/environments/production"
    static let abTest = "\(environment)/features/\(segment(TestServer.abTest))"

    @Test("Tenants: a server admin creates and lists them; a tenant's key sees only its own")
    func tenants() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let created = try await client.send(
                .post, "/api/v1/tenants", key: server.serverAdminKey, body: #"{"slug": "initech", "name": "Initech"}"#)
            #expect(created.status == .created)
            #expect(try created.json["slug"] == .string("initech"))
            #expect(try created.json["environments"] == .array([.string("production")]))
            let again = try await client.send(
                .post, "/api/v1/tenants", key: server.serverAdminKey, body: #"{"slug": "initech"}"#)
            #expect(again.status == .conflict)
            #expect(again.errorCode == "exists")
            let badSlug = try await client.send(
                .post, "/api/v1/tenants", key: server.serverAdminKey, body: #"{"slug": "Not A Slug"}"#)
            #expect(badSlug.status == .unprocessableContent)
            #expect(
                try await client.send(
                    .post, "/api/v1/tenants", key: server.key("acme", .admin), body: #"{"slug": "x"}"#
                ).status == .forbidden)

            let all = try await client.send(.get, "/api/v1/tenants", key: server.serverAdminKey)
            #expect(try all.json.array?.compactMap { $0["slug"]?.string } == ["acme", "globex", "initech"])
            let own = try await client.send(.get, "/api/v1/tenants", key: server.key("acme", .reader))
            #expect(try own.json.array?.compactMap { $0["slug"]?.string } == ["acme"])
            let one = try await client.send(.get, "/api/v1/tenants/acme", key: server.key("acme", .reader))
            #expect(try one.json["slug"] == .string("acme"))
        }
    }

    @Test("Environments: created by an admin, listed with their revision and delivery settings, patched")
    func environments() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let admin = server.key("acme", .admin)
            let created = try await client.send(
                .post, "/api/v1/tenants/acme/environments", key: admin, body: #"{"name": "staging"}"#)
            #expect(created.status == .created)
            #expect(try created.json["revision"] == .null)
            let list = try await client.send(
                .get, "/api/v1/tenants/acme/environments", key: server.key("acme", .reader))
            #expect(try list.json.array?.compactMap { $0["name"]?.string } == ["production", "staging"])
            #expect(try list.json[0]?["revision"]?.number == 1)
            #expect(try list.json[0]?["private"] == .bool(false))

            let patched = try await client.send(
                .patch, Self.environment, key: admin, body: #"{"cacheControl": "public, max-age=60"}"#)
            #expect(try patched.json["cacheControl"] == .string("public, max-age=60"))
            #expect(
                try await client.send(.get, "/t/acme/production/features.json").headers[.cacheControl]
                    == "public, max-age=60")
            let reset = try await client.send(.patch, Self.environment, key: admin, body: #"{"cacheControl": null}"#)
            #expect(try reset.json["cacheControl"] == .null)
            let invalid = try await client.send(
                .patch, Self.environment, key: admin, body: "{\"cacheControl\": \"a\\nb\"}")
            #expect(invalid.status == .unprocessableContent)
        }
    }

    @Test(
        "An environment's colour and reason flag: patched with the delivery settings, a bad colour refused before anything is written"
    )
    func environmentMarking() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let admin = server.key("acme", .admin)
            let patched = try await client.send(
                .patch, Self.environment, key: admin, body: ##"{"colour": "#1F6FEB", "requiresReason": true}"##)
            #expect(patched.status == .ok)
            #expect(try patched.json["colour"] == .string("#1f6feb"))
            #expect(try patched.json["requiresReason"] == .bool(true))
            #expect(try patched.json["private"] == .bool(false))

            let refused = try await client.send(
                .patch, Self.environment, key: admin,
                body: #"{"private": true, "colour": "blue", "requiresReason": false}"#)
            #expect(refused.status == .unprocessableContent)
            #expect(try refused.json["error"]?["message"]?.string?.contains("#c0392b") == true)
            #expect(try refused.json["error"]?["details"]?["pointer"] == .string("/colour"))
            let after = try await server.store.access.environment(TestServer.acme)
            #expect(!after.delivery.isPrivate)
            #expect(after.marking.colour?.rawValue == "#1f6feb" && after.marking.requiresReason)

            let cleared = try await client.send(.patch, Self.environment, key: admin, body: #"{"colour": null}"#)
            #expect(try cleared.json["colour"] == .null)
            #expect(try cleared.json["requiresReason"] == .bool(true))
            let editor = try await client.send(
                .patch, Self.environment, key: server.key("acme", .editor), body: ##"{"colour": "#000000"}"##)
            #expect(editor.status == .forbidden)
        }
    }

    @Test("Where changes need a reason, an API write without a message is 422 reason_required and writes nothing")
    func reasonRequired() async throws {
        let server = try await TestServer()
        try await server.store.access.updateMarking(of: TestServer.acme) { $0.requiresReason = true }
        let before = try await server.store.catalog.revision(of: TestServer.acme).number
        try await server.test { client in
            let editor = server.key("acme", .editor)
            for body in [#"{"biases": [69, 31]}"#, #"{"biases": [69, 31], "message": " "}"#] {
                let refused = try await client.send(.post, "\(Self.abTest)/biases", key: editor, body: body)
                #expect(refused.status == .unprocessableContent && refused.errorCode == "reason_required", "\(body)")
                #expect(try refused.json["error"]?["message"]?.string?.contains(#""message" in the API"#) == true)
            }
            let imported = try await client.send(
                .post, "/api/v1/tenants/acme/environments/production/import", key: editor,
                body: String(decoding: try TestServer.fixture("vantientu1703-master-Features.json"), as: UTF8.self))
            #expect(imported.errorCode == "reason_required")
            let planned = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [69, 31], "dryRun": true}"#)
            #expect(planned.status == .ok)
            #expect(try await server.store.catalog.revision(of: TestServer.acme).number == before)
            let applied = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [69, 31], "message": "phase 2"}"#)
            #expect(applied.status == .ok, "\(applied.text)")
        }
        let latest = try await server.store.catalog.revisions(of: TestServer.acme).max { $0.number < $1.number }
        #expect(latest?.number == before + 1 && latest?.message == "phase 2")
    }

    @Test("Keys: an admin makes one (the secret shown once), lists prefixes only, revokes it and it stops at once")
    func keys() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let admin = server.key("acme", .admin)
            let created = try await client.send(
                .post, "/api/v1/tenants/acme/keys", key: admin, body: #"{"role": "reader", "name": "ci"}"#)
            #expect(created.status == .created)
            let secret = try #require(try created.json["key"]?.string)
            let prefix = try #require(try created.json["prefix"]?.string)
            #expect(secret.hasPrefix(prefix) && secret.count == 51)
            #expect(try await client.send(.get, Self.environment, key: secret).status == .ok)

            let list = try await client.send(.get, "/api/v1/tenants/acme/keys", key: admin)
            #expect(list.status == .ok)
            #expect(!list.text.contains(secret), "listings never show a secret")
            #expect(try list.json.array?.contains { $0["prefix"]?.string == prefix } == true)

            let revoked = try await client.send(.delete, "/api/v1/tenants/acme/keys/\(prefix)", key: admin)
            #expect(revoked.status == .ok)
            #expect(try revoked.json["revokedAt"]?.string != nil)
            #expect(try await client.send(.get, Self.environment, key: secret).status == .unauthorized)
            #expect(
                try await client.send(.delete, "/api/v1/tenants/acme/keys/fp_nothing", key: admin).status == .notFound)
            let serverRole = try await client.send(
                .post, "/api/v1/tenants/acme/keys", key: admin, body: #"{"role": "server-admin"}"#)
            #expect(serverRole.status == .unprocessableContent)
        }
    }

    @Test(
        "Import: applied, dry run, refused with validate's diagnostics (422), stale If-Match (409); refusals write nothing"
    )
    func importDocument() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        let next = String(decoding: try TestServer.fixture("rwbutler-99b0686-Features.json"), as: UTF8.self)
        try await server.test { client in
            let dryRun = try await client.send(.post, "\(Self.environment)/import?dryRun=true", key: editor, body: next)
            #expect(try dryRun.json["status"] == .string("planned"))
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == 1)

            let commented = String(
                decoding: try TestServer.fixture("vantientu1703-f305791-Features-with-comment.json"), as: UTF8.self)
            let refused = try await client.send(.post, "\(Self.environment)/import", key: editor, body: commented)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.errorCode == "invalid_document")
            let diagnostic = try refused.json["error"]?["details"]?["diagnostics"]?[0]
            #expect(diagnostic?["code"] == .string("E100"))
            #expect(diagnostic?["line"]?.number == 7)
            #expect(diagnostic?["column"]?.number == 9)

            let stale = try await client.send(
                .post, "\(Self.environment)/import", key: editor, headers: [.ifMatch: "7"], body: next)
            #expect(stale.status == .conflict)
            #expect(try stale.json["error"]?["details"]?["current"]?.number == 1)
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == 1)

            let applied = try await client.send(
                .post, "\(Self.environment)/import?message=next", key: editor, headers: [.ifMatch: "\"1\""], body: next)
            #expect(applied.status == .ok)
            #expect(try applied.json["status"] == .string("applied"))
            let revisions = try await server.store.catalog.revisions(of: TestServer.acme)
            #expect(revisions.map(\.number) == [2, 1], "newest first")
            #expect(revisions.first?.message == "next")
            #expect(revisions.first?.actor.hasPrefix("key:fp_") == true)
        }
    }

    @Test("Export, revisions, diff and rollback mirror the command line")
    func documents() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let export = try await client.send(.get, "\(Self.environment)/export", key: server.key("acme", .reader))
            #expect(export.bytes == (try await server.store.catalog.revision(of: TestServer.acme).document))
            let compact = try await client.send(.get, "\(Self.environment)/export?compact=true", key: editor)
            #expect(!compact.text.contains("\n    "))

            _ = try await client.send(.post, "\(Self.abTest)/disable", key: editor)
            let revisions = try await client.send(.get, "\(Self.environment)/revisions", key: editor)
            #expect(try revisions.json.array?.count == 2)
            let diff = try await client.send(.get, "\(Self.environment)/diff?from=1&to=2", key: editor)
            #expect(try diff.json[0]?["field"] == .string("enabled"))
            #expect(
                try await client.send(.get, "\(Self.environment)/diff?from=1", key: editor).status
                    == .unprocessableContent)

            let rollback = try await client.send(
                .post, "\(Self.environment)/rollback", key: editor, body: #"{"to": 1}"#)
            #expect(try rollback.json["applied"] == .bool(true))
            #expect(try rollback.json["revision"]?.number == 3)
            #expect(
                try await server.store.catalog.revision(of: TestServer.acme).document
                    == (try await server.store.catalog.revision(1, of: TestServer.acme).document))
            #expect(
                try await client.send(.post, "\(Self.environment)/rollback", key: editor, body: #"{"to": 99}"#).status
                    == .notFound)
            #expect(
                try await client.send(.post, "\(Self.environment)/rollback", key: editor, body: #"{"to": "one"}"#)
                    .status == .unprocessableContent)
        }
    }

    @Test("Features: list, show, enable and disable, the bias plan then the change, rollout")
    func features() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let list = try await client.send(.get, "\(Self.environment)/features", key: editor)
            #expect(try list.json.array?.count == 6)
            let show = try await client.send(.get, Self.abTest, key: editor)
            #expect(try show.json["kind"] == .string("ab-test"))
            #expect(try show.json["salt"]?.string?.count == 32)
            #expect(try await client.send(.get, "\(Self.environment)/features/Nope", key: editor).status == .notFound)

            let plan = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [20, 80], "dryRun": true}"#)
            #expect(plan.status == .ok)
            #expect(try plan.json["applied"] == .bool(false))
            #expect(try plan.json["plans"]?[0]?["moves"]?[0]?["share"]?.number == 30)
            #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == 1)
            let applied = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [20, 80]}"#)
            #expect(try applied.json["applied"] == .bool(true))
            #expect(
                try await server.store.catalog.feature(TestServer.abTest, in: TestServer.acme).feature.testBiases == [
                    20, 80,
                ])
            let ignored = try await client.send(.post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [20]}"#)
            #expect(ignored.status == .unprocessableContent)
            let notNumbers = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": ["20", 80]}"#)
            #expect(notNumbers.status == .unprocessableContent)
            #expect(try notNumbers.json["error"]?["details"]?["pointer"] == .string("/biases/0"))

            let disabled = try await client.send(
                .post, "\(Self.abTest)/disable", key: editor, body: #"{"message": "pause"}"#)
            #expect(try disabled.json["applied"] == .bool(true))
            let enabled = try await client.send(.post, "\(Self.abTest)/enable", key: editor)
            #expect(try enabled.json["applied"] == .bool(true))

            let rollout = try await client.send(
                .post, "\(Self.abTest)/rollout", key: editor, body: #"{"variation": "Group B"}"#)
            #expect(try rollout.json["applied"] == .bool(true))
            let noWinner = try await client.send(
                .post, "\(Self.environment)/features/\(segment("Example MVT Test"))/rollout", key: editor)
            #expect(noWinner.status == .unprocessableContent)
        }
    }

    @Test("Assign records users durably; history pages with a cursor; stats count them; evaluate explains each feature")
    func assignments() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let users = (1...25).map { "\"user-\($0)\"" }.joined(separator: ", ")
            let assigned = try await client.send(
                .post, "\(Self.abTest)/assignments", key: editor, body: "{\"users\": [\(users)]}")
            #expect(assigned.status == .ok)
            #expect(try assigned.json["recorded"]?.number == 25)
            #expect(try assigned.json["assignments"]?.array?.count == 25)
            let again = try await client.send(
                .post, "\(Self.abTest)/assignments", key: editor, body: #"{"users": ["user-1"]}"#)
            #expect(try again.json["known"]?.number == 1)
            let badUser = try await client.send(
                .post, "\(Self.abTest)/assignments", key: editor, body: #"{"users": ["ok", ""]}"#)
            #expect(badUser.status == .unprocessableContent)
            #expect(try badUser.json["error"]?["details"]?["pointer"] == .string("/users/1"))
            let flag = try await client.send(
                .post, "\(Self.environment)/features/\(segment("Example Feature Flag"))/assignments", key: editor,
                body: #"{"users": ["u"]}"#)
            #expect(flag.status == .unprocessableContent)

            var seen: [String] = []
            var cursor: Int?
            repeat {
                let page = try await client.send(
                    .get, "\(Self.environment)/assignments?limit=10" + (cursor.map { "&cursor=\($0)" } ?? ""),
                    key: editor)
                seen += try page.json["events"]?.array?.compactMap { $0["user"]?.string } ?? []
                cursor = try page.json["nextCursor"]?.number.map { Int($0) }
            } while cursor != nil
            #expect(Set(seen).count == 25 && seen.count == 25, "every event exactly once across pages")
            #expect(
                try await client.send(.get, "\(Self.environment)/assignments?limit=0", key: editor).status
                    == .unprocessableContent)
            #expect(
                try await client.send(.get, "\(Self.environment)/assignments?since=yesterday", key: editor).status
                    == .unprocessableContent)
            // The command line's forms too (TimeText): a date alone is midnight UTC.
            for (query, count) in [
                ("since=2000-01-01", 25), ("until=2000-01-01", 0), ("since=2000-01-01T00:00:00.5Z", 25),
            ] {
                let events = try await client.send(
                    .get, "\(Self.environment)/assignments?limit=100&\(query)", key: editor)
                #expect(events.status == .ok, "\(query)")
                #expect(try events.json["events"]?.array?.count == count, "\(query)")
            }

            let stats = try await client.send(.get, "\(Self.abTest)/stats", key: editor)
            #expect(try stats.json["users"]?.number == 25)

            let evaluation = try await client.send(.get, "\(Self.environment)/evaluate?user=user-1", key: editor)
            let features = try #require(try evaluation.json["features"]?.array)
            #expect(features.count == 6)
            let reasons = Dictionary(
                uniqueKeysWithValues: features.map { ($0["feature"]!.string!, $0["reason"]!.string!) })
            #expect(reasons[TestServer.abTest] == "bucket")
            #expect(reasons["Example Feature Flag"] == "flag")
            #expect(reasons["Example Unlock Flag"] == "unlock")
            #expect(
                try await client.send(.get, "\(Self.environment)/evaluate", key: editor).status == .unprocessableContent
            )
        }
    }

    @Test("Overrides and unlocks per user; evaluate shows the reason")
    func overridesAndUnlocks() async throws {
        let server = try await TestServer()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let override = try await client.send(
                .put, "\(Self.abTest)/overrides/qa-1", key: editor, body: #"{"variation": "Group B"}"#)
            #expect(override.status == .ok)
            #expect(try override.json["override"] == .bool(true))
            #expect(try override.json["variation"] == .string("Group B"))
            let evaluation = try await client.send(.get, "\(Self.environment)/evaluate?user=qa-1", key: editor)
            #expect(
                try evaluation.json["features"]?.array?.first { $0["feature"]?.string == TestServer.abTest }?["reason"]
                    == .string("override"))
            let cleared = try await client.send(.delete, "\(Self.abTest)/overrides/qa-1", key: editor)
            #expect(try cleared.json["override"] == nil)
            #expect(try await client.send(.delete, "\(Self.abTest)/overrides/qa-1", key: editor).status == .notFound)
            #expect(
                try await client.send(
                    .put, "\(Self.abTest)/overrides/qa-1", key: editor, body: #"{"variation": "Nope"}"#
                ).status == .unprocessableContent)

            let unlockFlag = "\(Self.environment)/features/\(segment("Example Unlock Flag"))/unlocks/buyer-1"
            let unlocked = try await client.send(.put, unlockFlag, key: editor, body: #"{"source": "purchase"}"#)
            #expect(try unlocked.json["changed"] == .bool(true))
            #expect(try await client.send(.put, unlockFlag, key: editor).json["changed"] == .bool(false))
            let list = try await client.send(.get, "\(Self.environment)/unlocks?user=buyer-1", key: editor)
            #expect(try list.json[0]?["source"] == .string("purchase"))
            let locked = try await client.send(.delete, unlockFlag, key: editor)
            #expect(try locked.json["unlocked"] == .bool(false))
            let history = try await client.send(
                .get, "\(Self.environment)/unlocks?user=buyer-1&history=true", key: editor)
            #expect(try history.json.array?.count == 2)
            #expect(
                try await client.send(.put, "\(Self.abTest)/unlocks/buyer-1", key: editor).status
                    == .unprocessableContent)
        }
    }

    @Test("Malformed bodies are 400 with line and column; unknown fields 422; over the limit 413; unknown paths 404")
    func malformedRequests() async throws {
        let server = try await TestServer(configuration: ServerConfiguration(maxBodySize: 1024))
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let broken = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: "{\n  \"biases\": [20, 80,]\n}")
            #expect(broken.status == .badRequest)
            #expect(broken.errorCode == "malformed")
            #expect(try broken.json["error"]?["details"]?["line"]?.number == 2)
            #expect(try broken.json["error"]?["details"]?["column"]?.number == 20)
            #expect(
                try await client.send(.post, "\(Self.abTest)/biases", key: editor, body: "[1]").status == .badRequest)
            let unknown = try await client.send(
                .post, "\(Self.abTest)/biases", key: editor, body: #"{"biases": [20, 80], "dryrun": true}"#)
            #expect(unknown.status == .unprocessableContent)
            #expect(unknown.text.contains("dryrun"))
            let large = try await client.send(
                .post, "\(Self.environment)/import", key: editor, body: String(repeating: " ", count: 4096))
            #expect(large.status == .contentTooLarge)
            #expect(large.errorCode == "too_large")
            // The same for a configs file: not JSON is 400 with its place, over the limit 413.
            let brokenConfigs = try await client.send(
                .put, "\(Self.environment)/configs", key: editor, body: "{\"configs\": [,]}")
            #expect(brokenConfigs.status == .badRequest && brokenConfigs.errorCode == "malformed")
            #expect(try brokenConfigs.json["error"]?["details"]?["column"]?.number == 14)
            let largeConfigs = try await client.send(
                .put, "\(Self.environment)/configs/big", key: editor, body: String(repeating: " ", count: 4096))
            #expect(largeConfigs.status == .contentTooLarge && largeConfigs.errorCode == "too_large")
            let badIfMatch = try await client.send(
                .post, "\(Self.abTest)/disable", key: editor, headers: [.ifMatch: "W/\"x\""])
            #expect(badIfMatch.status == .badRequest)
            #expect(try await client.send(.get, "/api/v1/nothing", key: editor).status == .notFound)
            // A known path with another method is 405, naming the methods it takes.
            let trace = try await client.send(.trace, "/healthz")
            #expect(trace.status == .methodNotAllowed)
            #expect(trace.headers[.allow] == "GET, HEAD")
            let delete = try await client.send(
                .delete, "/api/v1/tenants/acme/environments/production/features/x", key: editor)
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.errorCode == "method_not_allowed")
            #expect(
                try await client.send(
                    .delete, "/api/v1/tenants/acme/environments/production/features/x/y/z", key: editor
                ).status == .notFound)
            #expect(try await client.send(.get, Self.environment, key: "fp_not-a-key").status == .unauthorized)
            #expect(
                try await client.send(.get, Self.environment, headers: [.authorization: "Basic abc"]).status
                    == .unauthorized)
            // Every error has the one shape, with the request id of the log.
            let error = try broken.json["error"]
            #expect(error?["message"]?.string?.contains("line 2, column 20") == true)
            #expect(error?["requestId"]?.string == broken.headers[.requestID])
        }
    }

    @Test("healthz answers ok; metrics count requests by route and status, and cache hits")
    func operations() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let health = try await client.send(.get, "/healthz")
            #expect(health.status == .ok)
            #expect(try health.json["status"] == .string("ok"))
            _ = try await client.send(.get, "/t/acme/production/features.json")
            _ = try await client.send(.get, "/t/acme/production/features.json")
            let metrics = try await client.send(.get, "/metrics")
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(
                metrics.text.contains(
                    #"hb_requests{http_route="/t/{tenant}/{env}/features.json",http_request_method="GET",http_response_status_code="200"}"#
                ))
            #expect(metrics.text.contains("http_server_request_duration_bucket"))
            #expect(metrics.text.contains("flagpole_delivery_cache_hits_total"))
        }
    }
}
