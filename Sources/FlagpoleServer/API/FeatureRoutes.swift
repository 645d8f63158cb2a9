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
        editor.post("features/:feature/enable", use: enable)
        editor.post("features/:feature/disable", use: disable)
        editor.post("features/:feature/biases", use: setBiases)
        editor.post("features/:feature/rollout", use: rollOut)
        editor.put("features/:feature/overrides/:user", use: setOverride)
        editor.delete("features/:feature/overrides/:user", use: clearOverride)

        editor.put("features/:feature/unlocks/:user", use: unlock)
        editor.delete("features/:feature/unlocks/:user", use: lock)
    }

    // MARK: Handlers

    @Sendable func listFeatures(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        return .json(try await store.catalog.snapshot(of: path).document.listingJSON)
    }

    @Sendable func showFeature(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let path = context.path
        return .json(try await store.catalog.feature(try context.feature(), in: path).jsonValue)
    }

    /// `flagpole feature enable`: the plan (with "dryRun": true) and the change.
    @Sendable func enable(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await setEnabled(true, request, context: context)
    }

    /// `flagpole feature disable`: the plan (with "dryRun": true) and the change.
    @Sendable func disable(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await setEnabled(false, request, context: context)
    }

    private func setEnabled(
        _ isEnabled: Bool, _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let options = try editOptions(
            try await body(request, allowed: ["dryRun", "message"]), request, actor: context.actor)
        let outcome = try await store.catalog.setEnabled(
            isEnabled, feature: try context.feature(), in: context.path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    /// `PUT …/unlocks/{user}`, `{"source": "purchase"}` optional: answers whether the state changed.
    @Sendable func unlock(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await setUnlocked(true, request, context: context)
    }

    /// `DELETE …/unlocks/{user}`: answers whether the state changed.
    @Sendable func lock(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await setUnlocked(false, request, context: context)
    }

    private func setUnlocked(
        _ isUnlocked: Bool, _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let body = try await body(request, allowed: ["source"])
        let feature = try context.feature()
        let user = try context.user()
        let changed = try await store.assignments.setUnlocked(
            isUnlocked, feature: feature, user: user, source: try body.string("source"), actor: context.actor,
            in: context.path)
        return .json([
            "feature": .string(feature), "user": .string(user.rawValue), "unlocked": .bool(isUnlocked),
            "changed": .bool(changed),
        ])
    }

    /// The plan (with "dryRun": true) and the change: `flagpole bias set`.
    @Sendable func setBiases(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["biases", "dryRun", "force", "message"])
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.catalog.setBiases(
            try body.numbers("biases"), of: try context.feature(), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    @Sendable func rollOut(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["variation", "dryRun", "message"])
        let options = try editOptions(body, request, actor: context.actor)
        let outcome = try await store.catalog.rollOut(
            try context.feature(), to: try body.string("variation"), in: path, options: options)
        return .json(outcome.jsonValue(isDryRun: options.isDryRun))
    }

    @Sendable func setOverride(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let path = context.path
        let body = try await body(request, allowed: ["variation"])
        let assignment = try await store.assignments.setOverride(
            try context.feature(), user: try context.user(), variation: try body.requiredString("variation"),
            in: path)
        return .json(assignment.jsonValue)
    }

    @Sendable func clearOverride(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response
    {
        let path = context.path
        return .json(
            try await store.assignments.clearOverride(try context.feature(), user: try context.user(), in: path)
                .jsonValue)
    }
}
