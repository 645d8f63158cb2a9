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

    /// GET /tenants/{tenant}/{env}[?tag=T]: every feature (or those tagged `T`) by section, with
    /// its kind, state, biases, labels, tags and warnings.
    @Sendable func overviewPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let current = try await currentRevision(of: path)
        let decoded = current.map { DocumentDecoder.decode($0.document) }
        let warnings = Dictionary(grouping: decoded?.diagnostics ?? [], by: \.feature)
        let urls = EnvironmentURLs(path)
        let configs = try await store.configs(in: path).document
        let tag = request.uri.queryParameters["tag"].flatMap { $0.isEmpty ? nil : String($0) }
        let features = decoded?.document?.features ?? []
        var sections: [OverviewPage.Section] = []
        for feature in features {
            let tags = configs.tags(of: feature)
            if let tag, !tags.contains(tag) { continue }
            var card = FeatureCard(feature, url: urls.feature(feature.name), warnings: warnings[feature.name] ?? [])
            card.tags = TagLink.links(tags, to: urls.overview, current: tag)
            let name = feature.section ?? "No section"
            if let index = sections.firstIndex(where: { $0.name == name }) {
                sections[index].features.append(card)
            } else {
                sections.append(OverviewPage.Section(index: sections.count, name: name, features: [card]))
            }
        }
        let tags = TagLink.links(
            TagLink.union(features.map(configs.tags(of:))), to: urls.overview, current: tag)
        let page = OverviewPage(
            chrome: try await chrome(context, at: .overview, notice: Notice(request)?.text),
            path: path.description, url: urls.overview, revision: current?.number, importURL: urls.importing,
            canEdit: context.canEdit, csrf: session.csrfToken,
            documentWarnings: DiagnosticList(warnings[nil] ?? []), tag: tag, tags: tags, hasTags: !tags.isEmpty,
            total: features.count, sections: sections,
            connections: ClientConnections(
                path, origin: ClientConnections.origin(of: request.head),
                isPrivate: try await store.deliveryState(of: path).settings.isPrivate))
        return .html(templates.render(page, as: "overview"))
    }

    /// POST /tenants/{tenant}/{env}/features/{feature}/enabled: turns a feature on or off,
    /// as a new revision.
    @Sendable func setEnabled(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(EnabledForm.self, of: request, session: session)
        let name = try context.feature()
        let outcome = try await store.setEnabled(
            form.enabled, feature: name, in: path, options: EditOptions(actor: session.identity.actor))
        let urls = EnvironmentURLs(path)
        return .seeOther(Notice(outcome).appended(to: form.back == "overview" ? urls.overview : urls.feature(name)))
    }

    /// The current revision, or `nil` before the first import.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    func currentRevision(of path: EnvironmentPath) async throws -> Revision? {
        do {
            return try await store.revision(of: path)
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
}

struct OverviewPage: Sendable {
    struct Section: Sendable {
        var index: Int
        var name: String
        var features: [FeatureCard]
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
    var sections: [Section]
    /// How each kind of client connects to the environment.
    var connections: ClientConnections
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
