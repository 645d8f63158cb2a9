import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// One feature: its state, its tags and the configs that follow it, the bias editor with its
/// plan, its targeting rules with theirs, roll-out, the distribution of its users over time and
/// its recent assignment events.
extension Dashboard {
    /// Columns of the distribution chart.
    static let chartSamples = 12
    /// Events listed under a feature.
    static let recentEvents = 20

    func registerFeature(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        let feature = "tenants/:tenant/:env/features/:feature"

        reader.get(RouterPath(feature), use: featurePage)
        editor.post(RouterPath(feature + "/biases"), use: setBiases)
        editor.post(RouterPath(feature + "/rules"), use: setRules)
        editor.post(RouterPath(feature + "/rollout"), use: rollOut)
        editor.post(RouterPath(feature + "/tags"), use: setTags)
        editor.post(RouterPath(feature + "/description"), use: setDescription)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/features/{feature}
    @Sendable func featurePage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        var page = try await featurePage(try context.feature(), in: context)
        page.chrome.notice = Notice(request)?.text
        return .html(templates.render(page, as: "feature"))
    }

    /// POST …/biases: `action=preview` shows what the new biases would move, or why the app
    /// would not apply them; `apply` writes them, unless they differ from the previewed ones or
    /// another revision came first since the preview.
    @Sendable func setBiases(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(BiasForm.self, of: request, session: session)
        let name = try context.feature()
        let isApplying = form.action == "apply"
        var edit = PendingEdit(biases: form.biases, isForced: form.isForced, reason: form.reason)
        do {
            if isApplying && form.planned != form.previewed {
                throw APIError.invalid(
                    "These biases are not the ones the plan shown was made for: nothing was written. Preview them, read the plan, then apply."
                )
            }
            let biases = try form.biases.enumerated().map { index, text in
                guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
                    throw APIError.invalid(
                        "Bias \(index + 1), \"\(text)\", is not a number. Write a percentage such as 25 or 12.5.")
                }
                return value
            }
            let write = { (isApplying: Bool) in
                try await self.store.catalog.setBiases(
                    biases, of: name, in: path,
                    options: self.editOptions(form.revision, isApplying, form.isForced, reason: form.reason, session))
            }
            do {
                let outcome = try await write(isApplying)
                if isApplying {
                    return try await applied(outcome, of: path, back: EnvironmentURLs(path).feature(name))
                }
                edit.biasPlan = outcome
            } catch DocumentError.reasonRequired {
                // The plan and Apply stay; the Reason field says what it needs.
                edit.missingReason = ReasonField.missing(in: path)
                edit.biasPlan = try await write(false)
            }
        } catch DocumentError.biasesIgnored(_, let diagnostics) {
            // Shown where the plan would be, so the refusal replaces it as the numbers are typed.
            edit.biasRefusal = diagnostics
        } catch {
            edit.error = try Self.userError(error)
        }
        return try await featureResponse(name, in: context, edit: edit)
    }

    /// POST …/rules: `action=plan` is a dry run saying who the rules would move; `apply`
    /// writes the planned text. Both are refused if another revision came after the form's,
    /// so what is applied is what was planned, on what it was planned on.
    @Sendable func setRules(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(RulesForm.self, of: request, session: session)
        let name = try context.feature()
        let isApplying = form.action == "apply"
        // The builder's rule joins the current rules as JSON: the plan, the refusal and Apply
        // are those of the text, which the advanced view shows.
        let draft = form.draft
        let text: String
        if let draft {
            text = draft.text(after: try await store.catalog.targeting(in: path).featureRules[name] ?? [])
        } else {
            // A textarea sends its line breaks as CRLF: kept as LF, the text plans and applies alike.
            text = (form.rules ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        }
        var edit = PendingEdit(
            reason: form.reason, rules: RulesEdit(text: text, revision: form.revision, draft: draft))
        do {
            if let draft {
                let feature = try await store.catalog.feature(name, in: path).feature
                let issues = draft.issues(variations: feature.effectiveVariations)
                if !issues.isEmpty { throw ConfigsRefused(issues) }
            }
            let rules = try TargetingDecoder.decodeRules(Array(text.utf8)).rules
            let write = { (isApplying: Bool) in
                try await self.store.catalog.setRules(
                    rules, ofFeature: name, in: path,
                    options: EditOptions(
                        isDryRun: !isApplying, message: ReasonField.message(form.reason),
                        actor: session.identity.actor, expectedRevision: form.revision))
            }
            let outcome: ConfigsOutcome
            do {
                outcome = try await write(isApplying)
            } catch DocumentError.reasonRequired {
                // The plan and Apply stay; the Reason field says what it needs.
                edit.missingReason = ReasonField.missing(in: path)
                outcome = try await write(false)
            }
            if outcome.isApplied {
                return .seeOther(Notice(outcome).appended(to: EnvironmentURLs(path).feature(name)))
            }
            edit.rules?.plan = TargetingPlanView(outcome, urls: EnvironmentURLs(path), subject: "these rules")
        } catch let refused as ConfigsRefused {
            edit.refuseRules(refused.issues)
        } catch TargetingError.refused(_, let issues) {
            edit.refuseRules(issues)
        } catch {
            var pageError = try Self.userError(error)
            if pageError.status == .conflict {
                // The rules shown are now the current ones; the text stays, for the current revision.
                pageError.message +=
                    " The rules listed are the current ones and your text is kept: plan it again to see what it would do now."
                edit.rules?.revision = nil
            }
            edit.error = pageError
        }
        return try await featureResponse(name, in: context, edit: edit)
    }

    /// POST …/rollout: `action=preview` or `apply`, as for biases.
    @Sendable func rollOut(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(RolloutForm.self, of: request, session: session)
        let name = try context.feature()
        var edit = PendingEdit(reason: form.reason, winner: form.variation)
        let write = { (isApplying: Bool) in
            try await self.store.catalog.rollOut(
                name, to: form.variation, in: path,
                options: self.editOptions(form.revision, isApplying, false, reason: form.reason, session))
        }
        do {
            let outcome = try await write(form.action == "apply")
            if form.action == "apply" {
                return try await applied(outcome, of: path, back: EnvironmentURLs(path).feature(name))
            }
            edit.rolloutPlan = outcome
        } catch DocumentError.reasonRequired {
            // The plan and Roll out stay; the Reason field says what it needs.
            edit.missingReason = ReasonField.missing(in: path)
            edit.rolloutPlan = try await write(false)
        } catch {
            edit.error = try Self.userError(error)
        }
        return try await featureResponse(name, in: context, edit: edit)
    }

    /// POST …/description: sets the description the app shows in its debug screen (blank
    /// removes it), unless another revision came after the page.
    @Sendable func setDescription(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(DescriptionForm.self, of: request, session: session)
        let name = try context.feature()
        var edit = PendingEdit(reason: form.reason, description: form.description)
        do {
            let outcome = try await store.catalog.setDescription(
                form.description, of: name, in: path,
                options: editOptions(form.revision, true, false, reason: form.reason, session))
            return try await applied(outcome, of: path, back: EnvironmentURLs(path).feature(name))
        } catch {
            edit.error = try Self.userError(error)
        }
        return try await featureResponse(name, in: context, edit: edit)
    }

    /// POST …/tags: sets the tags the store gives the feature (comma-separated; empty removes
    /// them), unless another revision came after the page.
    @Sendable func setTags(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(TagsForm.self, of: request, session: session)
        let name = try context.feature()
        var edit = PendingEdit(reason: form.reason, tags: form.tags)
        do {
            let outcome = try await store.catalog.setTags(
                ConfigDraft.tags(form.tags), ofFeature: name, in: path,
                options: editOptions(form.revision, true, false, reason: form.reason, session))
            return .seeOther(Notice(outcome).appended(to: EnvironmentURLs(path).feature(name)))
        } catch {
            edit.error = try Self.userError(error)
        }
        return try await featureResponse(name, in: context, edit: edit)
    }

    private func editOptions(
        _ revision: Int?, _ isApplying: Bool, _ isForced: Bool, reason: String?, _ session: DashboardSession
    ) -> EditOptions {
        EditOptions(
            isDryRun: !isApplying, isForced: isForced, message: ReasonField.message(reason),
            actor: session.identity.actor, expectedRevision: isApplying ? revision : nil)
    }

    /// After an applied edit: delivery serves it at once, and the browser goes back to `url`.
    func applied(_ outcome: EditOutcome, of path: EnvironmentPath, back url: String) async throws -> Response {
        return .seeOther(Notice(outcome).appended(to: url))
    }

    /// The message and status of an error the user can fix on the page (a stale revision,
    /// biases the app would ignore, an unknown variation, a segment rules still name); anything
    /// else goes to the error page.
    static func userError(_ error: any Error) throws -> PageError {
        // Targeting refusals, as the API answers them (ErrorMiddleware).
        switch error {
        case TargetingError.segmentInUse: return PageError(status: .conflict, message: "\(error)")
        case TargetingError.refused: return PageError(status: .unprocessableContent, message: "\(error)")
        case TargetingError.segmentNotFound: return PageError(status: .notFound, message: "\(error)")
        default: break
        }
        let apiError = APIError(error)
        guard apiError.status == .conflict || apiError.status == .unprocessableContent else { throw error }
        return PageError(status: apiError.status, message: apiError.message)
    }

    func featureResponse(
        _ name: String, in context: DashboardEnvironmentContext<some RequiredRole>, edit: PendingEdit
    ) async throws -> Response {
        let page = try await featurePage(name, in: context, edit: edit)
        let status =
            edit.error?.status ?? (edit.biasRefusal == nil && edit.missingReason == nil ? .ok : .unprocessableContent)
        return .html(templates.render(page, as: "feature"), status: status)
    }

    private func featurePage(
        _ name: String, in context: DashboardEnvironmentContext<some RequiredRole>, edit: PendingEdit = PendingEdit()
    ) async throws -> FeaturePage {
        let (path, session) = (context.path, context.session)
        let detail = try await store.catalog.feature(name, in: path)
        let feature = detail.feature
        let urls = EnvironmentURLs(path)
        let current = try await currentRevision(of: path)
        let warnings =
            current.map { DocumentDecoder.decode($0.document).diagnostics.filter { $0.feature == name } } ?? []
        let configs = try await store.catalog.configs(in: path).document
        var card = FeatureCard(feature, url: urls.feature(name), warnings: warnings)
        card.tags = TagLink.links(configs.tags(of: feature), to: urls.overview, current: nil)
        // Only the tags the store gives can be edited here; those of features.json stay as written.
        let storeTags = configs.featureTags[feature.name] ?? []
        let fileTags = configs.tags(of: feature).filter { !storeTags.contains($0) }
        let followers = configs.configs.filter { config in
            config.follows.map { Feature.nameKey($0) == Feature.nameKey(feature.name) } ?? false
        }
        let chrome = try await chrome(context, at: .overview, same: { $0.feature(name) })
        let isReasonRequired = chrome.environment?.requiresReason ?? false
        var page = FeaturePage(
            chrome: chrome,
            card: card, revision: detail.revision, recordedUsers: detail.recordedUsers.grouped, salt: detail.salt,
            canEdit: context.canEdit, csrf: session.csrfToken,
            error: edit.error?.message, tagsText: edit.tags ?? storeTags.joined(separator: ", "),
            tagsReason: ReasonField(
                id: "tags-reason", text: edit.tags == nil ? nil : edit.reason, isRequired: isReasonRequired),
            descriptionText: edit.description ?? feature.description ?? "",
            descriptionReason: ReasonField(
                id: "description-reason", text: edit.description == nil ? nil : edit.reason,
                isRequired: isReasonRequired),
            fileTags: fileTags.isEmpty ? nil : fileTags.joined(separator: ", "),
            followers: followers.map { FeaturePage.Link(name: $0.name, url: urls.config($0.name)) },
            hasFollowers: !followers.isEmpty)
        if feature.isBucketed {
            let values = edit.biases ?? feature.editableBiases
            page.biases = FeaturePage.BiasEditor(
                inputs: zip(feature.effectiveVariations, values).map {
                    FeaturePage.BiasInput(variation: $0, value: $1)
                },
                isForced: edit.isForced,
                reason: ReasonField(
                    id: "bias-reason", text: edit.reason, isRequired: isReasonRequired,
                    missingReason: edit.biasPlan == nil ? nil : edit.missingReason),
                plan: edit.biasPlan.map(PlanView.init),
                planned: edit.biasPlan == nil ? nil : BiasForm.planned(values, isForced: edit.isForced),
                refusal: edit.biasRefusal.map { DiagnosticList($0) })
        }
        // A test rolled out into a plain flag keeps its results: the evidence of the decision.
        if !feature.isBucketed, try await store.experiments.hasResults(of: name, in: path) {
            page.finalResultsURL = urls.feature(name) + "/results"
        }
        let ramp = try await store.rollouts.activeRamp(of: name, in: path)
        if let ramp, ramp.state == .running {
            page.rampNote =
                "Applying this pauses ramp \(ramp.id) at its next step: a ramp stops when someone else changes its test. Resume it from its page once the change is what you want."
        }
        if feature.kind.isTest {
            page.rollout = FeaturePage.RolloutEditor(
                choices: feature.effectiveVariations.map { Choice(name: $0, value: $0, isSelected: $0 == edit.winner) },
                reason: ReasonField(
                    id: "rollout-reason", text: edit.reason, isRequired: isReasonRequired,
                    missingReason: edit.rolloutPlan == nil ? nil : edit.missingReason),
                plan: edit.rolloutPlan.map(PlanView.init),
                rampState: ramp.map { "Ramp \($0.id) is \($0.state.rawValue)." },
                ending: FeaturePage.RolloutEditor.ending(of: feature))
        }
        if feature.isBucketed {
            page.targeting = try await targetingSection(
                of: feature, in: path, revision: detail.revision, edit: edit.rules,
                reason: ReasonField(
                    id: "rules-reason", text: edit.reason, isRequired: isReasonRequired,
                    missingReason: edit.rules?.plan == nil ? nil : edit.missingReason))
        }
        page.toggle = edit.toggle
        page.history = FeatureHistoryView(try await store.catalog.history(of: name, in: path), of: feature, urls: urls)
        page.timeline = AssignmentChart(
            try await store.assignments.assignmentTimeline(of: name, in: path, samples: Self.chartSamples))
        page.events = try await store.assignments.assignmentEvents(
            in: path, matching: AssignmentEventQuery(feature: name, limit: Self.recentEvents)
        )
        .map { EventRow($0, urls: urls) }
        page.hasEvents = !page.events.isEmpty
        return page
    }

    /// The feature's rules in words and, for editors, the rule builder and the JSON editor (its
    /// advanced view) with the plan of what was sent.
    private func targetingSection(
        of feature: Feature, in path: EnvironmentPath, revision: Int, edit: RulesEdit?, reason: ReasonField
    ) async throws -> FeaturePage.Targeting {
        let rules = try await store.catalog.targeting(in: path).featureRules[feature.name] ?? []
        let writer = JSONWriter(style: .pretty(indent: 2))
        let text = edit?.text ?? writer.string(of: ["rules": .array(rules.map(\.jsonValue))])
        let rows = rules.enumerated().map { index, rule in
            var row = RuleRow(rule, position: index + 1)
            var others = rules
            others.remove(at: index)
            row.removalText = writer.string(of: ["rules": .array(others.map(\.jsonValue))])
            return row
        }
        let draft = edit?.draft
        return FeaturePage.Targeting(
            rules: rows, hasRules: !rows.isEmpty, isDisabled: !feature.isEnabled,
            segmentsURL: EnvironmentURLs(path).segments, rulesText: text, rulesRevision: edit?.revision ?? revision,
            rulesIssues: TargetingIssueList(edit?.issues ?? [], fields: draft == nil ? [:] : RuleDraft.fieldLabels),
            rulesPlan: edit?.plan, rulesReason: reason,
            builder: RuleBuilder(
                draft: draft, variations: feature.effectiveVariations,
                attributeNames: try await store.catalog.attributeNames(in: path)),
            isJSONOpen: edit != nil && draft == nil)
    }
}

