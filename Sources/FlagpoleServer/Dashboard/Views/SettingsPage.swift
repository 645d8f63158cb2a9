import FlagpoleCore
import FlagpoleStore
import Foundation

/// What `settings.mustache` shows: a tenant's keys, environments and goals, with their forms.
struct SettingsPage: Sendable {
    var chrome: Chrome
    var tenant: String
    /// The forms' targets (stored: the templates read a value's stored properties only).
    var settingsURL: String
    var keysURL: String
    var environmentsURL: String
    var goalsURL: String
    var membersURL: String
    var csrf: String
    /// Keys and environments are an admin's to change, goals an editor's.
    var isAdmin: Bool
    var canEdit: Bool
    var keys: [KeyRow]
    var environments: [EnvironmentRow]
    var goals: [GoalRow]
    /// The key just made, with its secret: on the answer to the form, never again.
    var createdKey: CreatedKeyView?
    /// The key whose revocation waits for a confirmation.
    var revoking: KeyRow?
    var keyForm = KeyFormView(name: "", role: "reader", environment: nil, error: nil)
    /// The members a key can be made for (admins only see them).
    var members: [Member] = []
    var newEnvironment = NewEnvironmentView(name: "", error: nil)
    var goalForm = GoalFormView(
        name: "", environment: "", kind: "conversion", better: "higher", environments: [], error: nil)
    // Stored: the templates read a value's stored properties only.
    var hasKeys = false
    var hasGoals = false
    var roleChoices: [Choice] = []
    var scopeChoices: [Choice] = []
    var ownerChoices: [Choice] = []

    /// Recomputes what the template can't: the choices of the key form, as typed.
    mutating func refresh() {
        hasKeys = !keys.isEmpty
        hasGoals = !goals.isEmpty
        roleChoices = [KeyRole.reader, .editor, .admin, .delivery].map {
            Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0.rawValue == keyForm.role)
        }
        scopeChoices =
            [
                Choice(
                    name: "every environment (not for delivery keys)", value: "", isSelected: keyForm.environment == nil
                )
            ]
            + environments.map { Choice(name: $0.name, value: $0.name, isSelected: $0.name == keyForm.environment) }
        ownerChoices =
            [Choice(name: "a service, known by the name", value: "", isSelected: (keyForm.member ?? "").isEmpty)]
            + members.filter(\.hasPassword).map {
                Choice(
                    name: "\($0.name) (\($0.role.rawValue))", value: $0.email, isSelected: $0.email == keyForm.member)
            }
    }
}

/// One key of the list.
struct KeyRow: Sendable {
    var prefix: String
    var name: String
    /// The member's email, or "service".
    var owner: String
    var role: String
    var scope: String
    var created: String
    var lastUsed: String
    var revoked: String?
    var isActive: Bool
    var revokeURL: String

    init(_ key: APIKeyInfo, urls: TenantURLs) {
        prefix = key.prefix
        name = key.name.isEmpty ? "(no name)" : key.name
        owner = key.member ?? "service"
        role = key.role.rawValue
        scope = key.environment?.rawValue ?? "every environment"
        created = key.createdAt.formatted(.iso8601)
        lastUsed = key.lastUsedAt.map { $0.formatted(.iso8601) } ?? "never"
        revoked = key.revokedAt.map { $0.formatted(.iso8601) }
        isActive = key.revokedAt == nil
        revokeURL = urls.revokeKey(key.prefix)
    }
}

/// The secret of the key just made.
struct CreatedKeyView: Sendable {
    var secret: String
    var prefix: String
    var name: String
    var role: String
}

/// The create-key form as typed, and why it was refused.
struct KeyFormView: Sendable {
    var name: String
    var role: String
    var environment: String?
    /// The email of the member whose key it is; empty or `nil`: a service's.
    var member: String? = nil
    var error: String?
}

/// The create-environment form as typed, and why it was refused.
struct NewEnvironmentView: Sendable {
    var name: String
    var error: String?
}

/// One environment with its settings form.
struct EnvironmentRow: Sendable {
    var name: String
    var overviewURL: String
    var updateURL: String
    var webhooksURL: String
    var isPrivate: Bool
    var access: String
    var cacheControl: String
    var cacheControlValue: String
    var colour: String
    var colourValue: String
    var hasColour: Bool
    var requiresReason: Bool
    var error: String?

    init(_ environment: Environment, urls: TenantURLs) {
        name = environment.path.environment.rawValue
        overviewURL = EnvironmentURLs(environment.path).overview
        updateURL = urls.environment(environment.path.environment)
        webhooksURL = urls.webhooks(of: environment.path.environment)
        isPrivate = environment.delivery.isPrivate
        access = isPrivate ? "private" : "public"
        cacheControl = environment.delivery.cacheControl ?? "the server's default"
        cacheControlValue = environment.delivery.cacheControl ?? ""
        colour = environment.marking.colour?.rawValue ?? "none"
        colourValue = environment.marking.colour?.rawValue ?? ""
        hasColour = environment.marking.colour != nil
        requiresReason = environment.marking.requiresReason
    }
}

/// One goal of an environment.
struct GoalRow: Sendable {
    var environment: String
    var name: String
    var kind: String
    var better: String

    init(environment: String, goal: Goal) {
        self.environment = environment
        name = goal.name
        kind = goal.kind.rawValue
        better = goal.better.rawValue
    }
}

/// The create-goal form as typed, its choices, and why it was refused.
struct GoalFormView: Sendable {
    var name: String
    var environment: String
    var kind: String
    var better: String
    var environments: [String]
    var error: String?
    var environmentChoices: [Choice]
    var kindChoices: [Choice]
    var betterChoices: [Choice]

    init(
        name: String, environment: String, kind: String, better: String, environments: [String], error: String?
    ) {
        self.name = name
        self.environment = environment
        self.kind = kind
        self.better = better
        self.environments = environments
        self.error = error
        environmentChoices = environments.map { Choice(name: $0, value: $0, isSelected: $0 == environment) }
        kindChoices = Goal.Kind.allCases.map {
            Choice(name: $0.rawValue, value: $0.rawValue, isSelected: $0.rawValue == kind)
        }
        betterChoices = Goal.Direction.allCases.map {
            Choice(name: "\($0.rawValue) is better", value: $0.rawValue, isSelected: $0.rawValue == better)
        }
    }
}
