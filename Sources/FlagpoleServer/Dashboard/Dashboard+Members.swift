import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// Members: a tenant's Members page (its admins'), the page an invitation or reset link opens,
/// and each member's account (their sessions and password).
extension Dashboard {
    func registerMembers(on pages: RouterGroup<FlagpoleRequestContext>, signedIn: RouterGroup<FlagpoleRequestContext>) {
        let admin = signedIn.group(context: DashboardTenantContext<Needs.Admin>.self)
        let anyone = signedIn.group(context: SignedInContext.self)

        admin.get("tenants/:tenant/settings/members", use: showMembers)
        admin.post("tenants/:tenant/settings/members", use: addMember)
        admin.post("tenants/:tenant/settings/members/:email/role", use: changeRole)
        admin.post("tenants/:tenant/settings/members/:email/remove", use: removeMember)
        admin.post("tenants/:tenant/settings/members/:email/invitation", use: reinvite)
        pages.get("welcome", use: welcomePage)
        pages.post("welcome", use: acceptLink)
        anyone.get("account", use: accountPage)
        anyone.post("account/password", use: changePassword)
        anyone.post("account/sessions/:id/end", use: endSession)
        anyone.post("account/sessions/end-others", use: endOtherSessions)
    }

    // MARK: Members page

    /// GET /tenants/{tenant}/settings/members.
    @Sendable func showMembers(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        .html(templates.render(try await membersPage(context, notice: Notice(request)?.text), as: "members"))
    }

    /// POST /tenants/{tenant}/settings/members: adds someone; someone new gets an invitation
    /// link, shown on this answer only.
    @Sendable func addMember(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(MemberForm.self, of: request, session: context.session)
        do {
            let link = try await store.access.addMember(
                form.email, name: form.name, role: try KeyRole(member: form.role), to: context.tenant,
                by: context.session.identity.actor)
            var page = try await membersPage(
                context,
                notice: link == nil
                    ? "\(form.email.lowercased()) is added: they sign in with the password they already have." : nil)
            page.link = link.map { LinkView($0, server: request.serverURL) }
            return .html(templates.render(page, as: "members"), status: .created)
        } catch let error as MemberError {
            var page = try await membersPage(context, notice: nil)
            page.form = MemberFormView(email: form.email, name: form.name, role: form.role, error: error.description)
            page.refresh()
            return .html(templates.render(page, as: "members"), status: .unprocessableContent)
        }
    }

    /// POST /tenants/{tenant}/settings/members/{email}/role: takes effect at once.
    @Sendable func changeRole(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(RoleForm.self, of: request, session: context.session)
        let email = try context.decodedParameter("email")
        try await store.access.setRole(try KeyRole(member: form.role), of: email, in: context.tenant)
        return .seeOther(Notice(.roleChanged).appended(to: TenantURLs(context.tenant).members))
    }

    /// POST /tenants/{tenant}/settings/members/{email}/remove: `action=preview` says what
    /// removing does; `action=apply` does it.
    @Sendable func removeMember(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(ActionForm.self, of: request, session: context.session)
        let email = try context.decodedParameter("email")
        guard form.action == "apply" else {
            var page = try await membersPage(context, notice: nil)
            guard let member = page.members.first(where: { $0.email == email.lowercased() }) else {
                throw MemberError.memberNotFound(email: email, tenant: context.tenant)
            }
            page.removing = member
            return .html(templates.render(page, as: "members"))
        }
        try await store.access.removeMember(email, from: context.tenant)
        return .seeOther(Notice(.memberRemoved).appended(to: TenantURLs(context.tenant).members))
    }

    /// POST /tenants/{tenant}/settings/members/{email}/invitation: a new link; the earlier one
    /// stops working.
    @Sendable func reinvite(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        _ = try await form(CSRFOnlyForm.self, of: request, session: context.session)
        let link = try await store.access.invitation(
            for: try context.decodedParameter("email"), in: context.tenant, by: context.session.identity.actor)
        var page = try await membersPage(context, notice: nil)
        page.link = LinkView(link, server: request.serverURL)
        return .html(templates.render(page, as: "members"), status: .created)
    }

    func membersPage(_ context: DashboardTenantContext<Needs.Admin>, notice: String?) async throws -> MembersPage {
        let urls = TenantURLs(context.tenant)
        var page = MembersPage(
            chrome: Chrome(session: context.session, notice: notice), tenant: context.tenant.rawValue,
            settingsURL: urls.settings, membersURL: urls.members, csrf: context.session.csrfToken,
            members: try await store.access.members(of: context.tenant).map { MemberRow($0, urls: urls) })
        page.refresh()
        return page
    }

    // MARK: Links

    /// GET /welcome?token=…: whose link it is, and the form that sets the password.
    @Sendable func welcomePage(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let token = request.uri.queryParameters["token"].map(String.init) ?? ""
        do {
            let link = try await store.access.memberLink(token)
            return welcomePage(token: token, link: link, error: nil, status: .ok, for: request)
        } catch let error as MemberError {
            return welcomePage(token: "", link: nil, error: error.description, status: .gone, for: request)
        }
    }

