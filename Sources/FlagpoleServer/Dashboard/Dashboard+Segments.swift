import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// An environment's segments: named sets of users (listed ids and/or clauses on attributes)
/// that rules reuse. A change is planned first, as a change of rules is: the tests whose rules
/// name the segment say who would move. Saving and deleting are the store operations
/// `flagpole segment set` and `delete` use, so each change is a revision with its audit rows.
extension Dashboard {
    /// Listed users a segment's page shows (the editor holds them all).
    static let shownSegmentUsers = 100

    func registerSegments(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        let segment = "tenants/:tenant/:env/segments/:segment"

        reader.get("tenants/:tenant/:env/segments", use: segmentsPage)
        editor.get("tenants/:tenant/:env/new-segment", use: newSegmentPage)
        editor.post("tenants/:tenant/:env/new-segment", use: createSegment)
        reader.get(RouterPath(segment), use: segmentPage)
        editor.post(RouterPath(segment), use: saveSegment)
        editor.post(RouterPath(segment + "/delete"), use: deleteSegment)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/segments: every segment with its users, clauses and the
    /// rules that name it.
    @Sendable func segmentsPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let page = try await segmentsPage(context, notice: Notice(request)?.text)
        return .html(templates.render(page, as: "segments"))
    }

    /// GET /tenants/{tenant}/{env}/new-segment: the editor of a new segment. Nothing is
    /// written until its plan is applied.
    @Sendable func newSegmentPage(
        _: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let page = try await segmentPage(SegmentDraft(), isNew: true, in: context)
        return .html(templates.render(page, as: "segment"))
    }

    /// POST /tenants/{tenant}/{env}/new-segment: `action=plan` checks the new segment and
    /// plans it; `apply` writes it, unless another revision came after the form's.
    @Sendable func createSegment(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(SegmentForm.self, of: request, session: context.session)
        return try await saveSegment(
            SegmentDraft(form, name: form.name ?? ""), isNew: true, form: form, in: context)
    }

