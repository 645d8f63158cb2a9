import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Users: `flagpole assign`, `assignments`, `assignments stats`, `unlocks`, and what a user sees.
extension AdminAPI {
    private static let recorded = Counter(label: "flagpole_assignments_recorded_total")
    /// A page of history holds at most this many events.
    static let maximumPageSize = 1000

    func registerAssignments(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        // `{"users": ["u1", "u2"]}`: each user's group, recorded durably before the answer.
        editor.post("features/:feature/assignments") { request, context -> Response in
            let path = context.path
            let body = try await body(request, allowed: ["users"])
            let users = try body.strings("users").enumerated().map { index, text in
                do {
                    return try UserID(validating: text)
                } catch {
                    throw APIError.invalid("\(error)", pointer: "/users/\(index)")
                }
            }
            let collected = AssignmentCollector()
            let summary = try await store.assign(users, to: try context.feature(), in: path) { collected.append($0) }
            Self.recorded.increment(by: summary.recorded)
            return .json([
                "recorded": .number(Double(summary.recorded)),
                "known": .number(Double(summary.known)),
                "assignments": .array(collected.assignments.map(\.jsonValue)),
            ])
        }
        // Newest first; pass `nextCursor` back as `cursor` for the next page.
        reader.get("assignments") { request, context -> Response in
            let path = context.path
            let query = Query(request)
            let limit = try query.int("limit") ?? 100
            guard (1...Self.maximumPageSize).contains(limit) else {
                throw APIError.invalid("\"limit\" must be between 1 and \(Self.maximumPageSize).")
            }
            let cursor = try query.int("cursor")
            // One more than the page: a next page exists only if it has events.
            let events = try await store.assignmentEvents(
                in: path,
                matching: AssignmentEventQuery(
                    user: try query.user(), feature: query.string("feature"), since: try query.time("since"),
                    until: try query.time("until"),
                    before: cursor.map(Int64.init), limit: limit + 1))
            let page = events.prefix(limit)
            let next: JSONValue = events.count > limit ? page.last.map { .number(Double($0.id)) } ?? .null : .null
            return .json(["events": .array(page.map(\.jsonValue)), "nextCursor": next])
        }
        reader.get("features/:feature/stats") { request, context -> Response in
            let path = context.path
            let feature = try context.feature()
            let time = try Query(request).time("at")
            let counts = try await store.assignmentCounts(of: feature, in: path, at: time)
            return .json(counts.jsonValue(feature: feature, at: time ?? Date()))
        }
        reader.get("unlocks") { request, context -> Response in
            let path = context.path
            let query = Query(request)
            let records = try await store.unlocks(
                in: path, user: try query.user(), feature: query.string("feature"), history: try query.bool("history"))
            return .json(.array(records.map(\.jsonValue)))
        }
        reader.get("evaluate") { request, context -> Response in
            let path = context.path
            let query = Query(request)
            guard let user = try query.user() else { throw APIError.invalid("Name the user: ?user=ID.") }
            let attributes = try query.attributes(limits: .standard)
            return .json([
                "user": .string(user.rawValue),
                "features": .array(
                    try await store.evaluate(user, in: path, attributes: attributes).map(\.jsonValue)),
            ])
        }
    }
}

/// Gathers the assignments the store reports from inside its transaction.
private final class AssignmentCollector: Sendable {
    private let collected = Mutex<[Assignment]>([])

    var assignments: [Assignment] { collected.withLock { $0 } }

    func append(_ assignment: Assignment) {
        collected.withLock { $0.append(assignment) }
    }
}