/// An error shown on the page it came from, with the status it answers.
struct PageError: Sendable {
    var status: HTTPResponse.Status
    var message: String
}

/// What a feature page shows besides the feature: the user's pending input and its plan.
struct PendingEdit: Sendable {
    var biases: [String]?
    var isForced = false
    /// The reason typed for the change, kept while it is previewed.
    var reason: String?
    /// Why applying was refused for want of a reason: said beside the submitted form's field.
    var missingReason: String?
    var biasPlan: EditOutcome?
    /// Why the app would not apply the biases typed (W200–W202): shown in place of their plan.
    var biasRefusal: [Diagnostic]?
    var winner: String?
    var rolloutPlan: EditOutcome?
    /// The tags as typed, comma-separated.
    var tags: String?
    /// The description as typed.
    var description: String?
    /// Turning the feature on or off, to confirm.
    var toggle: ToggleConfirmation?
    var rules: RulesEdit?
    var error: PageError?

    /// Rules the decoder or the store refused: listed in their section, nothing written.
    mutating func refuseRules(_ issues: [ConfigIssue]) {
        rules?.issues = issues
        error = PageError(
            status: .unprocessableContent,
            message:
                "The rules were refused: nothing was written. What is wrong, and where, is listed under Targeting rules."
        )
    }
}