    /// GET /tenants/{tenant}/{env}/segments/{segment}: the segment, the rules that name it,
    /// and for editors its editor.
    @Sendable func segmentPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let name = try context.decodedParameter("segment")
        let snapshot = try await store.catalog.targeting(in: path)
        guard let existing = snapshot.segments.first(where: { $0.name == name }) else {
            throw Self.noSegment(name, in: path, snapshot: snapshot)
        }
        let page = try await segmentPage(
            SegmentDraft(existing), isNew: false, in: context,
            notice: Notice(request)?.text)
        return .html(templates.render(page, as: "segment"))
    }

    /// POST /tenants/{tenant}/{env}/segments/{segment}: plans (`action=plan`) or applies
    /// (`apply`) the segment's new definition, as for a new one.
    @Sendable func saveSegment(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(SegmentForm.self, of: request, session: context.session)
        return try await saveSegment(
            SegmentDraft(form, name: try context.decodedParameter("segment")), isNew: false, form: form,
            in: context)
    }

    /// POST /tenants/{tenant}/{env}/segments/{segment}/delete: `action=preview` asks for
    /// confirmation; `apply` deletes, unless a revision came first. Refused while rules name it.
    @Sendable func deleteSegment(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(DeleteForm.self, of: request, session: session)
        let name = try context.decodedParameter("segment")
        let isApplying = form.action == "apply"
        var state = SegmentState(reason: form.reason)
        do {
            let outcome = try await store.catalog.deleteSegment(
                named: name, in: path,
                options: EditOptions(
                    isDryRun: !isApplying, message: ReasonField.message(form.reason), actor: session.identity.actor,
                    expectedRevision: isApplying ? form.revision : nil))
            if isApplying {
                return .seeOther(Notice(outcome).appended(to: EnvironmentURLs(path).segments))
            }
            state.deletion = outcome.revision
        } catch {
            state.error = try Self.userError(error)
            // The confirmation stays up when applying it is refused (no reason given, say).
            if isApplying, let revision = form.revision { state.deletion = revision + 1 }
        }
        let snapshot = try await store.catalog.targeting(in: path)
        guard let existing = snapshot.segments.first(where: { $0.name == name }) else {
            throw Self.noSegment(name, in: path, snapshot: snapshot)
        }
        let page = try await segmentPage(
            SegmentDraft(existing), isNew: false, in: context, state: state)
        return .html(templates.render(page, as: "segment"), status: state.error?.status ?? .ok)
    }

    /// Plans or applies `draft`. A refused segment comes back with its issues placed in the
    /// fields, as typed; a stale form with the conflict, the text kept for the current revision.
    private func saveSegment(
        _ draft: SegmentDraft, isNew: Bool, form: SegmentForm, in context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let (path, session) = (context.path, context.session)
        let isApplying = form.action == "apply"
        let urls = EnvironmentURLs(path)
        var state = SegmentState(revision: form.revision, reason: form.reason)
        do {
            let segment = try draft.segment()
            if isNew, try await store.catalog.targeting(in: path).segments.contains(where: { $0.name == segment.name })
            {
                state.error = PageError(
                    status: .conflict,
                    message:
                        "A segment named \"\(segment.name)\" exists already: nothing was written. Open it from the segments page to change it, or choose another name."
                )
            } else {
                let outcome = try await store.catalog.setSegment(
                    segment, in: path,
                    options: EditOptions(
                        isDryRun: !isApplying, message: ReasonField.message(form.reason),
                        actor: session.identity.actor, expectedRevision: form.revision))
                if isApplying {
                    return .seeOther(Notice(outcome).appended(to: urls.userSegment(segment.name)))
                }
                state.plan = TargetingPlanView(outcome, urls: urls, subject: "this segment")
            }
        } catch let refused as ConfigsRefused {
            state.issues = refused.issues
            state.error = PageError(
                status: .unprocessableContent,
                message: "The segment was refused: nothing was written. What is wrong, and where, is listed below.")
        } catch {
            state.error = try Self.userError(error)
            if state.error?.status == .conflict {
                state.error?.message +=
                    " What is saved now is shown and your input is kept: plan it again to see what it would do now."
                state.revision = nil
            }
        }
        let page = try await segmentPage(draft, isNew: isNew, in: context, state: state)
        return .html(templates.render(page, as: "segment"), status: state.error?.status ?? .ok)
    }

    private func segmentsPage(
        _ context: DashboardEnvironmentContext<some RequiredRole>, notice: String?
    ) async throws -> SegmentsPage {
        let path = context.path
        let snapshot = try await store.catalog.targeting(in: path)
        let urls = EnvironmentURLs(path)
        let rows = snapshot.segments.map { segment in
            let uses = Self.uses(of: segment.name, in: snapshot, urls: urls)
            return SegmentsPage.Row(
                name: segment.name, url: urls.userSegment(segment.name), segmentDescription: segment.description,
                users: segment.users.count.grouped,
                clauses: TargetingText.clauses(segment.clauses, none: "none: only the listed users"),
                uses: uses, hasUses: !uses.isEmpty)
        }
        return SegmentsPage(
            chrome: try await chrome(context, at: .segments, notice: notice), path: path.description,
            revision: snapshot.revision, canEdit: context.canEdit,
            newSegmentURL: urls.newSegment, rows: rows, hasRows: !rows.isEmpty)
    }

    private func segmentPage(
        _ draft: SegmentDraft, isNew: Bool, in context: DashboardEnvironmentContext<some RequiredRole>,
        notice: String? = nil, state: SegmentState = SegmentState()
    ) async throws -> SegmentPage {
        let (path, session) = (context.path, context.session)
        let snapshot = try await store.catalog.targeting(in: path)
        let urls = EnvironmentURLs(path)
        let saved = isNew ? nil : snapshot.segments.first { $0.name == draft.name }
        let uses = isNew ? [] : Self.uses(of: draft.name, in: snapshot, urls: urls)
        let chrome = try await chrome(context, at: .segments, notice: notice)
        return SegmentPage(
            chrome: chrome, path: path.description,
            name: draft.name, url: isNew ? urls.newSegment : urls.userSegment(draft.name),
            segmentsURL: urls.segments, isNew: isNew, revision: state.revision ?? snapshot.revision ?? 0,
            canEdit: context.canEdit, csrf: session.csrfToken,
            error: state.error?.message, issues: TargetingIssueList(state.issues, fields: SegmentDraft.fields),
            saved: saved.map(SegmentPage.Saved.init), uses: uses, hasUses: !uses.isEmpty,
            draftDescription: draft.description, draftUsers: draft.users, draftClauses: draft.clauses,
            segmentPlan: state.plan,
            reason: ReasonField(
                id: "segment-reason", text: state.reason, isRequired: chrome.environment?.requiresReason ?? false),
            deletion: state.deletion.map { DeletionConfirmation($0, reason: state.reason, chrome: chrome) })
    }

    /// The rules that name the segment `name`, feature by feature.
    static func uses(of name: String, in snapshot: TargetingSnapshot, urls: EnvironmentURLs) -> [SegmentUse] {
        snapshot.featureRules.sorted { $0.key < $1.key }.flatMap { feature, rules in
            rules.filter { rule in
                rule.clauses.contains { $0.op.operand == .segment && $0.values.contains(.string(name)) }
            }
            .map { SegmentUse(feature: feature, rule: $0.id, url: urls.feature(feature)) }
        }
    }

    static func noSegment(_ name: String, in path: EnvironmentPath, snapshot: TargetingSnapshot) -> APIError {
        let existing = snapshot.segments.map(\.name)
        return APIError(
            .notFound, code: "not_found",
            "\(path) has no segment \"\(name)\""
                + (existing.isEmpty
                    ? " (it has none yet)."
                    : ". It has \(existing.prefix(10).map { "\"\($0)\"" }.joined(separator: ", "))\(existing.count > 10 ? ", …" : "").")
        )
    }
}

