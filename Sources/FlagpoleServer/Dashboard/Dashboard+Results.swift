import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A test's readout: per epoch with data, newest first, the verdicts, the split and its
/// sample-ratio check, then per goal a table of each variation against the control (the one
/// `?control=` names) and a chart. The same store operation as `flagpole results`.
extension Dashboard {
    func registerResults(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)

        reader.get("tenants/:tenant/:env/features/:feature/results", use: resultsPage)
        editor.post("tenants/:tenant/:env/features/:feature/results/control", use: nameControl)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/features/{feature}/results?control=V. A control that is no
    /// variation of the test is refused with 422, on the page, with the variations to choose from.
    @Sendable func resultsPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws
        -> Response
    {
        let path = context.path
        let name = try context.feature()
        let control = try? URLEncodedFormDecoder().decode(ResultsQuery.self, from: request.uri.query ?? "").control
        var results = try await store.experiments.results(of: name, in: path, control: control?.nilIfEmpty)
        var error: String?
        // The store reads an unknown control as the default one; the page says so instead.
        if let control = control?.nilIfEmpty, !ResultsPage.variations(of: results).contains(control) {
            results = try await store.experiments.results(of: name, in: path)
            let known = ResultsPage.variations(of: results).map { "“\($0)”" }.joined(separator: ", ")
            error =
                "“\(control)” is not a variation of \(name), so it can't be the control. Its variations are \(known): choose one below."
        }
        let featureURL = EnvironmentURLs(path).feature(name)
        let page = ResultsPage(
            chrome: try await chrome(
                context, at: .overview, notice: Notice(request)?.text, same: { $0.feature(name) + "/results" }),
            results: results,
            control: error == nil ? control?.nilIfEmpty : nil, featureURL: featureURL,
            rollout: context.canEdit
                ? ResultsPage.Rollout(url: featureURL + "/rollout", csrf: context.session.csrfToken) : nil,
            controlForm: context.canEdit
                ? ResultsPage.ControlForm(
                    controlURL: featureURL + "/results/control", controlCSRF: context.session.csrfToken,
                    canClearControl: false) : nil,
            error: error, now: Date())
        return .html(templates.render(page, as: "results"), status: error == nil ? .ok : .unprocessableContent)
    }

    /// POST /tenants/{tenant}/{env}/features/{feature}/results/control: names the test's control
    /// (`control` empty: back to the default), then shows the results against it.
    @Sendable func nameControl(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let form = try await form(NameControlForm.self, of: request, session: context.session)
        let name = try context.feature()
        try await store.experiments.setControl(
            of: name, to: form.control.nilIfEmpty, in: context.path,
            actor: context.session.identity.actor)
        let notice = Notice(form.control.isEmpty ? .controlCleared : .controlNamed)
        return .seeOther(notice.appended(to: EnvironmentURLs(context.path).feature(name) + "/results"))
    }
}

/// The form that names a test's control (`control` empty: back to the default).
struct NameControlForm: DashboardForm {
    var csrf: String
    var control: String
}

/// The results page's query: `?control=V`.
struct ResultsQuery: Decodable {
    var control: String?
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
