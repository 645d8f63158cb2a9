import FlagpoleCore
import Foundation

/// Reads events as apps send them: `{"id", "user", "goal", "value"?, "time", "feature"?}`, with
/// `time` as ISO 8601 (with its offset) or Unix milliseconds. One malformed event is refused
/// with its reason; the others are read.
public enum EventParser {
    /// The events of a batch body: `{"events": [...]}` or a bare array.
    public static func batch(
        _ root: JSONNode, receivedAt: Date
    ) -> (
        events: [(index: Int, event: ReceivedEvent)], refused: [RefusedEvent]
    ) {
        let elements: [JSONNode]
        switch root.content {
        case .array(let nodes): elements = nodes
        case .object:
            guard case .array(let nodes)? = root.member("events")?.node.content else {
                return (
                    [],
                    [RefusedEvent(index: 0, id: nil, reason: .invalid, message: "the body needs `events`, an array")]
                )
            }
            elements = nodes
        default:
            return (
                [], [RefusedEvent(index: 0, id: nil, reason: .invalid, message: "the body is an object with `events`")]
            )
        }
        var events: [(index: Int, event: ReceivedEvent)] = []
        var refused: [RefusedEvent] = []
        for (index, node) in elements.enumerated() {
            switch event(node, index: index, receivedAt: receivedAt) {
            case .success(let event): events.append((index, event))
            case .failure(let refusal): refused.append(refusal)
            }
        }
        return (events, refused)
    }

    /// One event from its JSON object. Read straight from the parsed nodes: a batch is a
    /// thousand of them, on every request.
    public static func event(_ node: JSONNode, index: Int, receivedAt: Date) -> Result<ReceivedEvent, RefusedEvent> {
        guard case .object(let members) = node.content else {
            return .failure(RefusedEvent(index: index, id: nil, reason: .invalid, message: "an event is a JSON object"))
        }
        var id: String?
        var user: String?
        var goal: String?
        var feature: String?
        var value: Double?
        var valueProblem = false
        var time: Int64?
        var timeGiven = false
        for member in members {
            switch (member.key, member.node.content) {
            case ("id", .string(let text)): id = text
            case ("user", .string(let text)): user = text
            case ("goal", .string(let text)): goal = text
            case ("feature", .string(let text)): feature = text
            case ("value", .number(let number)): value = number
            case ("value", .null): value = nil
            case ("value", _): valueProblem = true
            case ("time", .number(let number)):
                timeGiven = true
                time = number.isFinite && number.rounded() == number ? Int64(exactly: number) : nil
            case ("time", .string(let text)):
                timeGiven = true
                time = parseTime(text)
            case ("time", _): timeGiven = true
            default: continue
            }
        }
        return make(
            id: id, user: user, goal: goal, feature: feature, valueProblem: valueProblem, value: value, time: time,
            timeGiven: timeGiven, index: index, receivedAt: receivedAt)
    }

    /// One event from a CSV row under the header `id,user,goal,value,time[,feature]` (any order).
    public static func event(
        csvRow fields: [String: String], index: Int, receivedAt: Date
    ) -> Result<
        ReceivedEvent, RefusedEvent
    > {
        let valueText = fields["value"].flatMap { $0.isEmpty ? nil : $0 }
        let value = valueText.flatMap(Double.init)
        let timeText = fields["time"] ?? ""
        return make(
            id: fields["id"], user: fields["user"], goal: fields["goal"],
            feature: fields["feature"].flatMap { $0.isEmpty ? nil : $0 },
            valueProblem: valueText != nil && value == nil, value: value,
            time: Int64(timeText) ?? parseTime(timeText), timeGiven: !timeText.isEmpty, index: index,
            receivedAt: receivedAt)
    }

    private static func make(
        id: String?, user: String?, goal: String?, feature: String?, valueProblem: Bool, value: Double?, time: Int64?,
        timeGiven: Bool, index: Int, receivedAt: Date
    ) -> Result<ReceivedEvent, RefusedEvent> {
        func refuse(_ reason: RefusedEvent.Reason, _ message: String) -> Result<ReceivedEvent, RefusedEvent> {
            .failure(RefusedEvent(index: index, id: id, reason: reason, message: message))
        }
        guard let id, !id.isEmpty, id.utf8.count <= 200 else {
            return refuse(.invalid, "`id` is a string of 1 to 200 bytes, unique per event: it makes retries safe")
        }
        guard let user, !user.isEmpty, user.utf8.count <= 200 else {
            return refuse(.invalid, "`user` is the id the user's app fetched with (a string of 1 to 200 bytes)")
        }
        guard let goal, !goal.isEmpty else { return refuse(.invalid, "`goal` names a goal, or `$exposure`") }
        if valueProblem { return refuse(.badValue, "`value` is a number") }
        guard let time else {
            return refuse(
                .invalid,
                timeGiven
                    ? "`time` is ISO 8601 with an offset (2026-11-24T10:00:00Z) or Unix milliseconds"
                    : "`time` says when it happened (ISO 8601 or Unix milliseconds)")
        }
        return .success(
            ReceivedEvent(
                id: id, user: UserID(rawValue: user), goal: goal, feature: feature, value: value, time: time,
                receivedAt: receivedAt.unixMilliseconds))
    }

    private static func parseTime(_ text: String) -> Int64? {
        let date =
            (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
        return date?.unixMilliseconds
    }
}
