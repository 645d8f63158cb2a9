import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A test's ramp as a timeline: its steps (applied, folded, due), what each moved, what else
/// happened to it, and the plans of the steps to come. Every action (start, pause, resume,
/// advance, abort) is planned first, a dry run showing what it will do, then applied: the same
/// store operations as `flagpole ramp`.
extension Dashboard {
    func registerRamp(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        let ramp = "tenants/:tenant/:env/features/:feature/ramp"

        reader.get(RouterPath(ramp), use: rampPage)
        editor.post(RouterPath(ramp), use: changeRamp)
        editor.post(RouterPath(ramp + "/triggers"), use: createTrigger)
        editor.post(RouterPath(ramp + "/triggers/revoke"), use: revokeTrigger)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/features/{feature}/ramp
    @Sendable func rampPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws
        -> Response
    {
        var page = try await rampPage(try context.feature(), in: context, draft: RampForm.empty)
        page.chrome.notice = Notice(request)?.text
        return .html(templates.render(page, as: "ramp"))
    }

    /// POST …/ramp: `do` is the action (create, pause, resume, advance, abort); `action=preview`
    /// shows its dry run, `apply` does it and goes back to the timeline.
    @Sendable func changeRamp(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws
        -> Response
    {
        let form = try await form(RampForm.self, of: request, session: context.session)
        let name = try context.feature()
        let isApplying = form.action == "apply"
        var confirmation: RampPage.Confirmation?
        var pageError: PageError?
        do {
            let report = try await runRamp(form, feature: name, in: context, isDryRun: !isApplying)
            if isApplying {
                return .seeOther(
                    Notice(.rampChanged).appended(to: EnvironmentURLs(context.path).feature(name) + "/ramp"))
            }
            confirmation = RampPage.Confirmation(report, form: form, now: clock.now)
        } catch {
            pageError = try Self.userError(error)
        }
        var page = try await rampPage(name, in: context, draft: form)
        page.confirmation = confirmation
        page.error = pageError?.message
        return .html(templates.render(page, as: "ramp"), status: pageError?.status ?? .ok)
    }

    /// POST …/ramp/triggers: makes a trigger of the feature and shows its URL, this once.
    @Sendable func createTrigger(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws
        -> Response
    {
        let form = try await form(TriggerForm.self, of: request, session: context.session)
        let name = try context.feature()
        var created: CreatedTrigger?
        var pageError: PageError?
        do {
            created = try await store.rollouts.createTrigger(
                for: name, action: try Trigger.Action(validating: form.triggerAction), name: form.name,
                in: context.path, actor: context.session.identity.actor,
                now: clock.now)
        } catch {
            pageError = try Self.userError(error)
        }
        var page = try await rampPage(name, in: context, draft: RampForm.empty)
        page.createdTrigger = created.map {
            RampPage.CreatedTriggerView(name: $0.trigger.name, url: $0.url(serverURL: request.serverURL))
        }
        page.error = pageError?.message
        return .html(templates.render(page, as: "ramp"), status: pageError?.status ?? .created)
    }

    /// POST …/ramp/triggers/revoke: `action=preview` asks to confirm, `apply` revokes.
    @Sendable func revokeTrigger(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws
        -> Response
    {
        let form = try await form(RevokeTriggerForm.self, of: request, session: context.session)
        let name = try await existingFeature(context)
        let url = EnvironmentURLs(context.path).feature(name) + "/ramp"
        if form.action == "apply" {
            try await store.rollouts.revokeTrigger(form.prefix, in: context.path, now: clock.now)
            return .seeOther(Notice(.triggerRevoked).appended(to: url))
        }
        var page = try await rampPage(name, in: context, draft: RampForm.empty)
        guard let trigger = page.triggers.first(where: { $0.prefix == form.prefix && $0.isActive }) else {
            throw TriggerError.triggerNotFound(context.path, prefix: form.prefix)
        }
        page.revoking = trigger
        return .html(templates.render(page, as: "ramp"))
    }

    /// The route's feature, looked up before anything is written: a form posted under a
    /// feature the environment lacks is refused (404) and changes nothing.
    private func existingFeature(_ context: DashboardEnvironmentContext<Needs.Editor>) async throws -> String {
        let name = try context.feature()
        _ = try await store.catalog.feature(name, in: context.path)
        return name
    }

    private func runRamp(
        _ form: RampForm, feature: String, in context: DashboardEnvironmentContext<Needs.Editor>, isDryRun: Bool
    ) async throws -> RampReport {
        let (path, actor, now) = (context.path, context.session.identity.actor, clock.now)
        if form.do == "create" {
            return try await store.rollouts.createRamp(
                RampRequest(
                    feature: feature, variation: form.variation, steps: try RampText.steps(form.steps ?? ""),
                    hold: try RampHold(parsing: form.hold ?? ""), start: try form.startTime(),
                    guards: try form.guardList.map { text throws(RampError) in try RampText.guardrail(text) },
                    onFailure: try RampText.failureAction(form.onFailure ?? "pause")),
                in: path, actor: actor, now: now, isDryRun: isDryRun)
        }
        guard let action = RampAction(rawValue: form.do) else {
            throw APIError.invalid(
                "“\(form.do)” is not something a ramp does: start, pause, resume, advance or abort it.")
        }
        return try await store.rollouts.changeRamp(
            action, of: feature, in: path, rollingBack: form.rollBack == "true", actor: actor, now: now,
            isDryRun: isDryRun)
    }

    private func rampPage(
        _ name: String, in context: DashboardEnvironmentContext<some RequiredRole>, draft: RampForm
    ) async throws -> RampPage {
        let path = context.path
        let feature = try await store.catalog.feature(name, in: path).feature
        let report: RampReport?
        do {
            report = try await store.rollouts.ramp(of: name, in: path)
        } catch RampError.rampNotFound {
            report = nil
        }
        return RampPage(
            chrome: try await chrome(context, at: .overview, same: { $0.feature(name) + "/ramp" }), feature: feature,
            featureURL: EnvironmentURLs(path).feature(name),
            webhooksURL: TenantURLs(path.tenant).webhooks(of: path.environment), report: report,
            triggers: try await store.rollouts.triggers(in: path, feature: name),
            canEdit: context.canEdit,
            csrf: context.session.csrfToken, draft: draft, publishes: try await store.outbound.hasPublished(path))
    }
}

/// The ramp form: an action, and for `create` the ramp's variation, steps, hold, guards (commas
/// between) and what a failed goal guard does.
struct RampForm: DashboardForm {
    var csrf: String
    var `do`: String
    var action: String?
    var variation: String?
    var steps: String?
    var hold: String?
    var guards: String?
    var onFailure: String?
    var rollBack: String?
    /// When the first step applies: blank for now, else a time with its zone, as `--start` takes.
    var start: String?

    /// The guards as written, blanks left out.
    var guardList: [String] {
        (guards ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The start typed: `nil` when blank (now).
    ///
    /// - throws: `APIError.invalid` for text that is no time.
    func startTime() throws -> Date? {
        let text = (start ?? "").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        guard let date = TimeText.date(from: text) else {
            throw APIError.invalid(
                "The start “\(text)” is not a time: write it with its zone, e.g. \(TimeText.examples), or leave it blank to start now.",
                pointer: "/start")
        }
        return date
    }

    /// What the create form starts with.
    static let empty = RampForm(
        csrf: "", do: "create", action: nil, variation: nil, steps: "1, 5, 20, 50, 100", hold: "24h", guards: nil,
        onFailure: nil, rollBack: nil, start: nil)
}

/// The form that makes a trigger: its name and what it does.
struct TriggerForm: DashboardForm {
    var csrf: String
    var name: String
    var triggerAction: String
}

/// The form that revokes a trigger, by its prefix.
struct RevokeTriggerForm: DashboardForm {
    var csrf: String
    var prefix: String
    var action: String?
}
