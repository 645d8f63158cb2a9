import FlagpoleCore
import FlagpoleStore

/// What the layout shows around every page.
struct Chrome: Sendable {
    var signedIn: Bool
    /// Who is signed in: the member's name and address, or the key's prefix and role.
    var who: String
    var csrf: String
    var notice: String?
    var environment: EnvironmentNav?
    /// The tenant's environment colours (`MarkingStyle`), on the pages that show one.
    var markingStylesheetURL: String?

    init(session: DashboardSession?, notice: String? = nil) {
        signedIn = session != nil
        who =
            switch session?.identity.owner {
            case .member: session?.identity.actor ?? ""
            case nil: ""
            default: "key \(session?.identity.prefix ?? "")… (\(session?.identity.role.rawValue ?? ""))"
            }
        csrf = session?.csrfToken ?? ""
        self.notice = notice
    }
}

/// The pages of one environment.
enum EnvironmentPage: String, CaseIterable, Sendable {
    case overview = "Features"
    case configs = "Configs"
    case segments = "Segments"
    case users = "Users"
    case revisions = "Revisions"
    case importing = "Import"
    case export = "Export"

    func url(_ urls: EnvironmentURLs) -> String {
        switch self {
        case .overview: urls.overview
        case .configs: urls.configs
        case .segments: urls.segments
        case .users: urls.users
        case .revisions: urls.revisions
        case .importing: urls.importing
        case .export: urls.export
        }
    }
}

/// The tabs of a tenant's environments and the links to an environment's pages.
struct EnvironmentNav: Sendable {
    struct Link: Sendable {
        var name: String
        var url: String
        var isCurrent: Bool
    }

    var tenant: String
    /// The environment's name, which its marking's colour rule selects (`MarkingStyle`).
    var name: String
    /// `tenant/environment`: where every page of the environment says it is, in its header and
    /// at the end of its title.
    var path: String
    var requiresReason: Bool
    var hasColour: Bool
    /// The tenant's settings page.
    var settingsURL: String
    var environments: [Link]
    var pages: [Link]

    /// `canEdit`: readers get no link to the import page, which only editors may use; `same`:
    /// the page's address in another environment, so a tab keeps the feature or page shown.
    init(
        path: EnvironmentPath, environments: [EnvironmentName], current: EnvironmentPage, canEdit: Bool,
        marking: EnvironmentMarking = EnvironmentMarking(), same: ((EnvironmentURLs) -> String)? = nil
    ) {
        tenant = path.tenant.rawValue
        name = path.environment.rawValue
        self.path = path.description
        requiresReason = marking.requiresReason
        hasColour = marking.colour != nil
        settingsURL = TenantURLs(path.tenant).settings
        self.environments = environments.map { name in
            let other = EnvironmentPath(tenant: path.tenant, environment: name)
            return Link(
                name: name.rawValue, url: (same ?? current.url)(EnvironmentURLs(other)),
                isCurrent: name == path.environment)
        }
        let urls = EnvironmentURLs(path)
        pages = EnvironmentPage.allCases.filter { canEdit || $0 != .importing }
            .map { Link(name: $0.rawValue, url: $0.url(urls), isCurrent: $0 == current) }
    }
}

/// A `<select>` option.
struct Choice: Sendable {
    var name: String
    var value: String
    var isSelected: Bool
}
