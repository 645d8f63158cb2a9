import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// An environment's typed configs: the list, filtered by tag, and each config's typed editor.
/// Saving and deleting are the store operations `flagpole config set` and `delete` use, so each
/// change is a revision with its audit rows.
extension Dashboard {
    func registerConfigs(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        let config = "tenants/:tenant/:env/configs/:config"

        reader.get("tenants/:tenant/:env/configs", use: configsPage)
        editor.get("tenants/:tenant/:env/new-config", use: newConfig)
        reader.get(RouterPath(config), use: configPage)
        editor.post(RouterPath(config), use: saveConfig)
        editor.post(RouterPath(config + "/delete"), use: deleteConfig)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/configs[?q=&tag=&type=&follows=]: every config with its type,
    /// default, the feature it follows and its tags; those the filter (`ConfigFilter`) leaves out
    /// are hidden, for search as you type to bring back. The environment's tags as filters.
    @Sendable func configsPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let page = try await configsPage(
            context, filter: try ConfigFilter(query: request.uri.query ?? ""), notice: Notice(request)?.text)
        return .html(templates.render(page, as: "configs"))
    }

    /// GET /tenants/{tenant}/{env}/new-config?name=N&type=T: the create form's target. It
    /// writes nothing: it sends the browser to the new config's editor, or to the config of
    /// that name if there is one.
    @Sendable func newConfig(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        // Read as a form, not as query parameters: a GET form sends a space in the name as `+`.
        let query: NewConfigQuery
        do {
            query = try URLEncodedFormDecoder().decode(NewConfigQuery.self, from: request.uri.query ?? "")
        } catch {
            throw DashboardError.badForm(
                "The form could not be read (\(error)). Send it again from the configs page.")
        }
        let name = query.name ?? ""
        let type = query.type.flatMap(ConfigType.init(rawValue:))
        let urls = EnvironmentURLs(path)
        guard let type, !name.isEmpty, !name.utf8.contains(0) else {
            var page = try await configsPage(context, filter: ConfigFilter(), notice: nil)
            page.newName = name
            page.error =
                type == nil
                ? "Choose the new config's type: \(ConfigType.allCases.map(\.rawValue).joined(separator: ", "))."
                : "A config needs a name (without the character U+0000): the key apps look the value up by."
            return .html(templates.render(page, as: "configs"), status: .unprocessableContent)
        }
        if let existing = try await store.catalog.configs(in: path).document.config(named: name) {
            return .seeOther(Notice(.configExists).appended(to: urls.config(existing.name)))
        }
        return .seeOther(urls.newConfig(name, type: type))
    }

