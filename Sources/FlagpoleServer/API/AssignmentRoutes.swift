import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Users: `flagpole assign`, `assignments`, `assignments stats`, `unlocks`, and what a user sees.
extension AdminAPI {
    /// A page of history holds at most this many events.
    static let maximumPageSize = 1000

    func registerAssignments(on api: RouterGroup<FlagpoleRequestContext>) {
        let reader = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Reader>.self)
        let editor = api.group(RouterPath(environmentRoute), context: EnvironmentContext<Needs.Editor>.self)

        editor.post("features/:feature/assignments", use: assignUsers)
        reader.get("assignments", use: listAssignments)
        reader.get("features/:feature/stats", use: featureStats)
        reader.get("unlocks", use: listUnlocks)
        reader.get("evaluate", use: evaluateUser)
    }

    // MARK: Handlers

    /// `{"users": ["u1", "u2"]}`: each user's group, recorded durably before the answer.
    @Sendable func assignUsers(_ request: Request, context: EnvironmentContext<Needs.Editor>) async throws -> Response {
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
        let summary = try await store.assignments.assign(users, to: try context.feature(), in: path) {
            collected.append($0)
        }
        metrics.assignmentsRecorded.increment(by: summary.recorded)
        return .json([
            "recorded": .number(Double(summary.recorded)),
            "known": .number(Double(summary.known)),
            "assignments": .array(collected.assignments.map(\.jsonValue)),
        ])
    }

    /// Newest first; pass `nextCursor` back as `cursor` for the next page.
    @Sendable func listAssignments(
        _ request: Request, context: EnvironmentContext<Needs.Reader>
    ) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let limit = try query.int("limit") ?? 100
        guard (1...Self.maximumPageSize).contains(limit) else {
            throw APIError.invalid("\"limit\" must be between 1 and \(Self.maximumPageSize).")
        }
        let cursor = try query.int("cursor")
        // One more than the page: a next page exists only if it has events.
        let events = try await store.assignments.assignmentEvents(
            in: path,
            matching: AssignmentEventQuery(
                user: try query.user(), feature: query.string("feature"), since: try query.time("since"),
                until: try query.time("until"),
                before: cursor.map(Int64.init), limit: limit + 1))
        let page = events.prefix(limit)
        let next: JSONValue = events.count > limit ? page.last.map { .number(Double($0.id)) } ?? .null : .null
        return .json(["events": .array(page.map(\.jsonValue)), "nextCursor": next])
    }

    @Sendable func featureStats(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        let feature = try context.feature()
        let time = try Query(request).time("at")
        let counts = try await store.assignments.assignmentCounts(of: feature, in: path, at: time)
        return .json(counts.jsonValue(feature: feature, at: time ?? Date()))
    }

    @Sendable func listUnlocks(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response {
        let path = context.path
        let query = Query(request)
        let records = try await store.assignments.unlocks(
            in: path, user: try query.user(), feature: query.string("feature"), history: try query.bool("history"))
        return .json(.array(records.map(\.jsonValue)))
    }

    @Sendable func evaluateUser(_ request: Request, context: EnvironmentContext<Needs.Reader>) async throws -> Response
    {
        let path = context.path
        let query = Query(request)
        guard let user = try query.user() else { throw APIError.invalid("Name the user: ?user=ID.") }
        let attributes = try query.attributes(limits: .standard)
        return .json([
            "user": .string(user.rawValue),
            "features": .array(
                try await store.assignments.evaluate(user, in: path, attributes: attributes).map(\.jsonValue)),
        ])
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
