import FlagpoleCore
import FlagpoleStore
import Foundation
import Hummingbird

/// Ramps: `flagpole ramp`. Each action answers the ramp's report, with every step's plan; with
/// `"dryRun": true`, what it would do, writing nothing.
extension AdminAPI {
    func registerRamps(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("ramps", use: listRamps)
        reader.get("features/:feature/ramp", use: showRamp)
        editor.post("features/:feature/ramp", use: createRamp)
        editor.post("features/:feature/ramp/pause", use: pauseRamp)
        editor.post("features/:feature/ramp/resume", use: resumeRamp)
        editor.post("features/:feature/ramp/advance", use: advanceRamp)
        editor.post("features/:feature/ramp/abort", use: abortRamp)
    }

    @Sendable func listRamps(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        .json(.array(try await store.rollouts.ramps(in: context.path).map(\.jsonValue)))
    }

    @Sendable func showRamp(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        .json(try await store.rollouts.ramp(of: try context.feature(), in: context.path).jsonValue)
    }

    @Sendable func pauseRamp(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await changeRamp(.pause, request, context: context)
    }

    @Sendable func resumeRamp(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await changeRamp(.resume, request, context: context)
    }

    @Sendable func advanceRamp(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await changeRamp(.advance, request, context: context)
    }

    /// `{"rollBack": true}` also moves the ramp's users back to where it started.
    @Sendable func abortRamp(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        try await changeRamp(.abort, request, context: context)
    }

    private func changeRamp(
        _ action: RampAction, _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let body = try await body(request, allowed: action == .abort ? ["dryRun", "rollBack"] : ["dryRun"])
        let report = try await store.rollouts.changeRamp(
            action, of: try context.feature(), in: context.path, rollingBack: try body.bool("rollBack"),
            actor: context.actor, now: clock.now, isDryRun: try body.bool("dryRun"))
        return .json(report.jsonValue)
    }

    /// `{"steps": [1, 5, 20, 50, 100], "hold": "24h", "variation"?, "start"?, "guards"?, "onFailure"?, "dryRun"?}`.
    @Sendable func createRamp(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let body = try await body(
            request, allowed: ["variation", "steps", "hold", "start", "guards", "onFailure", "dryRun"])
        let hold: RampHold
        do {
            hold = try RampHold(parsing: try body.requiredString("hold"))
        } catch let error as RampError {
            throw APIError.invalid(error.description, pointer: "/hold")
        }
        let start = try body.string("start").map { text in
            guard let date = TimeText.date(from: text) else {
                throw APIError.invalid(
                    "\"start\" is not a time: use ISO 8601, e.g. \(TimeText.examples).", pointer: "/start")
            }
            return date
        }
        let guards = try (body.object["guards"] == nil ? [] : try body.strings("guards")).enumerated().map {
            index, text in
            do {
                return try RampText.guardrail(text)
            } catch let error as RampError {
                throw APIError.invalid(error.description, pointer: "/guards/\(index)")
            }
        }
        let onFailure = try body.string("onFailure").map { text in
            do {
                return try RampText.failureAction(text)
            } catch let error as RampError {
                throw APIError.invalid(error.description, pointer: "/onFailure")
            }
        }
        let isDryRun = try body.bool("dryRun")
        let report = try await store.rollouts.createRamp(
            RampRequest(
                feature: try context.feature(), variation: try body.string("variation"),
                steps: try body.numbers("steps"),
                hold: hold, start: start, guards: guards, onFailure: onFailure ?? .pause),
            in: context.path, actor: context.actor, now: clock.now, isDryRun: isDryRun)
        return .json(report.jsonValue, status: isDryRun ? .ok : .created)
    }
}