    /// GET /tenants/{tenant}/{env}/configs/{config}: the config and its typed editor;
    /// `?type=T` for a config not yet in the store is the editor that creates it.
    @Sendable func configPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let name = try context.decodedParameter("config")
        let snapshot = try await store.catalog.configs(in: path)
        let draft: ConfigDraft
        if let existing = snapshot.document.config(named: name) {
            draft = ConfigDraft(existing)
        } else if context.canEdit,
            let type = request.uri.queryParameters["type"].flatMap({ ConfigType(rawValue: String($0)) })
        {
            draft = ConfigDraft(new: name, type: type)
        } else {
            throw ConfigError.configNotFound(path, name: name, existing: snapshot.document.configs.map(\.name))
        }
        let page = try await configPage(
            draft, snapshot: snapshot, in: context, notice: Notice(request)?.text)
        return .html(templates.render(page, as: "config"))
    }

    /// POST /tenants/{tenant}/{env}/configs/{config}: saves the editor as the config (creating
    /// it when new), unless another revision came after the page. A refused value comes back
    /// with its issues beside the fields, as typed.
    @Sendable func saveConfig(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(ConfigForm.self, of: request, session: session)
        guard let type = ConfigType(rawValue: form.type) else {
            throw DashboardError.badForm("The form has no config type. Reload the page and send it again.")
        }
        let name = try context.decodedParameter("config")
        let snapshot = try await store.catalog.configs(in: path)
        let existing = snapshot.document.config(named: name)
        // The stored spelling: a name typed in another normalisation must not rename it.
        var draft = ConfigDraft(form, name: existing?.name ?? name, type: type)
        var failure = ConfigFailure()
        var plan: ConfigPlanView?
        if draft.isNew, let existing {
            // Made by someone else since the new config's page was loaded: saving again replaces it.
            draft.isNew = false
            failure.error = PageError(
                status: .conflict,
                message:
                    "A config named \"\(existing.name)\" was made since this page was loaded: nothing was written. What is saved now is shown; save again to replace it with yours."
            )
        } else {
            do {
                // The editor has no rules: the saved config keeps its own (its declaration
                // is the store's to keep).
                var config = try draft.config(beside: snapshot.features)
                config.rules = existing?.rules ?? []
                let isPreview = form.action == "preview"
                if !isPreview, let planned = form.planned, planned != ConfigPlanView.fingerprint(of: config) {
                    throw APIError.invalid(
                        "The config is not the one the plan shown was made for: nothing was written. Preview it, read the plan, then save."
                    )
                }
                let outcome = try await store.catalog.setConfig(
                    config, in: path,
                    options: EditOptions(
                        isDryRun: isPreview, isForced: form.force ?? false, message: ReasonField.message(form.reason),
                        actor: session.identity.actor, expectedRevision: form.revision))
                if !isPreview {
                    return .seeOther(Notice(outcome).appended(to: EnvironmentURLs(path).config(draft.name)))
                }
                plan = ConfigPlanView(config, replacing: existing, outcome: outcome)
            } catch let refused as ConfigsRefused {
                failure = ConfigFailure(issues: refused.issues, revision: form.revision)
            } catch ConfigError.refused(_, let issues) {
                failure = ConfigFailure(issues: issues, revision: form.revision)
            } catch {
                failure.error = try Self.userError(error)
            }
        }
        // After a conflict the page shows what is saved now and keeps the user's input; its
        // revision is the current one, so saving again is a choice made knowing that.
        let current = try await store.catalog.configs(in: path)
        var page = try await configPage(
            draft, snapshot: current, in: context, failure: failure)
        page.plan = plan
        page.reason.text = form.reason ?? ""
        return .html(templates.render(page, as: "config"), status: failure.status)
    }

    /// POST /tenants/{tenant}/{env}/configs/{config}/delete: `action=preview` asks for
    /// confirmation, saying what deleting does; `apply` deletes, unless a revision came first.
    @Sendable func deleteConfig(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(DeleteForm.self, of: request, session: session)
        let name = try context.decodedParameter("config")
        let isApplying = form.action == "apply"
        var failure = ConfigFailure()
        // The revision a deletion would make: the confirmation stays up when applying it is refused.
        var nextRevision: Int?
        do {
            let outcome = try await store.catalog.deleteConfig(
                named: name, in: path,
                options: EditOptions(
                    isDryRun: !isApplying, message: ReasonField.message(form.reason), actor: session.identity.actor,
                    expectedRevision: isApplying ? form.revision : nil))
            if isApplying {
                return .seeOther(Notice(outcome).appended(to: EnvironmentURLs(path).configs))
            }
            nextRevision = outcome.revision
        } catch {
            failure.error = try Self.userError(error)
            if isApplying, let revision = form.revision { nextRevision = revision + 1 }
        }
        let snapshot = try await store.catalog.configs(in: path)
        guard let config = snapshot.document.config(named: name) else {
            throw ConfigError.configNotFound(path, name: name, existing: snapshot.document.configs.map(\.name))
        }
        var page = try await configPage(
            ConfigDraft(config), snapshot: snapshot, in: context, failure: failure)
        page.deletion = nextRevision.map { DeletionConfirmation($0, reason: form.reason, chrome: page.chrome) }
        return .html(templates.render(page, as: "config"), status: failure.status)
    }

    private func configsPage(
        _ context: DashboardEnvironmentContext<some RequiredRole>, filter: ConfigFilter, notice: String?
    ) async throws -> ConfigsPage {
        let path = context.path
        let snapshot = try await store.catalog.configs(in: path)
        let urls = EnvironmentURLs(path)
        let tag = filter.tag
        let features = Set(snapshot.features.map { Feature.nameKey($0.name) })
        let rows = snapshot.document.configs.map { config in
            ConfigsPage.Row(
                name: config.name, url: urls.config(config.name), type: config.type.rawValue,
                defaultValue: config.defaultValue.json, description: config.description,
                follows: config.follows.map { feature in
                    ConfigsPage.Follows(
                        name: feature, url: urls.feature(feature),
                        isPresent: features.contains(Feature.nameKey(feature)),
                        values: "\(config.values.count) value\(config.values.count == 1 ? "" : "s")")
                },
                tags: TagLink.links(config.tags, to: urls.configs, current: tag),
                tagsJSON: JSONWriter(style: .compact).string(of: .array(config.tags.map(JSONValue.string))),
                followsFilter: ConfigFilter.follows(config).rawValue, isHidden: !filter.matches(config))
        }
        let allTags = TagLink.union(snapshot.document.configs.map(\.tags))
        let tags = TagLink.links(allTags, to: urls.configs, current: tag)
        let total = snapshot.document.configs.count
        let shown = rows.count { !$0.isHidden }
        return ConfigsPage(
            chrome: try await chrome(context, at: .configs, notice: notice), path: path.description,
            url: urls.configs, revision: snapshot.revision, canEdit: context.canEdit,
            newConfigURL: urls.newConfigForm,
            types: ConfigType.allCases.map { Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0 == .string) },
            tag: tag, tags: tags, hasTags: !tags.isEmpty, rows: rows, hasRows: !rows.isEmpty,
            total: total, search: ConfigSearchForm(filter, tags: allTags),
            count: "\(shown) of \(total) config\(total == 1 ? "" : "s")",
            emptyMessage: shown == 0 && total > 0 ? filter.emptyMessage : nil)
    }

    private func configPage(
        _ draft: ConfigDraft, snapshot: ConfigsSnapshot, in context: DashboardEnvironmentContext<some RequiredRole>,
        notice: String? = nil, failure: ConfigFailure = ConfigFailure()
    ) async throws -> ConfigPage {
        let (path, session) = (context.path, context.session)
        let urls = EnvironmentURLs(path)
        let issues = ConfigIssueList(failure.issues)
        let feature = snapshot.features.first { Feature.nameKey($0.name) == Feature.nameKey(draft.follows) }
        // A row per variation of the feature the config follows; while it follows the feature
        // its rows were drawn for, also any value for a variation the feature no longer has
        // (the store refuses those until they are blanked).
        var variations = feature?.configVariations ?? []
        if draft.follows == draft.followed {
            for row in draft.rows where !variations.contains(row.variation) { variations.append(row.variation) }
        }
        let rows = variations.enumerated().map { index, variation in
            ValueInput.row(
                index, variation: variation, text: draft.rows.first { $0.variation == variation }?.text ?? "",
                of: draft.type,
                note: feature.flatMap {
                    $0.configVariations.contains(variation) ? nil : "not a variation of \($0.name): leave it blank"
                },
                issue: issues.message(at: .root.appending("values").appending(variation)))
        }
        var follows = [Choice(name: "(none: everyone gets the default)", value: "", isSelected: draft.follows.isEmpty)]
        follows += snapshot.features.map {
            Choice(
                name: $0.name, value: $0.name, isSelected: Feature.nameKey($0.name) == Feature.nameKey(draft.follows))
        }
        if !draft.follows.isEmpty, !follows.contains(where: \.isSelected) {
            follows.append(
                Choice(name: "\(draft.follows) (not in this environment)", value: draft.follows, isSelected: true))
        }
        let saved = snapshot.document.config(named: draft.name).map { config in
            ConfigPage.Saved(
                savedDefault: config.defaultValue.json, savedDescription: config.description,
                savedTags: TagLink.links(config.tags, to: urls.configs, current: nil),
                hasSavedTags: !config.tags.isEmpty,
                savedFollows: config.follows, savedFollowsURL: config.follows.map(urls.feature) ?? "",
                isFollowing: config.follows.map { name in
                    snapshot.features.contains { Feature.nameKey($0.name) == Feature.nameKey(name) }
                } ?? false,
                savedValues: config.values.map { ConfigPage.Value(variation: $0.variation, value: $0.value.json) },
                savedDeclaration: config.declaration.map {
                    "\($0.type) in the app's featureConfigs.json, default \($0.defaultValue.json)"
                        + ($0.isWithdrawn ? " (no longer declared: still served)" : "")
                },
                savedWarnings: snapshot.warnings.filter { $0.config == config.name }.map {
                    ConfigPage.Warning(message: $0.message, pointer: $0.pointer.description, fix: $0.fix)
                })
        }
        let chrome = try await chrome(context, at: .configs, notice: notice, same: { $0.config(draft.name) })
        var page = ConfigPage(
            chrome: chrome, path: path.description,
            name: draft.name, url: urls.config(draft.name), configsURL: urls.configs, type: draft.type.rawValue,
            isNew: draft.isNew, revision: failure.revision ?? snapshot.revision ?? 0,
            canEdit: context.canEdit, csrf: session.csrfToken,
            error: failure.error?.message, issues: issues, saved: saved,
            defaultInput: .defaultValue(
                draft.defaultText, of: draft.type, issue: issues.message(at: .root.appending("default"))),
            description: draft.description, descriptionIssue: issues.message(at: .root.appending("description")),
            tags: draft.tags, tagsIssue: issues.message(at: .root.appending("tags")), follows: follows,
            followed: draft.follows, followsIssue: issues.message(at: .root.appending("follows")), rows: rows,
            hasRows: !rows.isEmpty, isDeclared: snapshot.document.config(named: draft.name)?.declaration != nil)
        page.reason.isRequired = chrome.environment?.requiresReason ?? false
        return page
    }
}