/// The rules as typed in the editor, with their plan or their issues.
struct RulesEdit: Sendable {
    var text: String
    /// The revision the text was planned on: the page's, unless it came from a stale page (then
    /// `nil`: the current one, so planning again is a choice made knowing that).
    var revision: Int?
    var plan: TargetingPlanView?
    var issues: [ConfigIssue] = []
    /// The builder's fields, when the rules came from them.
    var draft: RuleDraft?
}

struct BiasForm: DashboardForm {
    var csrf: String
    var biases: [String]
    var action: String?
    /// The revision the page showed: applying is refused if another came first.
    var revision: Int?
    var force: Bool?
    /// The biases (and force) the plan shown was made for: applying others is refused.
    var planned: String?
    var reason: String?

    var isForced: Bool { force ?? false }
    var previewed: String { Self.planned(biases, isForced: isForced) }

    /// What a plan was made for, as its Apply button carries it.
    static func planned(_ biases: [String], isForced: Bool) -> String {
        biases.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") + (isForced ? " forced" : "")
    }
}

struct DescriptionForm: DashboardForm {
    var csrf: String
    var description: String
    var revision: Int?
    var reason: String?
}

struct TagsForm: DashboardForm {
    var csrf: String
    /// Comma-separated.
    var tags: String
    var revision: Int?
    var reason: String?
}

