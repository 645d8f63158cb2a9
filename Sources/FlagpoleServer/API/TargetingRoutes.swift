import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// Rules and segments: `flagpole rule` and `flagpole segment`. Every change answers its plan
/// (who moves, FeatureFlags apps counted apart); `dryRun` plans without writing.
extension AdminAPI {
    /// What a body may carry beside rules or a segment.
    private static let optionKeys: Set<String> = ["dryRun", "message"]

    func registerTargeting(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("features/:feature/rules", use: showRules)
        editor.put("features/:feature/rules", use: setRules)
        reader.get("segments", use: listSegments)
        reader.get("segments/:segment", use: showSegment)
        editor.put("segments/:segment", use: putSegment)
        editor.delete("segments/:segment", use: deleteSegment)
    }

    // MARK: Handlers

    @Sendable func showRules(_: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let snapshot = try await store.catalog.targeting(in: context.path)
        let feature = try context.feature()
        _ = try await store.catalog.feature(feature, in: context.path)
        let rules = snapshot.featureRules.first { Feature.nameKey($0.key) == Feature.nameKey(feature) }?.value ?? []
        return .json([
            "revision": snapshot.revision.map { .number(Double($0)) } ?? .null,
            "rules": .array(rules.map(\.jsonValue)),
        ])
    }

    /// `{"rules": [...]}` replaces the feature's rules (an empty array removes them).
    @Sendable func setRules(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let bytes = try await json(of: request, example: #"{"rules": [...]}"#)
        let (rules, options) = try Self.decoding(path) { () throws(ConfigsRefused) in
            try TargetingDecoder.decodeRules(bytes, optionKeys: Self.optionKeys)
        }
        let editOptions = try editOptions(beside: options, request, actor: context.actor)
        let outcome = try await store.catalog.setRules(
            rules, ofFeature: try context.feature(), in: path, options: editOptions)
        return Self.answer(with: outcome, isDryRun: editOptions.isDryRun)
    }

    @Sendable func listSegments(_: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let snapshot = try await store.catalog.targeting(in: context.path)
        return .json([
            "revision": snapshot.revision.map { .number(Double($0)) } ?? .null,
            "segments": .array(snapshot.segments.map(\.jsonValue)),
        ])
    }

    @Sendable func showSegment(_: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let name = try context.decodedParameter("segment")
        let snapshot = try await store.catalog.targeting(in: context.path)
        guard let segment = snapshot.segments.first(where: { $0.name == name }) else {
            throw TargetingError.segmentNotFound(context.path, name: name, existing: snapshot.segments.map(\.name))
        }
        return .json(segment.jsonValue)
    }

    /// The segment as `flagpole segment set --file` takes it ("name" optional, the path's).
    @Sendable func putSegment(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let name = try context.decodedParameter("segment")
        let bytes = try await json(of: request, example: #"{"users": [...], "clauses": [...]}"#)
        let (segment, options) = try Self.decoding(path) { () throws(ConfigsRefused) in
            try TargetingDecoder.decodeSegment(bytes, name: name, optionKeys: Self.optionKeys)
        }
        let editOptions = try editOptions(beside: options, request, actor: context.actor)
        let outcome = try await store.catalog.setSegment(segment, in: path, options: editOptions)
        return Self.answer(with: outcome, isDryRun: editOptions.isDryRun)
    }

    @Sendable func deleteSegment(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let path = context.path
        let options = try editOptions(
            try await body(request, allowed: Self.optionKeys), request, actor: context.actor)
        let outcome = try await store.catalog.deleteSegment(
            named: try context.decodedParameter("segment"), in: path, options: options)
        return Self.answer(with: outcome, isDryRun: options.isDryRun)
    }

    /// What `decode` reads; what it refuses is refused targeting (`422 invalid_targeting`, each
    /// issue with its line and column), as the environment's own checks are.
    private static func decoding<T>(_ path: EnvironmentPath, _ decode: () throws(ConfigsRefused) -> T) throws -> T {
        do {
            return try decode()
        } catch {
            throw TargetingError.refused(path, issues: error.issues)
        }
    }

    /// The body, checked to be JSON (`400` otherwise) before the targeting decoder reads it.
    private func json(of request: Request, example: String) async throws -> [UInt8] {
        let bytes = Array(try await request.body.collect(upTo: maxBodySize).readableBytesView)
        guard !bytes.isEmpty else { throw APIError.malformed("The body is empty: send \(example).") }
        _ = try JSONBody.parse(bytes)
        return bytes
    }

    /// The outcome with its plans and warnings.
    private static func answer(with outcome: ConfigsOutcome, isDryRun: Bool) -> Response {
        guard case .object(var object) = outcome.jsonValue(isDryRun: isDryRun) else { return .json(.null) }
        object.append("warnings", .array(outcome.warnings.map(\.jsonValue)))
        return .json(.object(object))
    }
}
