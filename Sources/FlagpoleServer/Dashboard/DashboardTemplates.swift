import Mustache

/// The dashboard's Mustache templates, compiled into the binary (see Package.swift), so a
/// server renders the same pages whatever its working directory.
struct DashboardTemplates: Sendable {
    private let library: MustacheLibrary

    /// Parses every template once; a broken template is a programming error, caught by the
    /// tests that render each page.
    init() {
        let sources: [String: [UInt8]] = [
            "layout": PackageResources.layout_mustache,
            "signin": PackageResources.signin_mustache,
            "home": PackageResources.home_mustache,
            "error": PackageResources.error_mustache,
            "overview": PackageResources.overview_mustache,
            "feature": PackageResources.feature_mustache,
            "configs": PackageResources.configs_mustache,
            "config": PackageResources.config_mustache,
            "value": PackageResources.value_mustache,
            "segments": PackageResources.segments_mustache,
            "segment": PackageResources.segment_mustache,
            "settings": PackageResources.settings_mustache,
            "results": PackageResources.results_mustache,
            "ramp": PackageResources.ramp_mustache,
            "targeting-plan": PackageResources.targeting_plan_mustache,
            "user": PackageResources.user_mustache,
            "revisions": PackageResources.revisions_mustache,
            "webhooks": PackageResources.webhooks_mustache,
            "import": PackageResources.import_mustache,
            "export": PackageResources.export_mustache,
            "bar": PackageResources.bar_mustache,
            "timeline": PackageResources.timeline_mustache,
            "events": PackageResources.events_mustache,
            "diagnostics": PackageResources.diagnostics_mustache,
            "reason": PackageResources.reason_mustache,
            "members": PackageResources.members_mustache,
            "welcome": PackageResources.welcome_mustache,
            "account": PackageResources.account_mustache,
        ]
        var library = MustacheLibrary()
        for (name, bytes) in sources {
            do {
                try library.register(String(decoding: bytes, as: UTF8.self), named: name)
            } catch {
                preconditionFailure("The dashboard template \(name).mustache does not parse: \(error)")
            }
        }
        self.library = library
    }

    /// `page` rendered with the template `name`.
    func render(_ page: Any, as name: String) -> String {
        guard let html = library.render(page, withTemplate: name) else {
            preconditionFailure("No dashboard template is named \(name)")
        }
        return html
    }

    static let stylesheet = PackageResources.dashboard_css
    static let script = PackageResources.dashboard_js
}
