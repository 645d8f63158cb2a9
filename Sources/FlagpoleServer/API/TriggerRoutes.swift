import FlagpoleCore
import FlagpoleStore
import Foundation
import Hummingbird

/// Trigger URLs: `flagpole trigger`. A created trigger's token is in the answer only.
extension AdminAPI {
    func registerTriggers(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        reader.get("triggers", use: listTriggers)
        editor.post("features/:feature/triggers", use: createTrigger)
        editor.delete("triggers/:prefix", use: revokeTrigger)
    }

    @Sendable func listTriggers(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        .json(.array(try await store.rollouts.triggers(in: context.path).map(\.jsonValue)))
    }

    /// `{"action": "pause" | "abort" | "disable", "name": …}`: the trigger with its URL, shown once.
    @Sendable func createTrigger(
        _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let body = try await body(request, allowed: ["action", "name"])
        let action: Trigger.Action
        do {
            action = try Trigger.Action(validating: try body.requiredString("action"))
        } catch let error as TriggerError {
            throw APIError.invalid(error.description, pointer: "/action")
        }
        let created = try await store.rollouts.createTrigger(
            for: try context.feature(), action: action, name: try body.requiredString("name"), in: context.path,
            actor: context.actor, now: clock.now)
        return .json(created.jsonValue(serverURL: request.serverURL), status: .created)
    }

    @Sendable func revokeTrigger(
        _ request: Request, context: EnvironmentContext<Needs.Editor>
    ) async throws -> Response {
        let prefix = try context.decodedParameter("prefix")
        try await store.rollouts.revokeTrigger(prefix, in: context.path, now: clock.now)
        return .json(["revoked": .string(prefix)])
    }
}
