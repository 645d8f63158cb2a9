import EndToEndSupport
import FlagpoleTestSupport
import Foundation
import Testing

/// Members against the real binary on a real port, with curl as the browser: invited by the
/// command line, signed in with a password, named in what they change, demoted and removed
/// with effect at once; and fifty sign-ins at once in bounded memory.
@Suite("Members, end to end")
struct MemberServerTests {
    static let password = "correct horse battery staple"
    static let feature = "/tenants/acme/production/features/Example%20A%2FB%20Test"

    /// A browser as far as the server can tell: curl with a cookie jar of its own.
    struct Browser {
        let base: String
        let jar = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString)")

        func get(_ path: String) throws -> Curl.Result {
            try Curl.run(["-b", jar.path, "-c", jar.path, base + path])
        }

        func post(_ path: String, _ fields: [(String, String)]) throws -> Curl.Result {
            try Curl.run(
                ["-b", jar.path, "-c", jar.path] + fields.flatMap { ["--data-urlencode", "\($0.0)=\($0.1)"] }
                    + [base + path])
        }

        /// Gets `page` and posts `fields` to `target` with the page's CSRF token.
        func submit(_ page: String, to target: String, _ fields: [(String, String)]) throws -> Curl.Result {
            let form = String(decoding: try get(page).body, as: UTF8.self)
            let csrf = form.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/).map { String($0.1) } ?? ""
            return try post(target, [("csrf", csrf)] + fields)
        }

        func signIn(_ email: String, _ password: String) throws -> Curl.Result {
            try submit("/login", to: "/login", [("email", email), ("password", password)])
        }
    }

    /// The token of the link `member add` or `member reset` printed.
    static func token(in output: String) throws -> String {
        try #require(output.firstMatch(of: /token=(fpl_[0-9a-f]{64})/).map { String($0.1) })
    }

    static func backends() -> [String] {
        ["sqlite", "postgres"]
    }

    @Test(
        "Invite, accept, sign in, act under one's name, be demoted and refused, be removed and find the session and key dead; no secret reaches the log",
        arguments: backends())
    func lifecycle(backend: String) async throws {
        let cli = try CLI(database: backend == "postgres" ? try TestPostgres.newDatabase("members") : nil)
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        let added = await cli.run([
            "member", "add", "Ada@Example.com", "--name", "Ada Lovelace", "--role", "editor", "--tenant", "acme",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let invitation = try Self.token(in: added.stdout)
        let log = cli.directory.appendingPathComponent("serve.log")
        let server = try ServerProcess(cli, log: log)
        let ada = Browser(base: server.baseURL)

        // Accepting the invitation sets the password and signs in.
        let accepted = try ada.submit(
            "/welcome?token=\(invitation)", to: "/welcome",
            [("token", invitation), ("password", Self.password), ("repeated", Self.password)])
        #expect(accepted.status == 303 && accepted.headers["location"] == "/")
        let reused = try Browser(base: server.baseURL).get("/welcome?token=\(invitation)")
        #expect(reused.status == 410)

        // Signing out and in again with the password.
        _ = try ada.submit("/", to: "/logout", [])
        #expect(try ada.get("/").status == 303)
        #expect(try ada.signIn("ada@example.com", "not the password").status == 401)
        let signedIn = try ada.signIn("ada@example.com", Self.password)
        #expect(signedIn.status == 303)
        #expect(String(decoding: try ada.get("/").body, as: UTF8.self).contains("Ada Lovelace &lt;ada@example.com&gt;"))

        // Acting: the revision list names her.
        let disabled = try ada.submit(
            Self.feature, to: Self.feature + "/enabled", [("enabled", "false"), ("action", "apply")])
        #expect(disabled.status == 303, "\(String(decoding: disabled.body, as: UTF8.self))")
        let revisions = String(decoding: try ada.get("/tenants/acme/production/revisions").body, as: UTF8.self)
        #expect(revisions.contains("Ada Lovelace &lt;ada@example.com&gt;"))
        let key = await cli.run([
            "key", "create", "--tenant", "acme", "--role", "editor", "--member", "ada@example.com", "--name", "laptop",
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let api = "\(server.baseURL)/api/v1/tenants/acme/environments/production/features/Example%20A%2FB%20Test"
        let enabled = try Curl.run([
            "-X", "POST", "-H", "Authorization: Bearer \(key)", "--data", "{}", api + "/enable",
        ])
        #expect(enabled.status == 200)
        let audit = await cli.run(["revisions", "--tenant", "acme", "--json"]).stdout
        let actors = (try JSONSerialization.jsonObject(with: Data(audit.utf8)) as? [[String: Any]] ?? []).compactMap {
            $0["actor"] as? String
        }
        #expect(actors == ["Ada Lovelace <ada@example.com>", "Ada Lovelace <ada@example.com>", "cli:e2e"])

        // Demoted: refused at once, in the session and with the key.
        #expect(
            await cli.run(["member", "role", "ada@example.com", "--role", "reader", "--tenant", "acme"]).status == 0)
        let refused = try ada.submit(
            Self.feature, to: Self.feature + "/enabled", [("enabled", "false"), ("action", "apply")])
        #expect(refused.status == 403)
        #expect(
            try Curl.run(["-X", "POST", "-H", "Authorization: Bearer \(key)", "--data", "{}", api + "/disable"]).status
                == 403)

        // Removed: the session and the key are dead at once.
        #expect(await cli.run(["member", "remove", "ada@example.com", "--tenant", "acme"]).status == 0)
        #expect(try ada.get("/tenants/acme/production").headers["location"]?.hasPrefix("/login") == true)
        #expect(try Curl.run(["-H", "Authorization: Bearer \(key)", api]).status == 401)
        #expect(server.stop() == 0)

        // Nothing secret in the log of the whole run, nor in the audit.
        let logged = try String(contentsOf: log, encoding: .utf8)
        #expect(logged.contains("POST /login"), "the log is the server's, at debug level")
        let cookies = (try? String(contentsOf: ada.jar, encoding: .utf8)) ?? ""
        let secrets =
            [Self.password, "not the password", invitation, String(invitation.dropFirst(4)), key]
            + cookies.matches(of: /fps_[0-9a-f]{64}/).map { String($0.0) }
        for secret in secrets {
            #expect(!logged.contains(secret), "the server's log holds a secret")
            #expect(!audit.contains(secret), "the audit holds a secret")
        }
    }

    @Test("Fifty sign-ins at once hash two at a time: peak memory stays within idle + 320 MiB")
    func concurrentSignIns() async throws {
        let cli = try CLI()
        try #require(await cli.run(["tenant", "create", "acme"]).status == 0)
        let token = try Self.token(
            in: await cli.run([
                "member", "add", "ada@example.com", "--name", "Ada", "--role", "reader", "--tenant", "acme",
            ])
            .stdout)
        let server = try ServerProcess(cli)
        let accepted = try Browser(base: server.baseURL).submit(
            "/welcome?token=\(token)", to: "/welcome",
            [("token", token), ("password", Self.password), ("repeated", Self.password)])
        #expect(accepted.status == 303)
        let pid = server.process.processIdentifier
        let idle = try Self.memory(of: pid, "VmRSS")

        // Fifty browsers with the sign-in form loaded, then fifty curls sending it at once.
        var posts: [ChildProcess] = []
        let start = Date()
        for index in 0..<50 {
            let browser = Browser(base: server.baseURL)
            let form = String(decoding: try browser.get("/login").body, as: UTF8.self)
            let csrf = form.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/).map { String($0.1) } ?? ""
            posts.append(
                try Curl.start(
                    [
                        "-b", browser.jar.path, "--data-urlencode", "csrf=\(csrf)", "--data-urlencode",
                        "email=ada@example.com", "--data-urlencode", "password=\(Self.password)",
                        server.baseURL + "/login",
                    ], bodyFile: cli.directory.appendingPathComponent("signin-\(index).html")))
        }
        let statuses = posts.map { $0.finish().stdout }
        let seconds = Date().timeIntervalSince(start)
        let peak = try Self.memory(of: pid, "VmHWM")
        #expect(statuses.allSatisfy { $0 == "303" }, "\(statuses)")
        print(
            "50 concurrent sign-ins: idle RSS \(idle >> 20) MiB, peak \(peak >> 20) MiB (+\((peak - idle) >> 20) MiB); all answered in \(String(format: "%.1f", seconds)) s"
        )
        #expect(peak - idle <= 320 << 20, "peak RSS \(peak >> 20) MiB over idle \(idle >> 20) MiB")

        // A 1 MiB password is refused before any hashing (curl reads it from a file: it is too
        // long for an argument).
        let huge = cli.directory.appendingPathComponent("password.txt")
        try Data(repeating: UInt8(ascii: "a"), count: 1 << 20).write(to: huge)
        let browser = Browser(base: server.baseURL)
        let form = String(decoding: try browser.get("/login").body, as: UTF8.self)
        let csrf = form.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/).map { String($0.1) } ?? ""
        let refused = try Curl.run([
            "-b", browser.jar.path, "--data-urlencode", "csrf=\(csrf)", "--data-urlencode", "email=ada@example.com",
            "--data-urlencode", "password@\(huge.path)", server.baseURL + "/login",
        ])
        #expect([413, 400].contains(refused.status), "\(refused.status)")
        #expect(server.stop() == 0)
    }

    /// A line of `/proc/PID/status` in bytes: `VmRSS` now, `VmHWM` the peak.
    static func memory(of pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) * 1024
    }
}
