import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird
import NIOCore

/// Whole documents: `flagpole import`, `export`, `revisions`, `diff` and `rollback`.
extension AdminAPI {
    func registerDocuments(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        editor.post("import", use: importDocument)
        reader.get("export", use: exportDocument)
        reader.get("revisions", use: listRevisions)
        reader.get("diff", use: diffRevisions)
        editor.post("rollback", use: rollBack)
    }

    // MARK: Handlers

    /// The body is the features.json itself, so diagnostics' lines and columns are the file's.
    /// Options are query parameters: dryRun, strict, message.
    @Sendable func importDocument(
        _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let bytes = Array(try await request.body.collect(upTo: maxBodySize).readableBytesView)
        let options = ImportOptions(
            isDryRun: try query.bool("dryRun"), isStrict: try query.bool("strict"),
            message: query.string("message"),
            actor: context.actor, expectedRevision: try request.expectedRevision())
        let outcome = try await store.catalog.importDocument(bytes, into: path, options: options)
        if case .applied = outcome.status {
            metrics.imports.increment()
        }
        return .json(outcome.jsonValue)
    }

    @Sendable func exportDocument(
        _ request: Request, context: EnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let revision = try await store.catalog.revision(try query.int("revision"), of: path)
        let bytes = try revision.document(try query.bool("compact") ? .compact : .pretty)
        return Response(
            status: .ok, headers: [.contentType: "application/json", .revision: String(revision.number)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    @Sendable func listRevisions(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        let query = Query(request)
        // `?since=`: the audit feed, with the fields of each revision's `revision.created` event.
        if let since = query.string("since") {
            guard let time = TimeText.date(from: since) else {
                throw APIError.invalid(
                    "\"since\" must be a time: ISO 8601, e.g. \(TimeText.examples).", pointer: "/since")
            }
            return .json(.array(try await store.changes.revisionEvents(in: path, since: time).map(\.jsonValue)))
        }
        return .json(.array(try await store.catalog.revisions(of: path).map(\.jsonValue)))
    }

    @Sendable func diffRevisions(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        let query = Query(request)
        guard let from = try query.int("from"), let to = try query.int("to") else {
            throw APIError.invalid("Name both revisions: ?from=A&to=B.")
        }
        return .json(try await store.catalog.diff(path, from: from, to: to).jsonValue)
    }

    @Sendable func rollBack(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["to", "dryRun", "message"])
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.catalog.rollBack(path, to: try body.requiredInt("to"), options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }
}