/// What a segment page shows besides the segment: a plan, issues, an error, a confirmation.
struct SegmentState: Sendable {
    /// The revision the form was for: kept when it is planned or refused; `nil` after a
    /// conflict, so the page carries the current one.
    var revision: Int?
    var plan: TargetingPlanView?
    var issues: [ConfigIssue] = []
    var error: PageError?
    /// The revision deleting the segment would make, to confirm.
    var deletion: Int?
    /// The reason typed, kept while the change is planned or refused.
    var reason: String?
}

/// A segment as its editor holds it: each field as typed, so a refused form comes back as sent.
struct SegmentDraft: Sendable {
    var name: String
    var description: String
    /// One id per line.
    var users: String
    /// A JSON array of clauses; blank: none.
    var clauses: String

    /// How issues name the fields their pointers start with.
    static let fields = ["name": "Name", "description": "Description", "users": "Users", "clauses": "Clauses"]

    init(name: String = "", description: String = "", users: String = "", clauses: String = "") {
        self.name = name
        self.description = description
        self.users = users
        self.clauses = clauses
    }

    /// The draft of a stored segment: its users in the order the store keeps them.
    init(_ segment: Segment) {
        name = segment.name
        description = segment.description ?? ""
        users = segment.users.map(\.rawValue).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .joined(separator: "\n")
        clauses =
            segment.clauses.isEmpty
            ? "" : JSONWriter(style: .pretty(indent: 2)).string(of: .array(segment.clauses.map(\.jsonValue)))
    }

