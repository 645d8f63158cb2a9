import FlagpolePublish
import FlagpoleStore
import Hummingbird
import NIOCore

/// The current document: a download, and how apps and CDNs fetch it.
extension Dashboard {
    func registerExport(on pages: RouterGroup<FlagpoleRequestContext>) {
        let reader = pages.group(context: DashboardEnvironmentContext<Needs.Reader>.self)
        reader.get("tenants/:tenant/:env/export", use: exportPage)
        reader.get("tenants/:tenant/:env/export/features.json", use: downloadDocument)
    }

    // MARK: Handlers

    /// GET /tenants/{tenant}/{env}/export: the delivery URL, ETag and Cache-Control.
    @Sendable func exportPage(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let urls = EnvironmentURLs(path)
        var page = ExportPage(
            chrome: try await chrome(context, at: .export), path: path.description,
            downloadURL: urls.download)
        if let revision = try await currentRevision(of: path) {
            let state = try await store.access.deliveryState(of: path)
            let host = request.head.authority ?? "localhost"
            page.revision = revision.number
            page.size = revision.document.count
            page.etag = DeliveryArtifact(bytes: revision.document).etag
            page.deliveryURL =
                "\(request.isOverTLS ? "https" : "http")://\(host)/t/\(path.tenant)/\(path.environment)/features.json"
            page.cacheControl = DeliveryRoutes.currentCacheControl(state, default: defaultCacheControl)
            page.access =
                state.settings.isPrivate
                ? "Private: fetching needs a key of \(path.tenant) (a delivery key is enough)."
                : "Public: anyone with the URL can fetch it."
        }
        page.publishes = try await store.outbound.publishStatus().filter { $0.last.environment == path }.map(
            PublishRow.init)
        return .html(templates.render(page, as: "export"))
    }

    /// GET /tenants/{tenant}/{env}/export/features.json: the current revision as a download,
    /// byte for byte what `flagpole export` writes and delivery serves.
    @Sendable func downloadDocument(
        _ request: Request, context: DashboardEnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let revision = try await store.catalog.revision(of: path)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json", .contentDisposition: "attachment; filename=\"features.json\"",
                .revision: String(revision.number),
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: revision.document)))
    }
}

struct ExportPage: Sendable {
    var chrome: Chrome
    var path: String
    var downloadURL: String
    var revision: Int?
    var size = 0
    var etag = ""
    var deliveryURL = ""
    var cacheControl = ""
    var access = ""
    /// Where this environment is published (`flagpole publish`, `serve --publish-to`).
    var publishes: [PublishRow] = [] { didSet { hasPublishes = !publishes.isEmpty } }
    /// Stored: the templates read a value's stored properties only.
    var hasPublishes = false
}

/// One bucket's state for an environment, from the publish log.
struct PublishRow: Sendable {
    var target: String
    var published: String
    var state: String
    var isFailing: Bool
    var lastAttempt: String
    var purge: String?

    init(_ status: PublishStatus) {
        target = status.last.target
        published =
            status.publishedRevision.map { "revision \($0), \(status.publishedAt!.formatted(.iso8601))" } ?? "never"
        switch status.state {
        case .upToDate: state = "Up to date"
        case .behind(let count): state = "Behind by \(count) revision\(count == 1 ? "" : "s")"
        case .failing(let error): state = "Failing: \(error)"
        }
        if case .failing = status.state { isFailing = true } else { isFailing = false }
        lastAttempt = status.last.finishedAt.formatted(.iso8601)
        purge = status.last.purge.map { $0 == .sent ? "sent" : "failed: \(status.last.purgeError ?? "")" }
    }
}
