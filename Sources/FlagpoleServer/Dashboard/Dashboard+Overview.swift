import FlagpoleCore
import FlagpoleStore
import Hummingbird

/// An environment's features at a glance, filtered by tag, and the enabled switch.
extension Dashboard {
    func registerOverview(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        reader.get("tenants/:tenant/:env", use: overviewPage)
        editor.post("tenants/:tenant/:env/features/:feature/enabled", use: setEnabled)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}[?q=&tag=&kind=&state=&section=&rules=&sort=&view=]: every
    /// feature by section, with its kind, state, biases, labels, tags and warnings; those the
    /// filter (`FeatureFilter`) leaves out are hidden, for search as you type to bring back.
    @Sendable func overviewPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let filter = try FeatureFilter(query: request.uri.query ?? "")
        let current = try await currentRevision(of: path)
        let decoded = current.map { DocumentDecoder.decode($0.document) }
        let warnings = Dictionary(grouping: decoded?.diagnostics ?? [], by: \.feature)
        let urls = EnvironmentURLs(path)
        let configs = try await store.catalog.configs(in: path).document
        let ruleCounts = try await store.catalog.targeting(in: path).featureRules.reduce(into: [String: Int]()) {
            $0[Feature.nameKey($1.key), default: 0] += $1.value.count
        }
        // The audit wrote each name as it was then: look the changes up as features compare.
        let changes = try await store.catalog.lastChanges(in: path).reduce(into: [String: FeatureChange]()) {
            last, entry in
            let key = Feature.nameKey(entry.key)
            if (last[key]?.revision ?? .min) < entry.value.revision { last[key] = entry.value }
        }
        let features = decoded?.document?.features ?? []
        let rows = features.map { feature in
            let tags = configs.tags(of: feature)
            let facts = FeatureFacts(
                feature, tags: tags, ruleCount: ruleCounts[Feature.nameKey(feature.name)] ?? 0,
                lastChange: changes[Feature.nameKey(feature.name)])
            var card = FeatureCard(feature, url: urls.feature(feature.name), warnings: warnings[feature.name] ?? [])
            card.tags = TagLink.links(tags, to: urls.overview, current: filter.tag)
            return FeatureRow(card: card, facts: facts, isHidden: !filter.matches(facts))
        }
        let shown = rows.count { !$0.isHidden }
        let tags = TagLink.union(features.map(configs.tags(of:)))
        let tagLinks = TagLink.links(tags, to: urls.overview, current: filter.tag)
        let page = OverviewPage(
            chrome: try await chrome(context, at: .overview, notice: Notice(request)?.text),
            path: path.description, url: urls.overview, revision: current?.number, importURL: urls.importing,
            canEdit: context.canEdit, csrf: session.csrfToken,
            documentWarnings: DiagnosticList(warnings[nil] ?? []), tag: filter.tag, tags: tagLinks,
            hasTags: !tags.isEmpty, total: features.count, hasFeatures: !features.isEmpty,
            sections: OverviewPage.sections(rows, sortedBy: filter.sort),
            search: FeatureSearchForm(
                filter, tags: tags, sections: TagLink.union([rows.map(\.facts.section)]),
                actors: Set(rows.compactMap(\.actor)).sorted(), page: urls.overview),
            count: "\(shown) of \(features.count) feature\(features.count == 1 ? "" : "s")",
            emptyMessage: shown > 0 || features.isEmpty ? nil : filter.emptyMessage,
            layout: filter.view?.rawValue ?? "auto", showsCards: filter.view != .table,
            showsTable: filter.view == .table, viewLinks: CatalogViewLink.links(to: urls.overview, filter: filter),
            connections: ClientConnections(
                path, origin: ClientConnections.origin(of: request.head),
                isPrivate: try await store.access.deliveryState(of: path).settings.isPrivate,
                refusedEvents: try await store.outbound.refusedEventBatches(
                    of: path.tenant, since: clock.now.addingTimeInterval(-24 * 3600))[path.environment]))
        return .html(templates.render(page, as: "overview"))
    }

    /// POST /tenants/{tenant}/{env}/features/{feature}/enabled: turns a feature on or off,
    /// as a new revision. A switch changes the feature for everyone at once, so in every
    /// environment the feature's page confirms first, saying what changes (and asking the reason
    /// where the environment wants one); `action=apply` does it.
    @Sendable func setEnabled(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(EnabledForm.self, of: request, session: session)
        let name = try context.feature()
        let isConfirmed = form.action == "apply"
        let isReasonRequired = try await requiresReason(context)
        // What the confirmation says, from a dry run of the change.
        func confirming(_ edit: PendingEdit) async throws -> Response {
            let outcome = try await store.catalog.setEnabled(
                form.enabled, feature: name, in: path,
                options: EditOptions(isDryRun: true, actor: session.identity.actor))
            var edit = edit
            edit.toggle = ToggleConfirmation(
                try await store.catalog.feature(name, in: path).feature, enabling: form.enabled, outcome: outcome,
                back: form.back,
                reason: ReasonField(
                    id: "toggle-reason", text: form.reason, isRequired: isReasonRequired,
                    missingReason: edit.missingReason))
            return try await featureResponse(name, in: context, edit: edit)
        }
        if !isConfirmed {
            return try await confirming(PendingEdit(reason: form.reason))
        }
        do {
            let outcome = try await store.catalog.setEnabled(
                form.enabled, feature: name, in: path,
                options: EditOptions(message: ReasonField.message(form.reason), actor: session.identity.actor))
            let urls = EnvironmentURLs(path)
            return .seeOther(
                Notice(outcome).appended(to: form.back == "overview" ? urls.overview : urls.feature(name)))
        } catch DocumentError.reasonRequired {
            return try await confirming(PendingEdit(reason: form.reason, missingReason: ReasonField.missing(in: path)))
        } catch {
            return try await confirming(PendingEdit(reason: form.reason, error: try Self.userError(error)))
        }
    }

    /// The current revision, or `nil` before the first import.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    func currentRevision(of path: EnvironmentPath) async throws -> Revision? {
        do {
            return try await store.catalog.revision(of: path)
        } catch DocumentError.noRevision {
            return nil
        }
    }
}