/// Why a config form came back: the issues of its values, or an error such as a conflict.
struct ConfigFailure: Sendable {
    var issues: [ConfigIssue] = []
    var error: PageError?
    /// The revision the form was for: kept when only its values were wrong.
    var revision: Int?

    var status: HTTPResponse.Status {
        error?.status ?? (issues.isEmpty ? .ok : .unprocessableContent)
    }
}

/// The create form's fields, sent with GET: it writes nothing.
struct NewConfigQuery: Decodable {
    var name: String?
    var type: String?
}

/// What deleting a config or a segment makes, to confirm, with the reason it is given.
struct DeletionConfirmation: Sendable {
    var nextRevision: Int
    var reason: ReasonField

    init(_ nextRevision: Int, reason: String?, chrome: Chrome) {
        self.nextRevision = nextRevision
        self.reason = ReasonField(
            id: "delete-reason", text: reason, isRequired: chrome.environment?.requiresReason ?? false)
    }
}

/// The confirmation of a deletion (a config, a segment).
struct DeleteForm: DashboardForm {
    var csrf: String
    var action: String?
    /// The revision the confirmation showed.
    var revision: Int?
    var reason: String?
}

struct ConfigsPage: Sendable {
    struct Follows: Sendable {
        var name: String
        var url: String
        /// Whether the feature is in the environment: a config whose feature is gone gives
        /// everyone its default.
        var isPresent: Bool
        /// "2 values".
        var values: String
    }

