import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Members through the dashboard and the API: invited, signed in with a password, named in the
/// revisions they make, demoted and removed with effect at once.
@Suite("Members on the dashboard and the API")
struct MemberDashboardTests {
    static let members = "/tenants/acme/settings/members"
    static let base = "/tenants/acme/production"
    static let abTest = "\(base)/features/\(segment(TestServer.abTest))"
    static let password = "correct horse battery"

    /// A server whose passwords are cheap to hash.
    static func server() async throws -> TestServer {
        var configuration = ServerConfiguration(accessLogLevel: .debug)
        configuration.passwordCost = PasswordCost(log2N: 10, blockSize: 8, parallelism: 1)
        return try await TestServer(configuration: configuration)
    }

    /// The link on a members page, made relative.
    static func link(in page: TestResponse) throws -> String {
        let html = page.text
        let start = try #require(html.range(of: #"<code id="member-link">"#))
        let url = String(html[start.upperBound...].prefix { $0 != "<" })
        return String(url[try #require(url.range(of: "/welcome")).lowerBound...]).replacingOccurrences(
            of: "&amp;", with: "&")
    }

    /// Sets the password of `link` in a new browser, which is then signed in.
    static func accept(_ link: String, _ client: any TestClientProtocol) async throws -> DashboardBrowser {
        var browser = DashboardBrowser(client)
        let welcome = try await browser.get(link)
        #expect(welcome.status == .ok)
        let token = String(link.split(separator: "=").last ?? "")
        let accepted = try await browser.post(
            "/welcome",
            ["csrf": DashboardBrowser.csrf(in: welcome), "token": token, "password": password, "repeated": password])
        #expect(accepted.status == .seeOther && accepted.headers[.location] == "/")
        return browser
    }

    @Test(
        "Invite, accept, act under one's name, be demoted and refused at once, be removed and find the session and keys dead"
    )
    func memberLifecycle() async throws {
        let server = try await Self.server()
        try await server.test { client in
            var admin = DashboardBrowser(client)
            try await admin.signIn(with: server.key("acme", .admin))
            let page = try await admin.get(Self.members)
            #expect(page.status == .ok && page.text.contains("No member yet"))
            let added = try await admin.post(
                Self.members,
                [
                    "csrf": DashboardBrowser.csrf(in: page), "email": "Ada@Example.com", "name": "Ada Lovelace",
                    "role": "editor",
                ])
            #expect(added.status == .created)
            let link = try Self.link(in: added)
            #expect(link.hasPrefix("/welcome?token=fpl_"))
            #expect(added.text.contains("ada@example.com") && added.text.contains("invited, link expires"))

            var ada = try await Self.accept(link, client)
            let home = try await ada.get("/")
            #expect(
                home.text.contains(#"Signed in as </span><a href="/account">Ada Lovelace &lt;ada@example.com&gt;</a>"#))
            #expect(try await ada.get("/tenants/globex/production").status == .notFound, "nothing of another tenant")
            var stranger = DashboardBrowser(client)
            let used = try await stranger.get(link)
            #expect(used.status == .gone && used.text.contains("works only once"))

            // Acting: the revision names her, never a key.
            let feature = try await ada.get(Self.abTest)
            let done = try await ada.post(
                "\(Self.abTest)/enabled",
                ["csrf": DashboardBrowser.csrf(in: feature), "enabled": "false", "action": "apply"])
            #expect(done.status == .seeOther)
            #expect(
                try await server.store.catalog.revisions(of: TestServer.acme).first?.actor
                    == "Ada Lovelace <ada@example.com>")
            #expect(try await ada.get("\(Self.base)/revisions").text.contains("Ada Lovelace &lt;ada@example.com&gt;"))

            // Her own key, made by the admin, capped by her role.
            let key = try await server.store.access.createKey(
                for: .tenant(TestServer.acme.tenant), role: .editor, name: "Ada's laptop", member: "ada@example.com")

            // Demoted: the very next edit is refused.
            let roles = try await admin.get(Self.members)
            let demoted = try await admin.post(
                "\(Self.members)/ada%40example.com/role", ["csrf": DashboardBrowser.csrf(in: roles), "role": "reader"])
            #expect(demoted.headers[.location]?.contains("notice=role-changed") == true)
            let refused = try await ada.post(
                "\(Self.abTest)/enabled",
                ["csrf": DashboardBrowser.csrf(in: feature), "enabled": "true", "action": "apply"])
            #expect(refused.status == .forbidden)
            // Said in a member's terms, with the way back to where they were.
            #expect(refused.text.contains("Your role here does not allow this: it needs editor."))
            #expect(
                refused.text.contains(
                    #"<a href="/tenants/acme/production">Back to the features of acme/production</a>"#))
            let keyRefused = try await client.send(
                .post, "/api/v1/tenants/acme/environments/production/features/\(segment(TestServer.abTest))/enable",
                key: key.secret, body: "{}")
            #expect(keyRefused.status == .forbidden, "her key does no more than she does")

            // Removed: her session and her key are dead at once.
            let confirm = try await admin.post(
                "\(Self.members)/ada%40example.com/remove",
                ["csrf": DashboardBrowser.csrf(in: roles), "action": "preview"])
            #expect(confirm.text.contains("Remove Ada Lovelace (ada@example.com) from acme?"))
            let removed = try await admin.post(
                "\(Self.members)/ada%40example.com/remove",
                ["csrf": DashboardBrowser.csrf(in: roles), "action": "apply"])
            #expect(removed.headers[.location]?.contains("notice=member-removed") == true)
            // Her next page is the sign-in page, which says why she is there.
            let location = try #require(try await ada.get(Self.base).headers[.location])
            #expect(location.hasPrefix("/login") && location.hasSuffix("&ended=1"))
            let signIn = try await ada.get(location)
            #expect(signIn.text.contains(#"id="session-ended">Your session has ended"#))
            var newcomer = DashboardBrowser(client)
            let fresh = try await newcomer.get(Self.base)
            #expect(fresh.headers[.location].map { !$0.contains("ended") } == true, "no session, no such word")
            let deadKey = try await client.send(
                .get, "/api/v1/tenants/acme/environments/production/revisions", key: key.secret)
            #expect(deadKey.status == .unauthorized)
        }
    }

    @Test("Sign out everywhere else ends a member's other sessions and keeps this browser's")
    func signOutEverywhereElse() async throws {
        let server = try await Self.server()
        let link = try #require(
            try await server.store.access.addMember(
                "ada@example.com", name: "Ada", role: .reader, to: TestServer.acme.tenant, by: "test"))
        _ = try await server.store.access.useLink(
            link.token, password: Self.password, address: "phone",
            browser:
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
            cost: PasswordCost(log2N: 10, blockSize: 8, parallelism: 1))
        try await server.test { client in
            var laptop = DashboardBrowser(client)
            laptop.extraHeaders[.userAgent] =
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.6; rv:133.0) Gecko/20100101 Firefox/133.0"
            let form = try await laptop.get("/login")
            let signedIn = try await laptop.post(
                "/login",
                ["csrf": DashboardBrowser.csrf(in: form), "email": "ada@example.com", "password": Self.password])
            #expect(signedIn.status == .seeOther)
            let account = try await laptop.get("/account")
            #expect(account.text.contains(#"id="end-other-sessions""#) && account.text.contains("since 20"))
            // Each session by its browser, not only its address: the phone is told from the laptop.
            #expect(
                account.text.contains("<td>Firefox on macOS</td>")
                    && account.text.contains("Sign out Safari on iPhone at phone since"))
            let ended = try await laptop.post(
                "/account/sessions/end-others", ["csrf": DashboardBrowser.csrf(in: account)])
            #expect(ended.status == .seeOther)
            let after = try await laptop.get("/account")
            #expect(after.status == .ok && !after.text.contains(#"id="end-other-sessions""#))
            #expect(try await server.store.access.memberSessions(of: "ada@example.com", current: nil).count == 1)
        }
    }

    @Test("Wrong passwords are refused without saying which part was wrong, then locked out with a clear message")
    func signInRefusals() async throws {
        let server = try await Self.server()
        let link = try #require(
            try await server.store.access.addMember(
                "ada@example.com", name: "Ada", role: .reader, to: TestServer.acme.tenant, by: "test"))
        _ = try await server.store.access.useLink(
            link.token, password: Self.password, address: "x",
            cost: PasswordCost(log2N: 10, blockSize: 8, parallelism: 1))
        try await server.test { client in
            var browser = DashboardBrowser(client)
            var statuses: [HTTPResponse.Status] = []
            var last: TestResponse?
            for attempt in 0..<6 {
                let form = try await browser.get("/login")
                let answer = try await browser.post(
                    "/login",
                    [
                        "csrf": DashboardBrowser.csrf(in: form), "email": "ada@example.com",
                        "password": "nope \(attempt)",
                    ])
                statuses.append(answer.status)
                last = answer
                #expect(!answer.text.contains("nope \(attempt)"), "a password is never repeated back")
            }
            #expect(
                statuses == [
                    .unauthorized, .unauthorized, .unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests,
                ])
            #expect(last?.text.contains("locked until") == true && last?.headers[.retryAfter] != nil)
            let form = try await browser.get("/login")
            let right = try await browser.post(
                "/login",
                ["csrf": DashboardBrowser.csrf(in: form), "email": "ada@example.com", "password": Self.password])
            #expect(right.status == .tooManyRequests, "locked means locked, even with the right password")

            let fresh = try await browser.get("/login")
            let huge = try await browser.post(
                "/login",
                [
                    "csrf": DashboardBrowser.csrf(in: fresh), "email": "bob@example.com",
                    "password": String(repeating: "a", count: 1 << 20),
                ])
            #expect([.contentTooLarge, .badRequest].contains(huge.status), "refused before hashing, not a 500")
        }
    }

    @Test("The member API: add, list, change a role, invite again, remove; a reset is a server operator's")
    func memberAPI() async throws {
        let server = try await Self.server()
        try await server.test { client in
            let admin = server.key("acme", .admin)
            let added = try await client.send(
                .post, "/api/v1/tenants/acme/members", key: admin,
                body: #"{"email":"ada@example.com","name":"Ada Lovelace","role":"editor"}"#)
            #expect(added.status == .created)
            #expect(added.text.contains(#""url":"http://"#) && added.text.contains("/welcome?token=fpl_"))
            let listed = try await client.send(.get, "/api/v1/tenants/acme/members", key: admin)
            #expect(listed.text.contains(#""email":"ada@example.com""#) && !listed.text.contains("fpl_"))
            #expect(
                try await client.send(
                    .patch, "/api/v1/tenants/acme/members/ada%40example.com", key: admin, body: #"{"role":"owner"}"#
                ).status == .unprocessableContent)
            let patched = try await client.send(
                .patch, "/api/v1/tenants/acme/members/ada%40example.com", key: admin, body: #"{"role":"admin"}"#)
            #expect(patched.status == .ok && patched.text.contains(#""role":"admin""#))
            #expect(
                try await client.send(.post, "/api/v1/tenants/acme/members/ada%40example.com/invitation", key: admin)
                    .status == .created)
            #expect(
                try await client.send(.post, "/api/v1/members/ada%40example.com/reset", key: admin).status
                    == .forbidden, "a tenant's admin can't take over a person's account")
            #expect(
                try await client.send(.post, "/api/v1/members/ada%40example.com/reset", key: server.serverAdminKey)
                    .status == .created)
            // Another tenant's admin: the 404 of someone who isn't there.
            #expect(
                try await client.send(
                    .delete, "/api/v1/tenants/globex/members/ada%40example.com", key: server.key("globex", .admin)
                ).status == .notFound)
            #expect(
                try await client.send(.delete, "/api/v1/tenants/acme/members/ada%40example.com", key: admin).status
                    == .noContent)
            #expect(try await server.store.access.members(of: TestServer.acme.tenant).isEmpty)
        }
    }
}