struct RulesForm: DashboardForm {
    var csrf: String
    /// `{"rules": [...]}`; `nil` from the rule builder, which sends its fields.
    var rules: String?
    var attribute: String?
    var op: String?
    var values: String?
    var serve: String?
    var ruleID: String?
    var action: String?
    /// The revision the page showed: planning and applying are refused if another came first.
    var revision: Int
    var reason: String?

    /// The rule builder's rule, when the form is the builder's.
    var draft: RuleDraft? {
        guard rules == nil, let op, let serve else { return nil }
        return RuleDraft(
            attribute: attribute ?? "", op: op, values: values ?? "", variation: serve, id: ruleID ?? "")
    }
}

struct RolloutForm: DashboardForm {
    var csrf: String
    var variation: String
    var action: String?
    var revision: Int?
    var reason: String?
}

struct FeaturePage: Sendable {
    struct Link: Sendable {
        var name: String
        var url: String
    }

    struct BiasInput: Sendable {
        var variation: String
        var value: String
    }

    struct BiasEditor: Sendable {
        var inputs: [BiasInput]
        var isForced: Bool
        var reason: ReasonField
        var plan: PlanView?
        /// What the plan was made for; its Apply sends it back (`BiasForm.planned`).
        var planned: String?
        var refusal: DiagnosticList?
    }

