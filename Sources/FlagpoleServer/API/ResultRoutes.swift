import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// Goals and readouts: `flagpole goal` and `flagpole results`.
extension AdminAPI {
    func registerResults(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("goals", use: listGoals)
        editor.post("goals", use: createGoal)
        reader.get("features/:feature/results", use: showResults)
        editor.put("features/:feature/results/control", use: setControl)
        editor.delete("features/:feature/results/control", use: clearControl)
    }

    // MARK: Handlers

    @Sendable func listGoals(_: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        .json(["goals": .array(try await store.experiments.goals(in: context.path).map(\.jsonValue))])
    }

    /// `{"name", "kind": "conversion|count|value", "better": "higher|lower"}`.
    @Sendable func createGoal(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let body = try await JSONBody(request, limit: maxBodySize, allowed: ["name", "kind", "better"])
        let kindText = try body.requiredString("kind")
        guard let kind = Goal.Kind(rawValue: kindText) else {
            throw APIError.invalid("\"kind\" is conversion, count or value, not \"\(kindText)\".", pointer: "/kind")
        }
        let betterText = try body.string("better") ?? Goal.Direction.higher.rawValue
        guard let better = Goal.Direction(rawValue: betterText) else {
            throw APIError.invalid("\"better\" is higher or lower, not \"\(betterText)\".", pointer: "/better")
        }
        let goal = Goal(name: try body.requiredString("name"), kind: kind, better: better)
        try await store.experiments.createGoal(goal, in: context.path)
        return .json(goal.jsonValue, status: .created)
    }

    /// `?goal=G&epoch=N&control=V`, each optional.
    @Sendable func showResults(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let query = Query(request)
        let results = try await store.experiments.results(
            of: try context.feature(), in: context.path, goal: query.string("goal"), epoch: try query.int("epoch"),
            control: query.string("control"))
        return .json(results.jsonValue)
    }

    /// `{"control": "V"}`: the variation the test's readouts compare with unless asked for
    /// another. Answers the readout against it.
    @Sendable func setControl(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let body = try await JSONBody(request, limit: maxBodySize, allowed: ["control"])
        let feature = try context.feature()
        try await store.experiments.setControl(
            of: feature, to: try body.requiredString("control"), in: context.path, actor: context.actor)
        return .json(try await store.experiments.results(of: feature, in: context.path).jsonValue)
    }

    /// Back to the default control (`Disabled` in an on/off test, else the first variation).
    @Sendable func clearControl(_: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
        let feature = try context.feature()
        try await store.experiments.setControl(of: feature, to: nil, in: context.path, actor: context.actor)
        return .json(try await store.experiments.results(of: feature, in: context.path).jsonValue)
    }
}
