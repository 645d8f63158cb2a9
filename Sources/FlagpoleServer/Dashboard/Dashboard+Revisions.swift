import FlagpoleCore
import FlagpoleStore
import Hummingbird

/// Every revision of an environment, the difference between any two, and roll-back.
extension Dashboard {
    func registerRevisions(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        reader.get("tenants/:tenant/:env/revisions", use: revisionsPage)
        editor.post("tenants/:tenant/:env/revisions/rollback", use: rollBack)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/revisions[?from=A&to=B]
    @Sendable func revisionsPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let query = request.uri.queryParameters
        return try await revisionsResponse(
            in: context, from: query["from"].flatMap { Int(String($0)) }, to: query["to"].flatMap { Int(String($0)) },
            notice: Notice(request)?.text)
    }

    /// POST /tenants/{tenant}/{env}/revisions/rollback: writes revision `to`'s content as a
    /// new revision, unless another revision came after the page was shown; refused, the
    /// comparison comes back with why, and the reason as typed.
    @Sendable func rollBack(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(RollbackForm.self, of: request, session: session)
        do {
            let outcome = try await store.catalog.rollBack(
                path, to: form.to,
                options: EditOptions(
                    message: ReasonField.message(form.reason), actor: session.identity.actor,
                    expectedRevision: form.revision))
            return try await applied(outcome, of: path, back: EnvironmentURLs(path).revisions)
        } catch {
            return try await revisionsResponse(
                in: context, from: nil, to: form.to, reason: form.reason, refusal: try Self.userError(error))
        }
    }

    /// The revisions page, comparing `from` (the current one when `nil`) with `to` when given.
    private func revisionsResponse(
        in context: DashboardEnvironmentContext<some RequiredRole>, from: Int?, to: Int?, notice: String? = nil,
        reason: String? = nil, refusal: PageError? = nil
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let urls = EnvironmentURLs(path)
        let canEdit = context.canEdit
        let revisions = try await store.catalog.revisions(of: path).sorted { $0.number > $1.number }
        let current = revisions.first?.number ?? 0
        let from = from ?? current
        let chrome = try await chrome(context, at: .revisions, notice: notice)
        var page = RevisionsPage(
            chrome: chrome,
            path: path.description, url: urls.revisions, canEdit: canEdit, csrf: session.csrfToken,
            hasRevisions: !revisions.isEmpty,
            revisions: revisions.map { revision in
                RevisionsPage.Row(
                    number: revision.number, kind: revision.kind.rawValue, actor: revision.actor,
                    message: revision.message,
                    time: ShownTime(revision.createdAt), changes: revision.changeCount,
                    isCurrent: revision.number == current,
                    compareURL: urls.compare(current, with: revision.number))
            },
            fromChoices: revisions.map {
                Choice(name: "revision \($0.number)", value: String($0.number), isSelected: $0.number == from)
            },
            toChoices: revisions.map {
                Choice(
                    name: "revision \($0.number)", value: String($0.number),
                    isSelected: $0.number == (to ?? current))
            })
        if let to {
            do {
                let diff = try await store.catalog.diff(path, from: from, to: to)
                let rollback =
                    canEdit && from == current && to != current
                    ? RevisionsPage.Rollback(
                        target: to, current: current, rollbackURL: urls.rollback,
                        reason: ReasonField(
                            id: "rollback-reason", text: reason,
                            isRequired: chrome.environment?.requiresReason ?? false))
                    : nil
                page.diff = RevisionsPage.Diff(diff, from: from, to: to, rollback: rollback)
            } catch {
                let pageError = try Self.userError(error)
                page.error = pageError.message
                return .html(templates.render(page, as: "revisions"), status: pageError.status)
            }
        }
        // A refused roll-back says why beside its button, where it was pressed.
        if page.diff?.rollback != nil {
            page.diff?.rollback?.error = refusal?.message
        } else {
            page.error = refusal?.message
        }
        return .html(templates.render(page, as: "revisions"), status: refusal?.status ?? .ok)
    }
}

struct RollbackForm: DashboardForm {
    var csrf: String
    var to: Int
    /// The current revision the page showed.
    var revision: Int?
    var reason: String?
}

struct RevisionsPage: Sendable {
    struct Row: Sendable {
        var number: Int
        var kind: String
        var actor: String
        var message: String
        var time: ShownTime
        var changes: Int
        var isCurrent: Bool
        var compareURL: String
    }

    struct Rollback: Sendable {
        var target: Int
        var current: Int
        var rollbackURL: String
        var reason: ReasonField
        var error: String?
    }

    struct Diff: Sendable {
        struct Change: Sendable {
            var feature: String
            var field: String
            var kind: String
            var before: String
            var after: String
        }

        var title: String
        var changes: [Change]
        var hasChanges: Bool
        var rollback: Rollback?

        init(_ diff: DocumentDiff, from: Int, to: Int, rollback: Rollback?) {
            title = "From revision \(from) to revision \(to)"
            let writer = JSONWriter(style: .compact)
            let text = { (value: JSONValue?) in
                value.map { String(decoding: writer.bytes(of: $0), as: UTF8.self) } ?? ""
            }
            changes = diff.changes.map { change in
                // What changed, in words: a feature, a config or a segment, or the file itself.
                let (subject, whole): (String, String) =
                    if let config = change.config {
                        ("config \(config)", "(the whole config)")
                    } else if let segment = change.segment {
                        ("segment \(segment)", "(the whole segment)")
                    } else if let feature = change.feature {
                        (feature, "(the whole feature)")
                    } else {
                        ("the file", "the order of its keys")
                    }
                return Change(
                    feature: subject, field: change.field ?? whole, kind: change.kind.rawValue,
                    before: text(change.before), after: text(change.after))
            }
            hasChanges = !changes.isEmpty
            self.rollback = rollback
        }
    }

    var chrome: Chrome
    var path: String
    var url: String
    var canEdit: Bool
    var csrf: String
    var hasRevisions: Bool
    var revisions: [Row]
    var fromChoices: [Choice]
    var toChoices: [Choice]
    var error: String?
    var diff: Diff?
}
