import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A tenant's settings: its keys, its environments (delivery settings and marking) and the goals
/// of each environment, on the store operations of `flagpole key`, `env` and `goal`. Keys and
/// environments are an admin's, as in the API; goals an editor's; anyone of the tenant reads the
/// environments and goals.
extension Dashboard {
    func registerSettings(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardTenantContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardTenantContext<Needs.Editor>.self)
        let admin = pages.group(context: DashboardTenantContext<Needs.Admin>.self)
        let environmentAdmin = pages.group(context: DashboardEnvironmentContext<Needs.Admin>.self)

        reader.get("tenants/:tenant/settings", use: showSettings)
        reader.get("tenants/:tenant/marking.css", use: markingStylesheet)
        admin.post("tenants/:tenant/settings/keys", use: createKey)
        admin.post("tenants/:tenant/settings/keys/:prefix/revoke", use: revokeKey)
        admin.post("tenants/:tenant/settings/environments", use: createEnvironment)
        environmentAdmin.post("tenants/:tenant/settings/environments/:env", use: updateEnvironment)
        editor.post("tenants/:tenant/settings/goals", use: createGoal)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/settings: keys (admins only), environments and goals.
    @Sendable func showSettings(
        _ request: Request, context: DashboardTenantContext<Needs.Reader>
    ) async throws -> Response {
        let page = try await settingsPage(context, notice: Notice(request)?.text)
        return .html(templates.render(page, as: "settings"))
    }