    struct Row: Sendable {
        var name: String
        var url: String
        var type: String
        var defaultValue: String
        var description: String?
        var follows: Follows?
        var tags: [TagLink]
        /// The tags as a JSON array, for `data-tags`.
        var tagsJSON: String
        /// `yes` or `no`, for `data-follows`.
        var followsFilter: String
        var isHidden: Bool
    }

    var chrome: Chrome
    var path: String
    var url: String
    var revision: Int?
    var canEdit: Bool
    var newConfigURL: String
    var types: [Choice]
    var tag: String?
    var tags: [TagLink]
    var hasTags: Bool
    var rows: [Row]
    /// Whether there is any config (those the filter leaves out are rows too, hidden).
    var hasRows: Bool
    var total: Int
    var search: ConfigSearchForm
    /// "3 of 12 configs", announced as it changes.
    var count: String
    /// Why no row shows, when the filter leaves none.
    var emptyMessage: String?
    var newName = ""
    var error: String?
}

struct ConfigPage: Sendable {
    /// The config as stored, beside the editor (which may hold a refused or conflicting input).
    /// Its names differ from the page's: a `nil` field would make the template find the page's.
    struct Saved: Sendable {
        var savedDefault: String
        var savedDescription: String?
        var savedTags: [TagLink]
        var hasSavedTags: Bool
        var savedFollows: String?
        var savedFollowsURL: String
        var isFollowing: Bool
        var savedValues: [Value]
        /// What the app's declaration file says of it.
        var savedDeclaration: String?
        /// What the stored config holds that no app can take (an earlier version's).
        var savedWarnings: [Warning]
    }

    struct Warning: Sendable {
        var message: String
        var pointer: String
        var fix: String
    }

    struct Value: Sendable {
        var variation: String
        var value: String
    }

    var chrome: Chrome
    var path: String
    var name: String
    var url: String
    var configsURL: String
    var type: String
    var isNew: Bool
    var revision: Int
    var canEdit: Bool
    var csrf: String
    var error: String?
    var issues: ConfigIssueList
    var saved: Saved?
    var defaultInput: ValueInput
    var description: String
    var descriptionIssue: String?
    var tags: String
    var tagsIssue: String?
    var follows: [Choice]
    /// The feature the rows are drawn for.
    var followed: String
    var followsIssue: String?
    var rows: [ValueInput]
    var hasRows: Bool
    /// The app declares the config: the form offers the Force box.
    var isDeclared: Bool
    var deletion: DeletionConfirmation?
    /// What saving the editor's config would change, after a preview.
    var plan: ConfigPlanView?
    var reason = ReasonField(id: "config-reason", text: nil)
}

extension ConfigValue {
    /// The value as configs.json writes it: a string quoted, a double with its decimal point.
    var json: String {
        var bytes: [UInt8] = []
        writeJSON(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
