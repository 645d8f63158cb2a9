import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// Typed configs and tags: `flagpole config` and `flagpole feature tag`.
extension AdminAPI {
    /// What a body may carry beside a config or a configs file.
    private static let optionKeys: Set<String> = ["dryRun", "force", "message"]

    func registerConfigs(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("configs", use: listConfigs)
        editor.put("configs", use: replaceConfigs)
        reader.get("configs/:config", use: showConfig)
        editor.put("configs/:config", use: putConfig)
        editor.delete("configs/:config", use: deleteConfig)
        editor.put("features/:feature/tags", use: setTags)
    }

    // MARK: Handlers

    @Sendable func listConfigs(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let snapshot = try await store.catalog.configs(in: context.path)
        let warnings: JSONObject =
            snapshot.warnings.isEmpty ? [:] : ["warnings": .array(snapshot.warnings.map(\.jsonValue))]
        return .json(bytes: snapshot.document.rendered(revision: .some(snapshot.revision), extra: warnings))
    }

    /// The configs file, as `flagpole config import` takes it, with `dryRun` and `message` beside "configs".
    @Sendable func replaceConfigs(
        _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let path = context.path
        let (document, _, options) = try ConfigsDecoder.decode(
            try await bytes(of: request), optionKeys: Self.optionKeys)
        let editOptions = try editOptions(beside: options, request, actor: context.actor)
        let outcome = try await store.catalog.importConfigs(document, in: path, options: editOptions)
        return .json(outcome.jsonValue(isDryRun: editOptions.isDryRun))
    }

    @Sendable func showConfig(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let name = try context.decodedParameter("config")
        let snapshot = try await store.catalog.configs(in: context.path)
        guard let config = snapshot.document.config(named: name) else {
            throw ConfigError.configNotFound(
                context.path, name: name, existing: snapshot.document.configs.map(\.name))
        }
        return .json(bytes: config.rendered())
    }

    /// The definition as in a configs file ("name" optional), with `dryRun` and `message` beside it.
    @Sendable func putConfig(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let (config, options) = try ConfigsDecoder.decodeConfig(
            try await bytes(of: request), name: try context.decodedParameter("config"), optionKeys: Self.optionKeys)
        let editOptions = try editOptions(beside: options, request, actor: context.actor)
        let outcome = try await store.catalog.setConfig(config, in: path, options: editOptions)
        return .json(outcome.jsonValue(isDryRun: editOptions.isDryRun))
    }

    @Sendable func deleteConfig(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let path = context.path
        let options = try editOptions(
            try await body(request, allowed: Self.optionKeys), request, actor: context.actor)
        let outcome = try await store.catalog.deleteConfig(
            named: try context.decodedParameter("config"), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    @Sendable func setTags(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: Self.optionKeys.union(["tags"]))
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.catalog.setTags(
            try body.strings("tags"), ofFeature: try context.feature(), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    /// The body, checked to be JSON (`400` otherwise) before the configs decoder reads it.
    private func bytes(of request: Request) async throws -> [UInt8] {
        let bytes = Array(try await request.body.collect(upTo: maxBodySize).readableBytesView)
        guard !bytes.isEmpty else {
            throw APIError.malformed(
                "The body is empty: send a configs file ({\"configs\": [...]}), or for one config its definition ({\"type\": …, \"default\": …})."
            )
        }
        _ = try JSONBody.parse(bytes)
        return bytes
    }

    /// Edit options from the option keys found beside a config, rules or a segment: `dryRun`,
    /// `force`, `message`, and `If-Match`.
    func editOptions(beside options: JSONObject, _ request: Request, actor: String) throws -> EditOptions {
        func flag(_ key: String) throws -> Bool {
            switch options[key] {
            case nil, .null: return false
            case .bool(let value): return value
            default: throw APIError.invalid("\"\(key)\" must be true or false.", pointer: "/\(key)")
            }
        }
        let isDryRun = try flag("dryRun")
        let message: String?
        switch options["message"] {
        case nil, .null: message = nil
        case .string(let text): message = text
        default: throw APIError.invalid("\"message\" must be a string.", pointer: "/message")
        }
        return EditOptions(
            isDryRun: isDryRun, isForced: try flag("force"), message: message, actor: actor,
            expectedRevision: try request.expectedRevision())
    }
}