    /// POST /welcome: sets the password, signs the member in, and opens the dashboard.
    @Sendable func acceptLink(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        let form = try await decodeForm(WelcomeForm.self, request)
        try Self.checkPreSessionForm(form.csrf, of: request)
        let link: MemberLinkInfo
        do {
            link = try await store.access.memberLink(form.token)
        } catch let error as MemberError {
            return welcomePage(token: "", link: nil, error: error.description, status: .gone, for: request)
        }
        guard form.password == form.repeated else {
            return welcomePage(
                token: form.token, link: link, error: "The two passwords differ. Type the same one twice.",
                status: .unprocessableContent, for: request)
        }
        do {
            let session = try await store.access.useLink(
                form.token, password: form.password, address: request.clientAddress(context, trustsProxy: trustsProxy),
                browser: request.headers[.userAgent], cost: passwordCost)
            return Self.signedIn(session, going: "/", for: request)
        } catch let error as MemberError {
            return welcomePage(
                token: form.token, link: link, error: error.description, status: .unprocessableContent, for: request)
        }
    }

    private func welcomePage(
        token: String, link: MemberLinkInfo?, error: String?, status: HTTPResponse.Status, for request: Request
    ) -> Response {
        Self.preSessionPage(status: status, for: request) { csrf in
            templates.render(
                WelcomePage(
                    chrome: Chrome(session: nil), csrf: csrf, token: token, name: link?.name ?? "",
                    email: link?.email ?? "", isReset: link?.purpose == .reset,
                    expires: link?.expiresAt.formatted(.iso8601) ?? "", hasLink: link != nil, error: error),
                as: "welcome")
        }
    }

    // MARK: Account

    /// GET /account: who is signed in, their sessions, and their password.
    @Sendable func accountPage(_ request: Request, context: SignedInContext) async throws -> Response {
        .html(
            templates.render(try await accountPage(context, notice: Notice(request)?.text, error: nil), as: "account"))
    }

    /// POST /account/password: the member gives the current password; their other sessions end.
    @Sendable func changePassword(_ request: Request, context: SignedInContext) async throws -> Response {
        let form = try await form(PasswordForm.self, of: request, session: context.session)
        guard case .member(let grants) = context.session.identity.owner else {
            throw APIError(
                .forbidden, code: "forbidden",
                "This session was opened with an API key, which has no password to change. Sign in with your e-mail address and password to change yours."
            )
        }
        let problem: String?
        if form.new != form.repeated {
            problem = "The two new passwords differ. Type the same one twice."
        } else {
            do {
                try await store.access.changePassword(
                    of: grants.email, from: form.current, to: form.new, keepingSession: context.session.token,
                    cost: passwordCost)
                return .seeOther(Notice(.passwordChanged).appended(to: "/account"))
            } catch let error as MemberError {
                problem = error.description
            }
        }
        return .html(
            templates.render(try await accountPage(context, notice: nil, error: problem), as: "account"),
            status: .unprocessableContent)
    }

    /// POST /account/sessions/{id}/end: signs one of the member's sessions out.
    @Sendable func endSession(_ request: Request, context: SignedInContext) async throws -> Response {
        _ = try await form(CSRFOnlyForm.self, of: request, session: context.session)
        guard case .member(let grants) = context.session.identity.owner,
            let id = Int64(context.parameters.get("id") ?? "")
        else { throw MemberError.sessionNotFound }
        try await store.access.closeMemberSession(id, of: grants.email)
        return .seeOther(Notice(.sessionEnded).appended(to: "/account"))
    }

    /// POST /account/sessions/end-others: signs out every session of the member but this one.
    @Sendable func endOtherSessions(_ request: Request, context: SignedInContext) async throws -> Response {
        _ = try await form(CSRFOnlyForm.self, of: request, session: context.session)
        guard case .member(let grants) = context.session.identity.owner else { throw MemberError.sessionNotFound }
        try await store.access.closeOtherMemberSessions(of: grants.email, current: context.session.token)
        return .seeOther(Notice(.sessionEnded).appended(to: "/account"))
    }

    private func accountPage(_ context: SignedInContext, notice: String?, error: String?) async throws -> AccountPage {
        let identity = context.session.identity
        var page = AccountPage(
            chrome: Chrome(session: context.session, notice: notice), csrf: context.session.csrfToken,
            actor: identity.actor, isMember: false, sessions: [], tenants: [], passwordError: error)
        if case .member(let grants) = identity.owner {
            page.isMember = true
            page.tenants = grants.roles.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.rawValue)" }
            page.sessions = try await store.access.memberSessions(of: grants.email, current: context.session.token).map
            {
                session in
                SessionRow(session, endURL: "/account/sessions/\(session.id)/end")
            }
            page.hasOtherSessions = page.sessions.contains { !$0.isCurrent }
        }
        return page
    }
}

struct MemberForm: DashboardForm {
    var csrf: String
    var email: String
    var name: String
    var role: String
}

struct RoleForm: DashboardForm {
    var csrf: String
    var role: String
}

/// The form a link opens: its token, and the new password twice.
struct WelcomeForm: Decodable {
    var csrf: String
    var token: String
    var password: String
    var repeated: String
}

struct PasswordForm: DashboardForm {
    var csrf: String
    var current: String
    var new: String
    var repeated: String
}
