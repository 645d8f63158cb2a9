import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// One feature at a time: `flagpole feature`, `bias set`, `rollout`, `override`, `unlock`/`lock`.
extension AdminAPI {
    func registerFeatures(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("features", use: listFeatures)
        reader.get("features/:feature", use: showFeature)
        for (action, isEnabled) in [("enable", true), ("disable", false)] {
            editor.post("features/:feature/\(action)") { request, context -> Response in
                let path = context.path
                let options = try editOptions(
                    try await body(request, allowed: ["dryRun", "message"]), request, actor: context.actor)
                let outcome = try await store.setEnabled(
                    isEnabled, feature: try context.feature(), in: path, options: options)
                return .json(outcome.jsonValue(isDryRun: options.isDryRun))
            }
        }
        editor.post("features/:feature/biases", use: setBiases)
        editor.post("features/:feature/rollout", use: rollOut)
        editor.put("features/:feature/overrides/:user", use: setOverride)
        editor.delete("features/:feature/overrides/:user", use: clearOverride)

        // `{"source": "purchase"}` is optional; answers whether the state changed.
        for (method, isUnlocked) in [(HTTPRequest.Method.put, true), (.delete, false)] {
            editor.on("features/:feature/unlocks/:user", method: method) { request, context -> Response in
                let path = context.path
                let body = try await body(request, allowed: ["source"])
                let feature = try context.feature()
                let user = try context.user()
                let changed = try await store.setUnlocked(
                    isUnlocked, feature: feature, user: user, source: try body.string("source"), actor: context.actor,
                    in: path)
                return .json([
                    "feature": .string(feature), "user": .string(user.rawValue), "unlocked": .bool(isUnlocked),
                    "changed": .bool(changed),
                ])
            }
        }
    }

    // MARK: Handlers

    @Sendable func listFeatures(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        return .json(try await store.snapshot(of: path).document.listingJSON)
    }

    @Sendable func showFeature(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let path = context.path
        return .json(try await store.feature(try context.feature(), in: path).jsonValue)
    }

    /// The plan (with "dryRun": true) and the change: `flagpole bias set`.
    @Sendable func setBiases(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["biases", "dryRun", "force", "message"])
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.setBiases(
            try body.numbers("biases"), of: try context.feature(), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    @Sendable func rollOut(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["variation", "dryRun", "message"])
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.rollOut(
            try context.feature(), to: try body.string("variation"), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    @Sendable func setOverride(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["variation"])
        let assignment = try await store.setOverride(
            try context.feature(), user: try context.user(), variation: try body.requiredString("variation"),
            in: path)
        return .json(assignment.jsonValue)
    }

    @Sendable func clearOverride(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let path = context.path
        return .json(
            try await store.clearOverride(try context.feature(), user: try context.user(), in: path).jsonValue)
    }
}