    /// The draft a form sent for the segment `name` (a textarea sends line breaks as CRLF).
    init(_ form: SegmentForm, name: String) {
        self.name = name
        description = form.description ?? ""
        users = (form.users ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        clauses = (form.clauses ?? "").replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// The segment the fields describe, checked as the API checks one, or every problem placed
    /// in its field: a clause's line and column in the clauses, a user's line in the users.
    func segment() throws(ConfigsRefused) -> Segment {
        // Blank lines are skipped, as `flagpole segment set --users-file` skips them.
        let listed = users.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap {
            index, line -> (line: Int, id: String)? in
            line.isEmpty ? nil : (index + 1, String(line))
        }
        let clauseBytes = Array((clauses.allSatisfy(\.isWhitespace) ? "[]" : clauses).utf8)
        do {
            _ = try JSONParser.parse(clauseBytes)
        } catch {
            throw ConfigsRefused([
                ConfigIssue(
                    .error, config: name, pointer: .root.appending("clauses"),
                    location: SourceLocator(clauseBytes).location(of: error.offset), message: error.message,
                    fix: error.fix)
            ])
        }
        // The clauses as typed come first, so the decoder's places in them are theirs but for the
        // prefix's columns on their first line.
        let prefix = Array(#"{"clauses":"#.utf8)
        var rest: JSONObject = ["name": .string(name)]
        if !description.isEmpty { rest.append("description", .string(description)) }
        rest.append("users", .array(listed.map { .string($0.id) }))
        let bytes =
            prefix + clauseBytes + [UInt8(ascii: ",")]
            + JSONWriter(style: .compact).bytes(of: .object(rest)).dropFirst()
        do {
            return try TargetingDecoder.decodeSegment(bytes).segment
        } catch {
            throw ConfigsRefused(
                error.issues.map { issue in
                    var issue = issue
                    let pointer = issue.pointer.description
                    if pointer == "/clauses" || pointer.hasPrefix("/clauses/") {
                        if var location = issue.location, location.line == 1 {
                            location.column -= prefix.count
                            issue.location = location
                        }
                    } else if pointer.hasPrefix("/users/"), let index = Int(pointer.dropFirst("/users/".count)),
                        listed.indices.contains(index)
                    {
                        issue.location = SourceLocation(line: listed[index].line, column: 1)
                        issue.pointer = .root.appending("users")
                    } else {
                        issue.location = nil
                    }
                    return issue
                })
        }
    }
}

/// The segment editor's form.
struct SegmentForm: DashboardForm {
    var csrf: String
    /// The revision the page showed: planning and applying are refused if another came first.
    var revision: Int
    /// A new segment's; an existing one's is in the path.
    var name: String?
    var description: String?
    var users: String?
    var clauses: String?
    var action: String?
    var reason: String?
}

/// A rule that names a segment.
struct SegmentUse: Sendable {
    var feature: String
    var rule: String
    var url: String
}

struct SegmentsPage: Sendable {
    struct Row: Sendable {
        var name: String
        var url: String
        var segmentDescription: String?
        /// How many users it lists.
        var users: String
        var clauses: String
        var uses: [SegmentUse]
        var hasUses: Bool
    }

    var chrome: Chrome
    var path: String
    var revision: Int?
    var canEdit: Bool
    var newSegmentURL: String
    var rows: [Row]
    var hasRows: Bool
}

struct SegmentPage: Sendable {
    /// The segment as stored, beside the editor (which may hold a refused or conflicting input).
    /// Its names differ from the page's: a `nil` field would make the template find the page's.
    struct Saved: Sendable {
        var savedDescription: String?
        var userCount: String
        var shownUsers: [String]
        var hasUsers: Bool
        /// "and 1 234 more".
        var moreUsers: String?
        var savedClauses: String

        init(_ segment: Segment) {
            savedDescription = segment.description
            let users = segment.users.map(\.rawValue).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            userCount = users.count.grouped
            shownUsers = Array(users.prefix(Dashboard.shownSegmentUsers))
            hasUsers = !users.isEmpty
            moreUsers = users.count > shownUsers.count ? "and \((users.count - shownUsers.count).grouped) more" : nil
            savedClauses = TargetingText.clauses(segment.clauses, none: "none: only the listed users are members")
        }
    }

    /// The confirmation of a delete.

    var chrome: Chrome
    var path: String
    var name: String
    /// Where the editor posts: the segment's page, or the new segment's.
    var url: String
    var segmentsURL: String
    var isNew: Bool
    var revision: Int
    var canEdit: Bool
    var csrf: String
    var error: String?
    var issues: TargetingIssueList
    var saved: Saved?
    var uses: [SegmentUse]
    var hasUses: Bool
    var draftDescription: String
    var draftUsers: String
    var draftClauses: String
    var segmentPlan: TargetingPlanView?
    var reason: ReasonField
    var deletion: DeletionConfirmation?
}
