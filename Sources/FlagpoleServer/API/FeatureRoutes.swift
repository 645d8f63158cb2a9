import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// One feature at a time: `flagpole feature`, `bias set`, `rollout`, `override`, `unlock`/`lock`.
extension AdminAPI {
    func registerFeatures(on api: RouterGroup<FlagpoleRequestContext>) {
        let environment = api.group(RouterPath(environmentRoute))

        environment.get("features") { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.reader, on: path.tenant, request)
            return .json(try await store.snapshot(of: path).document.listingJSON)
        }
        environment.get("features/:feature") { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.reader, on: path.tenant, request)
            return .json(try await store.feature(try context.feature(), in: path).jsonValue)
        }
        for (action, isEnabled) in [("enable", true), ("disable", false)] {
            environment.post("features/:feature/\(action)") { request, context -> Response in
                let path = try context.environmentPath()
                let key = try await auth.require(.editor, on: path.tenant, request)
                let options = try editOptions(
                    try await body(request, allowed: ["dryRun", "message"]), request, key: key)
                let outcome = try await store.setEnabled(
                    isEnabled, feature: try context.feature(), in: path, options: options)
                return try await respond(to: outcome, of: path, isDryRun: options.isDryRun)
            }
        }
        // The plan (with "dryRun": true) and the change: `flagpole bias set`.
        environment.post("features/:feature/biases") { request, context -> Response in
            let path = try context.environmentPath()
            let key = try await auth.require(.editor, on: path.tenant, request)
            let body = try await body(request, allowed: ["biases", "dryRun", "force", "message"])
            let options = try editOptions(body, request, key: key)
            let outcome = try await store.setBiases(
                try body.numbers("biases"), of: try context.feature(), in: path, options: options)
            return try await respond(to: outcome, of: path, isDryRun: options.isDryRun)
        }
        environment.post("features/:feature/rollout") { request, context -> Response in
            let path = try context.environmentPath()
            let key = try await auth.require(.editor, on: path.tenant, request)
            let body = try await body(request, allowed: ["variation", "dryRun", "message"])
            let options = try editOptions(body, request, key: key)
            let outcome = try await store.rollOut(
                try context.feature(), to: try body.string("variation"), in: path, options: options)
            return try await respond(to: outcome, of: path, isDryRun: options.isDryRun)
        }

        environment.put("features/:feature/overrides/:user") { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.editor, on: path.tenant, request)
            let body = try await body(request, allowed: ["variation"])
            let assignment = try await store.setOverride(
                try context.feature(), user: try context.user(), variation: try body.requiredString("variation"),
                in: path)
            return .json(assignment.jsonValue)
        }
        environment.delete("features/:feature/overrides/:user") { request, context -> Response in
            let path = try context.environmentPath()
            _ = try await auth.require(.editor, on: path.tenant, request)
            return .json(
                try await store.clearOverride(try context.feature(), user: try context.user(), in: path).jsonValue)
        }

        // `{"source": "purchase"}` is optional; answers whether the state changed.
        for (method, isUnlocked) in [(HTTPRequest.Method.put, true), (.delete, false)] {
            environment.on("features/:feature/unlocks/:user", method: method) { request, context -> Response in
                let path = try context.environmentPath()
                let key = try await auth.require(.editor, on: path.tenant, request)
                let body = try await body(request, allowed: ["source"])
                let feature = try context.feature()
                let user = try context.user()
                let changed = try await store.setUnlocked(
                    isUnlocked, feature: feature, user: user, source: try body.string("source"), actor: key.actor,
                    in: path)
                return .json([
                    "feature": .string(feature), "user": .string(user.rawValue), "unlocked": .bool(isUnlocked),
                    "changed": .bool(changed),
                ])
            }
        }
    }
}

extension FlagpoleRequestContext {
    /// The route's `:feature`, percent-decoded (feature names have spaces).
    func feature() throws -> String {
        try decodedParameter("feature")
    }

    /// The route's `:user`, percent-decoded; an id the store could not hold is `422`.
    func user() throws -> UserID {
        try UserID(validating: try decodedParameter("user"))
    }

    /// Hummingbird matches routes on the raw path, so an encoded `/` stays inside its segment;
    /// the value is decoded here.
    func decodedParameter(_ name: String) throws -> String {
        let raw = parameters.get(name) ?? ""
        guard let decoded = raw.removingPercentEncoding else {
            throw APIError.malformed(
                "The path segment \"\(raw)\" has a broken percent-encoding. Encode it as RFC 3986 says, e.g. a space as %20."
            )
        }
        return decoded
    }
}