    struct RolloutEditor: Sendable {
        var choices: [Choice]
        var reason: ReasonField
        var plan: PlanView?
        /// Where the test's running or paused ramp is, if it has one.
        var rampState: String?
        /// What ends with the roll-out of an on/off test, which becomes a plain flag.
        var ending: String?

        /// What rolling out `feature` ends beyond moving users: an on/off test becomes a plain
        /// flag, so its labels leave the file and its results stop changing.
        static func ending(of feature: Feature) -> String? {
            guard feature.kind == .onOffABTest else { return nil }
            let labels = (feature.labels ?? []).compactMap { $0 }
            let leaving =
                labels.isEmpty
                ? ""
                : " Its labels \(labels.map { "“\($0)”" }.joined(separator: " and ")) leave the file: analytics keyed on them will see them stop."
            return
                "The test ends: \(feature.name) becomes a plain flag, on or off for everyone.\(leaving) Its results stop changing and stay readable as its final results; a roll-back to this revision brings the test back."
        }
    }

    /// The rules of a test, and their editor. Names differ from the page's: a `nil` field
    /// would make the template find the page's.
    struct Targeting: Sendable {
        var rules: [RuleRow]
        var hasRules: Bool
        var isDisabled: Bool
        var segmentsURL: String
        /// The editor's text: the current rules, or what was typed.
        var rulesText: String
        /// The revision the editor (and the plan's Apply) carries.
        var rulesRevision: Int
        var rulesIssues: TargetingIssueList
        var rulesPlan: TargetingPlanView?
        var rulesReason: ReasonField
        var builder: RuleBuilder
        /// The JSON editor is open when what was sent came from it.
        var isJSONOpen: Bool
    }

