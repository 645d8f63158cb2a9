import FlagpoleCore
import FlagpoleStore
import Foundation
import Hummingbird

/// One user: what their app shows and why, their history and unlocks, and QA overrides that
/// cycle them through a test's variations as the library's debug screen does.
extension Dashboard {
    /// Events listed under a user.
    static let userEvents = 50

    func registerUser(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        reader.get("tenants/:tenant/:env/users", use: userPage)
        editor.post("tenants/:tenant/:env/users/:user/overrides", use: setOverrides)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/users?user=ID. Reading records nothing.
    @Sendable func userPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        var page = UserPage(
            chrome: try await chrome(context, at: .users, notice: Notice(request)?.text),
            lookupURL: EnvironmentURLs(path).users, canEdit: context.canEdit,
            csrf: session.csrfToken)
        // Decoded as the form that sends it encodes it: a space as `+`, a plus as `%2B`.
        let lookup = try? URLEncodedFormDecoder().decode(UserLookup.self, from: request.uri.query ?? "")
        guard let text = lookup?.user, !text.isEmpty else {
            return .html(templates.render(page, as: "user"))
        }
        page.user = text
        page.attributesText = lookup?.attributes ?? ""
        let user: UserID
        let attributes: UserAttributes?
        do {
            user = try UserID(validating: text)
            attributes = try UserLookup.attributes(lookup?.attributes ?? "")
        } catch {
            page.error = "\(error)"
            return .html(templates.render(page, as: "user"), status: .unprocessableContent)
        }
        try await fill(&page, user: user, attributes: attributes, in: path)
        return .html(templates.render(page, as: "user"))
    }

    /// POST /tenants/{tenant}/{env}/users/{user}/overrides: holds the user in a variation
    /// (`variation` empty clears the override).
    @Sendable func setOverrides(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(OverrideForm.self, of: request, session: session)
        let user = try context.user()
        if form.variation.isEmpty {
            _ = try await store.assignments.clearOverride(form.feature, user: user, in: path)
        } else {
            _ = try await store.assignments.setOverride(form.feature, user: user, variation: form.variation, in: path)
        }
        let notice = Notice(form.variation.isEmpty ? .overrideCleared : .overrideSet)
        return .seeOther(notice.appended(to: EnvironmentURLs(path).user(user.rawValue)))
    }

    /// `attributes`: what the lookup typed, evaluated instead of those on record (`nil`: those).
    private func fill(
        _ page: inout UserPage, user: UserID, attributes: UserAttributes?, in path: EnvironmentPath
    ) async throws {
        let urls = EnvironmentURLs(path)
        let features = Dictionary(
            (try await store.catalog.snapshot(of: path)).document.features.map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first })
        let kept = try await store.catalog.keptAttributes(of: user, in: path)
        page.keptAttributes = (kept?.values ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }
        page.hasKeptAttributes = !page.keptAttributes.isEmpty
        page.isTyped = attributes != nil
        let evaluations = try await store.assignments.evaluate(user, in: path, attributes: attributes)
        page.evaluations = evaluations.enumerated().map { index, evaluation in
            var row = UserPage.Evaluation(
                index: index, feature: evaluation.feature, featureURL: urls.feature(evaluation.feature),
                kind: evaluation.kind.description,
                variation: evaluation.variation, reason: UserPage.why(evaluation),
                isRecorded: evaluation.isRecorded,
                isOverride: evaluation.reason == .override, overrideURL: urls.overrides(of: user.rawValue))
            if let feature = features[evaluation.feature], feature.isBucketed, feature.isEnabled {
                row.overridable = true
                row.choices = feature.effectiveVariations.map {
                    Choice(name: $0, value: $0, isSelected: $0 == evaluation.variation)
                }
            }
            return row
        }
        page.hasEvaluations = true
        page.unlocks = try await store.assignments.unlocks(in: path, user: user).map { unlock in
            UserPage.Unlock(
                feature: unlock.feature, state: unlock.isUnlocked ? "Unlocked" : "Locked", source: unlock.source,
                time: ShownTime(unlock.time))
        }
        page.events = try await store.assignments.assignmentEvents(
            in: path, matching: AssignmentEventQuery(user: user, limit: Self.userEvents)
        )
        .map { EventRow($0, urls: urls) }
        page.hasEvents = !page.events.isEmpty
    }
}

