import EndToEndSupport
import FlagpoleTestSupport
import Foundation
import Synchronization
import Testing

/// Two real `flagpole serve` processes on one PostgreSQL database, as behind a load balancer.
@Suite("Two instances on one PostgreSQL database")
struct SharedDatabaseTests {
    static let documentPath = "/t/acme/production/features.json"

    @Test(
        "Both instances serve one group per user however requests race, keep If-Match across instances, and see each other's writes within a second"
    )
    func twoInstances() async throws {
        let url = try TestPostgres.newDatabase("instances")
        let cli = try CLI(database: url)
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", "acme", "--role", "editor"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let first = try ServerProcess(cli)
        let second = try ServerProcess(cli)
        let api = "/api/v1/tenants/acme/environments/production"

        // An import through the first reaches the second within a second.
        let imported = try Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "--data-binary",
            "@\(CLI.fixture("rwbutler-HEAD-Features.json"))", "\(first.baseURL)\(api)/import",
        ])
        #expect(imported.status == 200, "\(String(decoding: imported.body, as: UTF8.self))")
        let latency = try Self.latency(until: "1", at: "\(second.baseURL)\(Self.documentPath)")
        #expect(latency < 1, "the second instance served revision 1 after \(latency) s")

        // New users asking both instances at the same moment get one group each, recorded once.
        let users = (0..<30).map { "racer-\($0)" }
        let bases = [first.baseURL, second.baseURL]
        for user in users {
            let bodies = Mutex<[[UInt8]]>([[], []])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let answer = try? Curl.run([
                    "-H", "Authorization: Bearer \(key)", "\(bases[index])\(Self.documentPath)?user=\(user)",
                ])
                bodies.withLock { $0[index] = answer?.body ?? [] }
            }
            let answers = bodies.withLock { $0 }
            #expect(!answers[0].isEmpty && answers[0] == answers[1], "\(user) got two different documents")
        }
        let tests = try TestPostgres.psql(
            url,
            "SELECT count(*) FROM features WHERE archived_at IS NULL AND position IS NOT NULL AND id IN (SELECT feature_id FROM variations)"
        )
        let recorded = try TestPostgres.psql(
            url,
            "SELECT count(*), count(DISTINCT (feature_id, user_id)) FROM assignments WHERE user_id LIKE 'racer-%'")
        let firsts = try TestPostgres.psql(
            url, "SELECT count(*) FROM assignment_events WHERE user_id LIKE 'racer-%' AND reason = 'first'")
        let perUser = try #require(Int(tests.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(perUser > 0)
        #expect(
            recorded.trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(users.count * perUser)|\(users.count * perUser)")
        #expect(firsts.trimmingCharacters(in: .whitespacesAndNewlines) == "\(users.count * perUser)")

        // A per-user write through one instance reaches the other's change sequence within a
        // second (the step's NOTIFY): the second has read up to the override's step.
        let overridden = try Curl.run([
            "-X", "PUT", "-H", "Authorization: Bearer \(key)", "--data", #"{"variation": "Group B"}"#,
            "\(first.baseURL)\(api)/features/Example%20A%2FB%20Test/overrides/qa-7",
        ])
        #expect(overridden.status == 200, "\(String(decoding: overridden.body, as: UTF8.self))")
        let sequence = try TestPostgres.psql(
            url,
            "SELECT e.change_sequence FROM environments e JOIN tenants t ON t.id = e.tenant_id WHERE t.slug = 'acme' AND e.name = 'production'"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let gauge = #"flagpole_change_sequence{environment="acme/production"} "#
        let start = Date()
        var sequenceSeen: TimeInterval?
        while Date().timeIntervalSince(start) < 5 {
            let metrics = String(decoding: try Curl.run(["\(second.baseURL)/metrics"]).body, as: UTF8.self)
            let read = metrics.split(separator: "\n").first { $0.hasPrefix(gauge) }?.dropFirst(gauge.count)
            if let read, Double(read) == Double(sequence) {
                sequenceSeen = Date().timeIntervalSince(start)
                break
            }
        }
        let stepLatency = try #require(sequenceSeen, "the second instance never read step \(sequence)")
        #expect(stepLatency < 1, "the second instance read the override's step after \(stepLatency) s")

        // If-Match holds across instances: a write planned on revision 1 lands once.
        let disable = try Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "-H", "If-Match: 1", "--data", "{}",
            "\(first.baseURL)\(api)/features/Example%20A%2FB%20Test/disable",
        ])
        #expect(disable.status == 200, "\(String(decoding: disable.body, as: UTF8.self))")
        let stale = try Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "-H", "If-Match: 1", "--data", "{}",
            "\(second.baseURL)\(api)/features/Example%20A%2FB%20Test/enable",
        ])
        #expect(stale.status == 409, "\(String(decoding: stale.body, as: UTF8.self))")
        #expect(try Self.latency(until: "2", at: "\(second.baseURL)\(Self.documentPath)") < 1)

        // A key revoked through the command line stops working on both at once.
        let reader = await cli.run(["key", "create", "--tenant", "acme", "--role", "reader"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let features = "\(api)/features"
        for base in bases {
            #expect(try Curl.run(["-H", "Authorization: Bearer \(reader)", "\(base)\(features)"]).status == 200)
        }
        try #require(await cli.run(["key", "revoke", String(reader.prefix(11)), "--tenant", "acme"]).status == 0)
        for base in bases {
            #expect(try Curl.run(["-H", "Authorization: Bearer \(reader)", "\(base)\(features)"]).status == 401)
        }

        #expect(first.stop() == 0)
        #expect(second.stop() == 0)
    }

    @Test(
        "Losing the database: shared documents keep coming from the cache, new users get them unrecorded, writes and /healthz answer 503, and the server reconnects by itself"
    )
    func databaseLost() async throws {
        let server = try TestPostgres.OwnServer()
        let cli = try CLI(database: server.url)
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", "acme", "--role", "editor"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let flagpole = try ServerProcess(cli)
        let document = "\(flagpole.baseURL)\(Self.documentPath)"
        let disable = [
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "--data", "{}",
            "\(flagpole.baseURL)/api/v1/tenants/acme/environments/production/features/Example%20A%2FB%20Test/disable",
        ]
        let shared = try Curl.run([document])
        #expect(shared.status == 200)
        #expect(try Curl.run(["\(document)?user=before"]).headers["flagpole-recorded"] == "true")

        try server.pause()
        let stale = try Curl.run([document])
        #expect(stale.status == 200 && stale.body == shared.body, "the cached document while the database is away")
        let newcomer = try Curl.run(["\(document)?user=while-away"])
        #expect(newcomer.status == 200)
        #expect(newcomer.headers["flagpole-recorded"] == "false")
        #expect(newcomer.body == shared.body, "the shared document, not a group the store never recorded")
        let refused = try Curl.run(disable)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] != nil)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("database_unavailable"))
        let health = try Curl.run(["\(flagpole.baseURL)/healthz"])
        #expect(health.status == 503)
        #expect(String(decoding: health.body, as: UTF8.self).contains("database_unavailable"))

        // Back, without a restart: the next requests find it.
        try server.resume()
        let start = Date()
        while Date().timeIntervalSince(start) < 20, try Curl.run(["\(flagpole.baseURL)/healthz"]).status != 200 {}
        #expect(try Curl.run(["\(flagpole.baseURL)/healthz"]).status == 200, "no reconnection within 20 s")
        #expect(try Curl.run(disable).status == 200)
        #expect(try Curl.run(["\(document)?user=after"]).headers["flagpole-recorded"] == "true")
        let users = try TestPostgres.psql(
            server.url, "SELECT string_agg(DISTINCT user_id, ',' ORDER BY user_id) FROM assignments")
        #expect(
            users.trimmingCharacters(in: .whitespacesAndNewlines) == "after,before", "while-away was never recorded")
        #expect(flagpole.stop() == 0)
    }

    /// Seconds until `document` is served at `revision`, polling (at most 5 s).
    static func latency(until revision: String, at document: String) throws -> TimeInterval {
        let start = Date()
        while Date().timeIntervalSince(start) < 5 {
            if try Curl.run([document]).headers["flagpole-revision"] == revision {
                return Date().timeIntervalSince(start)
            }
        }
        return .infinity
    }
}