    var chrome: Chrome
    var card: FeatureCard
    var revision: Int
    var recordedUsers: String
    var salt: String
    var canEdit: Bool
    var csrf: String
    var error: String?
    /// The tags the store gives the feature, comma-separated, for the tag editor.
    var tagsText: String
    var tagsReason: ReasonField
    /// The description, for its editor.
    var descriptionText: String
    var descriptionReason: ReasonField
    /// Tags written in features.json, which the editor can't remove.
    var fileTags: String?
    /// The configs that follow the feature.
    var followers: [Link]
    var hasFollowers: Bool
    var biases: BiasEditor?
    var rollout: RolloutEditor?
    var targeting: Targeting?
    var toggle: ToggleConfirmation?
    var history: FeatureHistoryView?
    /// What applying any change of the feature does to its running ramp, said in every plan.
    var rampNote: String?
    /// The results of the test a plain flag was, if it was one.
    var finalResultsURL: String?
    var timeline: AssignmentChart?
    var events: [EventRow] = []
    var hasEvents = false
}

/// What an edit would do, in sentences: the share of all users and the recorded users that
/// move between each pair of variations, what the app will make of the biases, and how many
/// FeatureFlags apps keep a group a rule placed them in.
struct PlanView: Sendable {
    var summary: String
    var moves: [String]
    var after: BiasBar?
    /// What the app will do with the biases other than what they state (applied when forced).
    var warnings: DiagnosticList
    /// Users a rule placed who move: their FeatureFlags apps keep the cached group.
    var cachedGroups: String?

    init(_ outcome: EditOutcome) {
        warnings = DiagnosticList(outcome.warnings)
        if outcome.isUnchanged {
            summary = "Nothing to change: revision \(outcome.revision) already has this content."
            moves = []
            return
        }
        let plans = outcome.plans
        moves = plans.flatMap { $0.moves.map(Self.sentence) }
        let share = plans.reduce(0) { $0 + $1.movingShare }
        let users = plans.reduce(0) { $0 + $1.movingUsers }
        let recorded = plans.reduce(0) { $0 + $1.recordedUsers }
        let placed = plans.reduce(0) { $0 + $1.movingPlacedByRules }
        summary =
            "\(Percent.format(share)) of all users change group; \(users.grouped) of \(recorded.grouped) recorded users move. Applying makes revision \(outcome.revision)."
        if placed > 0 {
            cachedGroups =
                "\(placed.grouped) of the users who move were placed by a rule: FeatureFlags apps that keep the point the rule gave them leave the rule's group."
        }
        after = plans.first.flatMap { BiasBar($0.after) }
    }

    /// One pair of a plan in words.
    static func sentence(_ move: RolloutPlan.Move) -> String {
        "\(Percent.format(move.share)) of users move from \(move.from) to \(move.to); \(move.recordedUsers.grouped) recorded user\(move.recordedUsers == 1 ? "" : "s") move\(move.recordedUsers == 1 ? "s" : "")."
    }
}

extension Int {
    /// With thin spaces between thousands, as the issue's examples write counts: `1 203`.
    var grouped: String {
        let digits = String(magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append("\u{202F}") }
            result.append(digit)
        }
        return (self < 0 ? "-" : "") + result
    }
}