    /// GET /tenants/{tenant}/marking.css: the colours of the tenant's environments, which the
    /// layout links on each page of a coloured environment.
    @Sendable func markingStylesheet(
        _: Request, context: DashboardTenantContext<Needs.Reader>
    ) async throws -> Response {
        let css = MarkingStyle(environments: try await store.access.environments(of: context.tenant)).css
        return Response(
            status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: css)))
    }

    /// POST /tenants/{tenant}/settings/keys: a new key, its secret shown on this answer only (it
    /// is never stored, logged or shown again).
    @Sendable func createKey(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(KeyForm.self, of: request, session: context.session)
        let name = form.name.trimmingCharacters(in: .whitespaces)
        let environment = form.environment.flatMap { $0.isEmpty ? nil : $0 }
        let role = KeyRole(rawValue: form.role)
        let problem: String? =
            if name.isEmpty {
                "Keys: give the new key a name (who or what uses it, such as \"ci-import\"), so that it can be recognised and revoked later."
            } else if role == nil || role == .serverAdmin {
                "Keys: choose the new key's role: admin, editor, reader or delivery."
            } else if role == .delivery && environment == nil {
                "Keys: choose the environment the delivery key may fetch."
            } else if role != .delivery && environment != nil {
                "Keys: only a delivery key is scoped to one environment; choose \"every environment\" for a \(form.role) key."
            } else {
                nil
            }
        var created: CreatedKey?
        var failure = problem
        if failure == nil, let role {
            do {
                created = try await store.access.createKey(
                    for: .tenant(context.tenant), role: role, name: name,
                    environment: try environment.map { try EnvironmentName(validating: $0) },
                    member: form.member.flatMap { $0.isEmpty ? nil : $0 })
            } catch {
                failure = "Keys: " + (try refusal(error))
            }
        }
        var page = try await settingsPage(context, notice: nil)
        guard let created else {
            page.keyForm = KeyFormView(
                name: form.name, role: form.role, environment: environment, member: form.member, error: failure)
            page.refresh()
            return .html(templates.render(page, as: "settings"), status: .unprocessableContent)
        }
        context.logger.info(
            "Key created in the dashboard",
            metadata: ["tenant": "\(context.tenant)", "prefix": "\(created.info.prefix)", "role": "\(form.role)"])
        page.createdKey = CreatedKeyView(
            secret: created.secret, prefix: created.info.prefix, name: created.info.name,
            role: created.info.role.rawValue)
        page.refresh()
        return .html(templates.render(page, as: "settings"), status: .created)
    }

    /// POST /tenants/{tenant}/settings/keys/{prefix}/revoke: `action=preview` asks for a
    /// confirmation; `action=apply` revokes the key, which stops working at once.
    @Sendable func revokeKey(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(ActionForm.self, of: request, session: context.session)
        let prefix = try context.decodedParameter("prefix")
        let urls = TenantURLs(context.tenant)
        guard form.action == "apply" else {
            var page = try await settingsPage(context, notice: nil)
            guard let key = page.keys.first(where: { $0.prefix == prefix && $0.isActive }) else {
                throw KeyError.keyNotFound(prefix: prefix)
            }
            page.revoking = key
            return .html(templates.render(page, as: "settings"))
        }
        try await store.access.revokeKey(prefix, of: .tenant(context.tenant))
        return .seeOther(Notice(.keyRevoked).appended(to: urls.settings))
    }

    /// POST /tenants/{tenant}/settings/environments: a new environment, with no revision.
    @Sendable func createEnvironment(
        _ request: Request, context: DashboardTenantContext<Needs.Admin>
    ) async throws -> Response {
        let form = try await form(NewEnvironmentForm.self, of: request, session: context.session)
        let failure: String
        do {
            let name = try EnvironmentName(validating: form.name)
            try await store.access.createEnvironment(EnvironmentPath(tenant: context.tenant, environment: name))
            return .seeOther(Notice(.environmentCreated).appended(to: TenantURLs(context.tenant).settings))
        } catch let error as CoreError {
            failure = "New environment: \(error.description)"
        } catch {
            failure = "New environment: " + (try refusal(error))
        }
        var page = try await settingsPage(context, notice: nil)
        page.newEnvironment = NewEnvironmentView(name: form.name, error: failure)
        return .html(templates.render(page, as: "settings"), status: .unprocessableContent)
    }

    /// POST /tenants/{tenant}/settings/environments/{env}: who may fetch its document, its
    /// Cache-Control, colour and whether changes need a reason. Every field is checked before
    /// anything is written.
    @Sendable func updateEnvironment(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Admin>
    ) async throws -> Response {
        let path = context.path
        let form = try await form(EnvironmentForm.self, of: request, session: context.session)
        // An address of no environment is the 404 of any page; the form's own refusals are 422.
        let current = try await store.access.environment(path)
        let isPrivate = form.isPrivate != nil
        let cacheControl = form.cacheControl.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let colourText = form.colour.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let requiresReason = form.requiresReason != nil
        var failure: String?
        do {
            let colour = colourText.isEmpty ? nil : try EnvironmentColour(validating: colourText)
            // Only what changed is written: a new colour alone leaves the delivery settings' version,
            // which servers and caches follow, as it was.
            if current.delivery != DeliverySettings(isPrivate: isPrivate, cacheControl: cacheControl) {
                try await store.access.updateDelivery(of: path) { settings in
                    settings.isPrivate = isPrivate
                    settings.cacheControl = cacheControl
                }
            }
            if current.marking != EnvironmentMarking(colour: colour, requiresReason: requiresReason) {
                try await store.access.updateMarking(of: path) { marking in
                    marking.colour = colour
                    marking.requiresReason = requiresReason
                }
            }
        } catch let error as TenancyError {
            if case .invalidColour = error {
                failure = "Colour of \(path.environment): \(error.description) Leave it blank for none."
            } else {
                throw error
            }
        } catch {
            failure = "Delivery of \(path.environment): " + (try refusal(error))
        }
        guard let failure else {
            return .seeOther(Notice(.environmentSaved).appended(to: TenantURLs(path.tenant).settings))
        }
        var page = try await settingsPage(
            tenant: path.tenant, session: context.session, isAdmin: true, canEdit: true, notice: nil)
        if let index = page.environments.firstIndex(where: { $0.name == path.environment.rawValue }) {
            page.environments[index].isPrivate = isPrivate
            page.environments[index].cacheControlValue = form.cacheControl ?? ""
            page.environments[index].colourValue = colourText
            page.environments[index].requiresReason = requiresReason
            page.environments[index].error = failure
        }
        return .html(templates.render(page, as: "settings"), status: .unprocessableContent)
    }

    /// POST /tenants/{tenant}/settings/goals: a goal of one environment, as `flagpole goal create`.
    @Sendable func createGoal(
        _ request: Request, context: DashboardTenantContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(GoalForm.self, of: request, session: context.session)
        let kind = Goal.Kind(rawValue: form.kind)
        let better = Goal.Direction(rawValue: form.better)
        var failure: String?
        if form.environment.isEmpty {
            failure = "New goal: choose the environment whose tests it judges."
        } else if kind == nil {
            failure = "New goal: choose its kind: conversion, count or value."
        } else if better == nil {
            failure = "New goal: choose whether higher or lower is better."
        } else if let kind, let better {
            do {
                let environment = try EnvironmentName(validating: form.environment)
                try await store.experiments.createGoal(
                    Goal(name: form.name, kind: kind, better: better),
                    in: EnvironmentPath(tenant: context.tenant, environment: environment))
                return .seeOther(Notice(.goalCreated).appended(to: TenantURLs(context.tenant).settings))
            } catch let error as CoreError {
                failure = "New goal: \(error.description)"
            } catch {
                failure = "New goal: " + (try refusal(error))
            }
        }
        var page = try await settingsPage(context, notice: nil)
        page.goalForm = GoalFormView(
            name: form.name, environment: form.environment, kind: form.kind, better: form.better,
            environments: page.environments.map(\.name), error: failure)
        return .html(templates.render(page, as: "settings"), status: .unprocessableContent)
    }

    // MARK: The page

    func settingsPage(
        _ context: DashboardTenantContext<some RequiredRole>, notice: String?
    ) async throws -> SettingsPage {
        try await settingsPage(
            tenant: context.tenant, session: context.session, isAdmin: context.isAdmin, canEdit: context.canEdit,
            notice: notice)
    }

    /// The page as it stands: keys only for an admin, who alone may list them.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    func settingsPage(
        tenant: TenantSlug, session: DashboardSession, isAdmin: Bool, canEdit: Bool, notice: String?
    ) async throws -> SettingsPage {
        let environments = try await store.access.environments(of: tenant)
        var goals: [GoalRow] = []
        for environment in environments {
            goals += try await store.experiments.goals(in: environment.path).map {
                GoalRow(environment: environment.path.environment.rawValue, goal: $0)
            }
        }
        var keys: [KeyRow] = []
        var members: [Member] = []
        if isAdmin {
            keys = try await store.access.keys(of: .tenant(tenant)).map { KeyRow($0, urls: TenantURLs(tenant)) }
            members = try await store.access.members(of: tenant)
        }
        var chrome = Chrome(session: session, notice: notice)
        if environments.contains(where: { $0.marking.colour != nil }) {
            chrome.markingStylesheetURL = TenantURLs(tenant).markingStylesheet
        }
        var page = SettingsPage(
            chrome: chrome, tenant: tenant.rawValue, settingsURL: TenantURLs(tenant).settings,
            keysURL: TenantURLs(tenant).keys, environmentsURL: TenantURLs(tenant).environments,
            goalsURL: TenantURLs(tenant).goals, membersURL: TenantURLs(tenant).members,
            csrf: session.csrfToken, isAdmin: isAdmin, canEdit: canEdit, keys: keys,
            environments: environments.map { EnvironmentRow($0, urls: TenantURLs(tenant)) }, goals: goals)
        page.keyForm = KeyFormView(name: "", role: KeyRole.reader.rawValue, environment: nil, error: nil)
        page.members = members
        page.goalForm = GoalFormView(
            name: "", environment: "", kind: Goal.Kind.conversion.rawValue, better: Goal.Direction.higher.rawValue,
            environments: environments.map(\.path.environment.rawValue), error: nil)
        page.refresh()
        return page
    }

    /// The words of a refusal the person can fix (`422`, `409`, or a form's environment that is
    /// gone); anything else is not theirs to fix, and goes on to the error page.
    private func refusal(_ error: any Error) throws -> String {
        if case TenancyError.environmentNotFound = error { return "\(error)" }
        let apiError = APIError(error)
        guard apiError.status == .unprocessableContent || apiError.status == .conflict else { throw error }
        return apiError.message
    }
}

/// The create-key form.
struct KeyForm: DashboardForm {
    var csrf: String
    var name: String
    var role: String
    var environment: String?
    /// The email of the member whose key it is; empty: a service's.
    var member: String?
}

/// A form whose button says what to do: `preview` (confirm first) or `apply`.
struct ActionForm: DashboardForm {
    var csrf: String
    var action: String?
}

/// The create-environment form.
struct NewEnvironmentForm: DashboardForm {
    var csrf: String
    var name: String
}

/// An environment's settings form; a checkbox left unticked is not sent.
struct EnvironmentForm: DashboardForm {
    var csrf: String
    var isPrivate: String?
    var cacheControl: String?
    var colour: String?
    var requiresReason: String?

    enum CodingKeys: String, CodingKey {
        case csrf
        case isPrivate = "private"
        case cacheControl = "cache-control"
        case colour
        case requiresReason = "requires-reason"
    }
}

/// The create-goal form.
struct GoalForm: DashboardForm {
    var csrf: String
    var environment: String
    var name: String
    var kind: String
    var better: String
}