struct EnabledForm: DashboardForm {
    var csrf: String
    var enabled: Bool
    /// `overview` to come back to the overview rather than the feature's page.
    var back: String?
    /// `preview` asks for the confirmation; `apply` confirms it (none: one click, where allowed).
    var action: String?
    var reason: String?
}

/// Turning a feature on or off, to confirm: what changes for apps, and the reason to give.
struct ToggleConfirmation: Sendable {
    var summary: String
    /// `true` or `false`, as the form sends it.
    var enabledValue: String
    var buttonLabel: String
    var back: String?
    var reason: ReasonField
    var canApply: Bool

    init(_ feature: Feature, enabling: Bool, outcome: EditOutcome, back: String?, reason: ReasonField) {
        enabledValue = enabling ? "true" : "false"
        self.back = back
        self.reason = reason
        canApply = !outcome.isUnchanged
        let name = feature.name
        buttonLabel = "\(enabling ? "Enable" : "Disable") \(name) as revision \(outcome.revision)"
        if outcome.isUnchanged {
            summary = "Nothing to change: \(name) is already \(enabling ? "enabled" : "disabled")."
        } else if enabling {
            summary =
                "Enabling \(name) makes revision \(outcome.revision): every app shows it on from its next fetch\(feature.isBucketed ? ", each user in their group" : "")."
        } else {
            summary =
                "Disabling \(name) makes revision \(outcome.revision): every app shows it off\(feature.isBucketed ? " (Disabled)" : "") from its next fetch\(feature.isBucketed ? "; its recorded users keep their groups for when it is enabled again" : "")."
        }
    }
}

struct OverviewPage: Sendable {
    struct Section: Sendable {
        var index: Int
        var name: String
        var features: [FeatureRow]
        /// Whether the filter leaves none of its features.
        var isHidden: Bool
    }

    var chrome: Chrome
    var path: String
    var url: String
    var revision: Int?
    var importURL: String
    var canEdit: Bool
    var csrf: String
    var documentWarnings: DiagnosticList
    /// The tag the list is filtered by.
    var tag: String?
    /// Every feature's tags, as filters.
    var tags: [TagLink]
    var hasTags: Bool
    var total: Int
    var hasFeatures: Bool
    var sections: [Section]
    var search: FeatureSearchForm
    /// "12 of 300 features", announced as it changes.
    var count: String
    /// Why nothing shows, when the filter leaves nothing.
    var emptyMessage: String?
    /// `cards`, `table`, or `auto` (cards, compact on phones).
    var layout: String
    var showsCards: Bool
    var showsTable: Bool
    var viewLinks: [CatalogViewLink]
    /// How each kind of client connects to the environment.
    var connections: ClientConnections

    /// `rows` grouped by section in the document's order, or as one list in the order asked.
    static func sections(_ rows: [FeatureRow], sortedBy sort: FeatureFilter.Sort) -> [Section] {
        switch sort {
        case .sections:
            var sections: [Section] = []
            for row in rows {
                if let index = sections.firstIndex(where: { $0.name == row.facts.section }) {
                    sections[index].features.append(row)
                    sections[index].isHidden = sections[index].isHidden && row.isHidden
                } else {
                    sections.append(
                        Section(index: sections.count, name: row.facts.section, features: [row], isHidden: row.isHidden)
                    )
                }
            }
            return sections
        case .name:
            return [
                Self.list(
                    "All features by name", rows.sorted { $0.facts.name.lowercased() < $1.facts.name.lowercased() })
            ]
        case .change:
            // Newest first; a stable sort keeps the document's order among the never changed.
            let sorted = rows.enumerated().sorted { a, b in
                let (left, right) = (
                    a.element.facts.lastChange?.revision ?? .min, b.element.facts.lastChange?.revision ?? .min
                )
                return left != right ? left > right : a.offset < b.offset
            }
            return [Self.list("All features, last changed first", sorted.map(\.element))]
        }
    }

    private static func list(_ name: String, _ rows: [FeatureRow]) -> Section {
        Section(index: 0, name: name, features: rows, isHidden: rows.allSatisfy(\.isHidden))
    }
}

/// One feature as the overview and the feature page show it.
struct FeatureCard: Sendable {
    var name: String
    var url: String
    var kind: String
    var isEnabled: Bool
    var description: String?
    var section: String?
    var bar: BiasBar?
    var labels: [String]
    var hasLabels: Bool
    /// Its tags, each a link to the features tagged so (`ConfigsDocument.tags(of:)`).
    var tags: [TagLink] = [] {
        didSet { hasTags = !tags.isEmpty }
    }
    var hasTags = false
    var warnings: DiagnosticList

    init(_ feature: Feature, url: String, warnings: [Diagnostic]) {
        name = feature.name
        self.url = url
        kind = feature.kind.description
        isEnabled = feature.isEnabled
        description = feature.description
        section = feature.section
        bar = BiasBar(feature)
        labels = (feature.labels ?? []).map { $0 ?? "null" }
        hasLabels = !labels.isEmpty
        self.warnings = DiagnosticList(warnings)
    }
}