struct OverrideForm: DashboardForm {
    var csrf: String
    var feature: String
    var variation: String
}

struct UserPage: Sendable {
    struct Evaluation: Sendable {
        var index: Int
        var feature: String
        var featureURL: String
        var kind: String
        var variation: String
        var reason: String
        var isRecorded: Bool
        var isOverride: Bool
        var overrideURL: String
        var overridable = false
        var choices: [Choice] = []
    }

    struct Unlock: Sendable {
        var feature: String
        var state: String
        var source: String?
        var time: ShownTime
    }

    var chrome: Chrome
    var lookupURL: String
    var canEdit: Bool
    var csrf: String
    var user: String?
    /// The attributes typed, `key=value` by line or comma.
    var attributesText = ""
    /// Whether the evaluations read the typed attributes rather than those on record.
    var isTyped = false
    var keptAttributes: [String] = []
    var hasKeptAttributes = false
    var error: String?
    var evaluations: [Evaluation] = []
    var hasEvaluations = false
    var unlocks: [Unlock] = []
    var events: [EventRow] = []
    var hasEvents = false
}

extension UserPage {
    /// Why the user's app shows what it does, in words: the rule that decided it, or where the
    /// user's place (0–100, from their id and the feature's salt) falls in the split, and for a
    /// FeatureFlags app, that it keeps the place it was given whatever rules say since.
    static func why(_ evaluation: FlagpoleStore.Evaluation) -> String {
        let place = evaluation.point.map { "their place, \(Percent.number($0, digits: 2)) of 100," } ?? "their place"
        let given = evaluation.pinnedRevision.map { " at revision \($0)" } ?? ""
        switch evaluation.reason {
        case .rule: return "rule \(evaluation.rule ?? "")"
        case .bucket:
            if let newUser = evaluation.newUserPlacement {
                return
                    "their FeatureFlags app keeps the place it was given\(given), in \(evaluation.variation); rules don't move an app that has its place, so a new user with these attributes would get \(newUser.variation) by rule \(newUser.rule), but not this one"
            }
            if let rule = evaluation.firstRule {
                return
                    "their FeatureFlags app keeps the place rule \(rule) gave it\(given), in \(evaluation.variation): the rule is gone, but an app keeps the place it was given"
            }
            let kept = evaluation.pinnedRevision.map { " (their FeatureFlags app has kept it since revision \($0))" }
            return "the split: \(place) falls in \(evaluation.variation)'s share\(kept ?? "")"
        case .disabled: return "the feature is off for everyone"
        case .flag: return "the same for everyone"
        case .override: return "a QA override holds it there"
        case .unlock: return evaluation.isRecorded ? "its unlock state on record" : "the file's default unlock state"
        }
    }
}

/// The lookup form's query: `?user=ID&attributes=country%3DNZ`.
private struct UserLookup: Decodable {
    var user: String?
    /// `key=value` pairs, by line or comma; blank: the attributes on record.
    var attributes: String?

    /// The attributes typed, as `attr.KEY=VALUE` query parameters read (strings, which rules
    /// read as numbers or versions where they compare so); `nil` when none were typed.
    static func attributes(_ text: String) throws -> UserAttributes? {
        let pairs = text.split(whereSeparator: { $0 == "," || $0.isNewline }).map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        guard !pairs.isEmpty else { return nil }
        let query = try pairs.map { pair -> (key: String, value: String) in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw APIError.invalid(
                    "Attribute “\(pair)” has no name and value: write it as name=value, such as country=NZ.")
            }
            let key = pair[..<equals].trimmingCharacters(in: .whitespaces)
            return (
                UserAttributes.queryPrefix + key,
                pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            )
        }
        return try UserAttributes(query: query)
    }
}
