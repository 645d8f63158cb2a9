import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// Importing a file: pasted or uploaded, always checked first (a dry run), with diagnostics
/// beside the lines they point at, then applied as checked.
extension Dashboard {
    func registerImport(on pages: RouterGroup<FlagpoleRequestContext>) {
        let editor = pages.group(context: DashboardEnvironmentContext<Needs.Editor>.self)
        editor.get("tenants/:tenant/:env/import", use: importPage)
        editor.post("tenants/:tenant/:env/import", use: importDocument)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/import: the form.
    @Sendable func importPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let page = ImportPage(
            chrome: try await chrome(context, at: .importing), path: path, csrf: session.csrfToken)
        return .html(templates.render(page, as: "import"))
    }

    /// POST /tenants/{tenant}/{env}/import: `action=check` is a dry run showing what the
    /// file would change; `apply` writes the checked file, unless a revision came first.
    @Sendable func importDocument(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let session = context.session
        let form = try await form(ImportForm.self, of: request, session: session)
        let bytes = form.file.flatMap { $0.isEmpty ? nil : Array($0) } ?? Array((form.source ?? "").utf8)
        var page = ImportPage(
            chrome: try await chrome(context, at: .importing), path: path, csrf: session.csrfToken,
            source: String(decoding: bytes, as: UTF8.self), message: form.message ?? "")
        guard !bytes.isEmpty else {
            page.error = "There is no file: paste a features.json into the box, or choose a file."
            return .html(templates.render(page, as: "import"), status: .unprocessableContent)
        }
        let isApplying = form.action == "apply"
        do {
            let outcome = try await store.catalog.importDocument(
                bytes, into: path,
                options: ImportOptions(
                    isDryRun: !isApplying, message: ReasonField.message(form.message),
                    defaultMessage: "import from the dashboard", actor: session.identity.actor,
                    expectedRevision: isApplying ? form.revision : nil))
            if isApplying {
                guard case .applied(let revision) = outcome.status else {
                    return .seeOther(Notice(.unchanged).appended(to: EnvironmentURLs(path).overview))
                }
                return .seeOther(Notice(.applied, revision: revision).appended(to: EnvironmentURLs(path).overview))
            }
            page.show(outcome)
            return .html(templates.render(page, as: "import"))
        } catch DocumentError.importRefused(_, let diagnostics, _) {
            page.show(diagnostics, title: "The file was refused: nothing was written")
            return .html(templates.render(page, as: "import"), status: .unprocessableContent)
        } catch {
            let pageError = try Self.userError(error)
            page.error = pageError.message
            return .html(templates.render(page, as: "import"), status: pageError.status)
        }
    }
}

struct ImportForm: DashboardForm {
    var csrf: String
    var source: String?
    var file: Data?
    var message: String?
    var action: String?
    /// The revision current when the file was checked.
    var revision: Int?
}

struct ImportPage: Sendable {
    struct Outcome: Sendable {
        var title: String
        var lines: [String]
        var canApply: Bool
        var nextRevision: Int
        var expectedRevision: Int
    }

    /// One line of the file, with the diagnostics that point at it.
    struct Line: Sendable {
        struct Note: Sendable {
            var code: String
            var severity: String
            var column: Int
            var message: String
        }

        var number: Int
        var text: String
        var notes: [Note]
        var hasNotes: Bool
    }

    var chrome: Chrome
    var path: String
    var url: String
    var csrf: String
    var source = ""
    var message = ""
    var error: String?
    var outcome: Outcome?
    var diagnostics: DiagnosticList?
    var listing: [Line] = []
    var hasListing = false

    init(chrome: Chrome, path: EnvironmentPath, csrf: String, source: String = "", message: String = "") {
        self.chrome = chrome
        self.path = path.description
        url = EnvironmentURLs(path).importing
        self.csrf = csrf
        self.source = source
        self.message = message
    }

    /// A dry run's result: what would change, and its warnings beside the lines.
    mutating func show(_ outcome: ImportOutcome) {
        var lines: [String] = []
        func list(_ names: [String], _ verb: String) {
            if !names.isEmpty { lines.append("\(names.count) \(verb): \(names.joined(separator: ", "))") }
        }
        list(outcome.added, "added")
        list(outcome.returned, "back from the archive")
        list(outcome.changed, "changed")
        list(outcome.archived, "archived (absent from the file)")
        lines.append("\(outcome.unchangedCount) unchanged")
        switch outcome.status {
        case .planned(let revision):
            self.outcome = Outcome(
                title: "The file is valid: applying it makes revision \(revision)", lines: lines, canApply: true,
                nextRevision: revision, expectedRevision: revision - 1)
        case .unchanged(let revision), .applied(let revision):
            self.outcome = Outcome(
                title: "Nothing to change: revision \(revision) already has this content", lines: [], canApply: false,
                nextRevision: revision, expectedRevision: revision)
        }
        if !outcome.warnings.isEmpty { show(outcome.warnings, title: nil) }
    }

    /// Diagnostics, listed and placed beside the source lines they point at.
    mutating func show(_ diagnostics: [Diagnostic], title: String?) {
        if let title {
            outcome = Outcome(title: title, lines: [], canApply: false, nextRevision: 0, expectedRevision: 0)
        }
        self.diagnostics = DiagnosticList(diagnostics, listsLines: true)
        let notes = Dictionary(
            grouping: diagnostics.compactMap { diagnostic in
                diagnostic.location.map { location in
                    (
                        location.line,
                        Line.Note(
                            code: diagnostic.code.rawValue, severity: diagnostic.severity.rawValue,
                            column: location.column,
                            message: diagnostic.message)
                    )
                }
            }, by: \.0)
        listing = source.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated().map {
            index, text in
            let lineNotes = notes[index + 1]?.map(\.1) ?? []
            return Line(number: index + 1, text: String(text), notes: lineNotes, hasNotes: !lineNotes.isEmpty)
        }
        hasListing = !listing.isEmpty
    }
}
