import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// What one of the SDK's getters makes of a `variationValue` (§9 of the client API, in
/// docs/BUCKETEER.md): the getter the demo app's code reads each flag with.
enum BucketeerGetter: Sendable {
    case bool, int, double, string, object

    /// The demo app's flags and the getter its code reads each with.
    static let demoApp: [String: BucketeerGetter] = [
        "Example Feature Flag": .bool, "Example Development Flag": .bool, "Example Unlock Flag": .bool,
        "Example A/B Test": .string, "New Onboarding": .bool, "Example MVT Test": .string,
        "Checkout Button Colour": .string, "mainViewTitle": .string, "numberOfItemsToDisplay": .int,
        "someFeatureEnabled": .bool, "discountRate": .double, "theme": .object,
    ]

    /// The value the getter reads, as JSON to hold against OFREP's typed value; `nil` when it
    /// can't read it and the app gets its default.
    func read(_ text: String) -> JSONValue? {
        switch self {
        case .bool:
            // `Bool(String)`: "true" and "false" only.
            return Bool(text).map(JSONValue.bool)
        case .int:
            guard let number = Double(text) else { return nil }
            // `Int(Double(value))` traps on NaN, infinity and what an Int can't hold: a crash.
            guard number.isFinite, number >= -9.2e18, number <= 9.2e18 else {
                Issue.record("Int(Double(\"\(text)\")) traps: the app would crash")
                return nil
            }
            return .number(Double(Int(number)))
        case .double:
            return Double(text).map(JSONValue.number)
        case .string:
            return .string(text)
        case .object:
            // objectVariation and jsonVariation read a JSON object or array; anything else is .string or the default.
            guard let value = try? JSONParser.parse(Array(text.utf8)).value else { return nil }
            switch value {
            case .object, .array: return value
            default: return nil
            }
        }
    }
}

/// One install of an app: what the stock SDK keeps in UserDefaults (one token and `evaluatedAt`
/// for the install, not per user), its SQLite cache (a row per evaluation id, read back
/// `WHERE userId = ?`), and the events it has not had accepted yet.
struct BucketeerInstall: Sendable {
    var token = ""
    var evaluatedAt = "0"
    var tag: String?
    var cache: [String: BucketeerWire.Evaluation] = [:]
    var queue: [JSONValue] = []
}

/// The stock iOS SDK initialised for one user on an install, against one `apiEndpoint`: the
/// bodies it sends, what it keeps of an answer (§7), its getters and its event queue (§8).
/// Every answer is decoded as strictly as the SDK's `Codable` types decode it, and checked for
/// what every answer owes the SDK (§12 MUST 3) and what Flagpole promises beside it.
struct BucketeerApp {
    static let sdkVersion = "2.2.1"
    static let metadata: JSONValue = [
        "app_version": .string("1.4.0"), "os_version": .string("17.5"), "device_model": .string("iPhone15,2"),
        "device_type": .string("mobile"),
    ]

    let client: any TestClientProtocol
    var install: BucketeerInstall
    /// The apiEndpoint's path: `/t/demo/production`, or `""` for the host alone.
    var base: String
    var key: String
    var user: String
    var attributes: [String: String]
    var tag: String
    /// `updateUserAttributes` sets it; the next fetch clears it.
    var attributesUpdated = false
    /// The whole seconds events carry; the clock when `nil`.
    var eventTime: Int?
    private var metricsQueued: Set<Int> = []

    init(
        _ client: any TestClientProtocol, install: BucketeerInstall = BucketeerInstall(),
        base: String = "/t/demo/production", key: String, user: String, attributes: [String: String] = [:],
        tag: String = ""
    ) {
        self.client = client
        self.install = install
        self.base = base
        self.key = key
        self.user = user
        self.attributes = attributes
        self.tag = tag
        // §5: after the tag changed, the SDK presents no token.
        if let previous = install.tag, previous != tag { self.install.token = "" }
        self.install.tag = tag
    }

    /// One `get_evaluations` answer, with the token the app presented.
    struct Fetched {
        let answer: BucketeerWire.GetEvaluationsResponse
        let presented: String
        let text: String

        /// The whole set, with a new token (§7.2).
        func expectFull(_ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            #expect(answer.evaluations.forceUpdate, "\(what): forceUpdate", sourceLocation: sourceLocation)
            #expect(!answer.evaluations.evaluations.isEmpty, "\(what): no evaluations", sourceLocation: sourceLocation)
            #expect(
                answer.userEvaluationsId != presented, "\(what): the presented token back with a full answer",
                sourceLocation: sourceLocation)
        }

        /// §7.1 and MUST 4: the presented token back, no evaluations, `forceUpdate` false.
        func expectUnchanged(_ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            #expect(answer.userEvaluationsId == presented, "\(what): another token", sourceLocation: sourceLocation)
            #expect(
                answer.evaluations.evaluations.isEmpty && answer.evaluations.archivedFeatureIds.isEmpty
                    && !answer.evaluations.forceUpdate,
                "\(what): an unchanged answer has nothing in it: \(text)", sourceLocation: sourceLocation)
        }
    }

    /// The SDK's `get_evaluations` body.
    var requestBody: JSONValue {
        [
            "sdkVersion": .string(Self.sdkVersion), "sourceId": .number(2), "tag": .string(tag),
            "user": ["data": Self.strings(attributes), "id": .string(user)],
            "userEvaluationCondition": [
                "evaluatedAt": .string(install.evaluatedAt), "userAttributesUpdated": .bool(attributesUpdated),
            ],
            "userEvaluationsId": .string(install.token),
        ]
    }

    static func strings(_ values: [String: String]) -> JSONValue {
        .object(JSONObject(values.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .string($0.value)) }))
    }

    /// The SDK's headers: the key raw in `Authorization`.
    static func headers(_ key: String?) -> [HTTPField.Name: String] {
        var fields: [HTTPField.Name: String] = [.contentType: "application/json", .accept: "*/*"]
        if let key { fields[.authorization] = key }
        return fields
    }

    /// One `get_evaluations` call, decoded strictly and applied as §7 says.
    mutating func fetch(sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws -> Fetched {
        let presented = install.token
        let response = try await client.send(
            .post, "\(base)/get_evaluations", headers: Self.headers(key),
            body: JSONWriter(style: .compact).string(of: requestBody))
        let answer = try Self.decodeEvaluations(response, user: user, sourceLocation: sourceLocation)
        apply(answer, presented: presented)
        queueMetrics(size: response.body.readableBytes)
        return Fetched(answer: answer, presented: presented, text: response.text)
    }

    /// A `200` answer to `get_evaluations` for `user`, decoded as the SDK decodes it (§6) and
    /// checked for §12 MUST 3 and Flagpole's side of the contract.
    static func decodeEvaluations(
        _ response: TestResponse, user: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> BucketeerWire.GetEvaluationsResponse {
        try #require(response.status == .ok, "\(response.status): \(response.text)", sourceLocation: sourceLocation)
        let answer = try strict(BucketeerWire.GetEvaluationsResponse.self, response, sourceLocation: sourceLocation)
        let inner = answer.evaluations
        #expect(!answer.userEvaluationsId.isEmpty, "an empty token: every poll a fresh install")
        let now = Int64(Date().timeIntervalSince1970)
        #expect(
            inner.createdAt.wholeMatch(of: /-?[0-9]+/) != nil
                && Int64(inner.createdAt).map { $0 > 1_500_000_000 && $0 <= now + 300 } == true,
            "createdAt is unix seconds as a decimal string: \(inner.createdAt)", sourceLocation: sourceLocation)
        var ids: Set<String> = []
        var features: Set<String> = []
        for evaluation in inner.evaluations {
            // Compared by their bytes: the cache's WHERE userId = ? does not normalise.
            #expect(
                Array(evaluation.userId.utf8) == Array(user.utf8), "userId \(evaluation.userId) for \(user)",
                sourceLocation: sourceLocation)
            #expect(ids.insert(evaluation.id).inserted, "repeated id \(evaluation.id)", sourceLocation: sourceLocation)
            #expect(
                features.insert(evaluation.featureId).inserted, "\(evaluation.featureId) twice",
                sourceLocation: sourceLocation)
            #expect(
                Array(evaluation.id.utf8)
                    == Array("\(evaluation.featureId):\(evaluation.featureVersion):\(user)".utf8),
                "id \(evaluation.id): featureId:featureVersion:userId", sourceLocation: sourceLocation)
            #expect(
                evaluation.variationId == evaluation.variationName && !evaluation.variationId.isEmpty,
                "\(evaluation.featureId): the variant in both variation fields", sourceLocation: sourceLocation)
            #expect(
                [BucketeerWire.ReasonType.TARGET, .RULE, .DEFAULT, .OFF_VARIATION].contains(evaluation.reason.type),
                "\(evaluation.featureId): \(evaluation.reason.type) is the SDK's own", sourceLocation: sourceLocation)
            #expect(
                evaluation.reason.ruleId.isEmpty == (evaluation.reason.type != .RULE),
                "\(evaluation.featureId): a ruleId exactly with RULE", sourceLocation: sourceLocation)
        }
        return answer
    }

    /// `response` as JSON the strict way (declared so, no repeated key, no NaN), then as the SDK's type.
    static func strict<Value: Decodable>(
        _ type: Value.Type, _ response: TestResponse, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> Value {
        let contentType = response.headers[.contentType]?.split(separator: ";").first
        #expect(
            contentType?.trimmingCharacters(in: .whitespaces).lowercased() == "application/json",
            "Content-Type \(response.headers[.contentType] ?? "none")", sourceLocation: sourceLocation)
        _ = try JSONParser.parse(response.bytes)
        return try BucketeerWire.decode(type, response.bytes)
    }

    /// A refusal: one of `statuses`, and `{"error": {"code": STATUS, "message": "…"}}` (§10).
    static func expectError(
        _ response: TestResponse, _ statuses: HTTPResponse.Status...,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        #expect(
            statuses.contains(response.status), "\(response.status): \(response.text)", sourceLocation: sourceLocation)
        let error = try strict(BucketeerWire.ErrorResponse.self, response, sourceLocation: sourceLocation).error
        #expect(error.code == Int(response.status.code), "error.code \(error.code)", sourceLocation: sourceLocation)
        #expect(
            !error.message.trimmingCharacters(in: .whitespaces).isEmpty, "a message for the app's log",
            sourceLocation: sourceLocation)
    }

    /// §7: the same token changes nothing; `forceUpdate` replaces the user's rows; otherwise
    /// the evaluations are upserted and the archived ones removed.
    private mutating func apply(_ answer: BucketeerWire.GetEvaluationsResponse, presented: String) {
        attributesUpdated = false
        guard answer.userEvaluationsId != presented else { return }
        let inner = answer.evaluations
        var mine = inner.forceUpdate ? [:] : stored()
        for evaluation in inner.evaluations { mine[evaluation.featureId] = evaluation }
        for name in inner.archivedFeatureIds { mine[name] = nil }
        install.cache = install.cache.filter { $0.value.userId != user }
        for row in mine.values { install.cache[row.id] = row }
        install.token = answer.userEvaluationsId
        install.evaluatedAt = inner.createdAt
    }

    /// The cache as the SDK reads it, `WHERE userId = ?`, by feature.
    func stored() -> [String: BucketeerWire.Evaluation] {
        var byFeature: [String: BucketeerWire.Evaluation] = [:]
        for row in install.cache.values where Array(row.userId.utf8) == Array(user.utf8) {
            #expect(byFeature[row.featureId] == nil, "the cache holds \(row.featureId) twice for \(user)")
            byFeature[row.featureId] = row
        }
        return byFeature
    }

    /// What the cache gives each flag, comparable across installs and processes.
    func storedSummary() -> [String: String] {
        stored().mapValues {
            "\($0.id) \($0.variationId) \($0.variationValue) \($0.reason.type) \($0.reason.ruleId)"
        }
    }

    /// A fetch that must change nothing, the cache included.
    mutating func expectUnchangedPoll(
        _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) async throws {
        let before = storedSummary()
        try await fetch(sourceLocation: sourceLocation).expectUnchanged(what, sourceLocation: sourceLocation)
        #expect(storedSummary() == before, "\(what): the cache changed", sourceLocation: sourceLocation)
    }

    mutating func updateAttributes(_ attributes: [String: String]) {
        self.attributes = attributes
        attributesUpdated = true
    }

    // MARK: Getters and events

    /// What a getter gives the app: the value, or `nil` for a flag not cached (the app's
    /// default). Each call queues an evaluation event, `CLIENT` for a flag not cached (§8).
    mutating func variation(_ name: String, _ getter: BucketeerGetter) -> JSONValue? {
        guard let row = stored()[name] else {
            queueEvaluation(name, version: 0, variation: "", reason: "CLIENT", rule: "")
            return nil
        }
        queueEvaluation(
            name, version: row.featureVersion, variation: row.variationId, reason: row.reason.type.rawValue,
            rule: row.reason.ruleId)
        let value = getter.read(row.variationValue)
        #expect(value != nil, "\(user): the \(getter) getter can't read \(name)'s \(row.variationValue)")
        return value
    }

    /// The app reads each of its flags with its getter; the cache must hold only demo flags.
    mutating func readEveryFlag() {
        for name in stored().keys { #expect(BucketeerGetter.demoApp[name] != nil, "\(name) is no flag of the demo") }
        for (name, getter) in BucketeerGetter.demoApp.sorted(by: { $0.key < $1.key }) { _ = variation(name, getter) }
    }

    private mutating func queue(_ type: Int, _ payload: [(String, JSONValue)]) -> JSONValue {
        let common: [(String, JSONValue)] = [
            ("timestamp", .number(Double(eventTime ?? Int(Date().timeIntervalSince1970)))), ("sourceId", .number(2)),
            ("sdkVersion", .string(Self.sdkVersion)), ("metadata", Self.metadata),
        ]
        let event: JSONValue = [
            "id": .string(UUID().uuidString), "type": .number(Double(type)),
            "event": .object(JSONObject((payload + common).map { .init(key: $0.0, value: $0.1) })),
        ]
        install.queue.append(event)
        return event
    }

    private var userValue: JSONValue { ["id": .string(user), "data": Self.strings(attributes)] }

    private mutating func queueEvaluation(_ name: String, version: Int, variation: String, reason: String, rule: String)
    {
        _ = queue(
            3,
            [
                ("@type", .string("type.googleapis.com/bucketeer.event.client.EvaluationEvent")),
                ("featureId", .string(name)), ("featureVersion", .number(Double(version))),
                ("variationId", .string(variation)), ("userId", .string(user)), ("user", userValue),
                ("reason", ["type": .string(reason), "ruleId": .string(rule)]), ("tag", .string(tag)),
            ])
    }

    /// `track(goalId:value:)`: a goal event.
    @discardableResult
    mutating func track(_ goal: String, value: Double = 0) -> JSONValue {
        queue(
            1,
            [
                ("@type", .string("type.googleapis.com/bucketeer.event.client.GoalEvent")), ("goalId", .string(goal)),
                ("value", .number(value)), ("userId", .string(user)), ("user", userValue), ("tag", .string(tag)),
            ])
    }

    /// After each fetch, a latency and a size metrics event, one of each kind while queued.
    private mutating func queueMetrics(size: Int) {
        for (kind, name, field, value) in [
            (1, "LatencyMetricsEvent", "latencySecond", 0.004), (2, "SizeMetricsEvent", "sizeByte", Double(size)),
        ] where !metricsQueued.contains(kind) {
            metricsQueued.insert(kind)
            let inner: JSONValue = [
                "@type": .string("type.googleapis.com/bucketeer.event.client.\(name)"), "apiId": .number(2),
                "labels": ["tag": .string(tag)], field: .number(value),
            ]
            _ = queue(
                4,
                [
                    ("@type", .string("type.googleapis.com/bucketeer.event.client.MetricsEvent")),
                    ("type", .number(Double(kind))), ("event", inner),
                ])
        }
    }

    /// `register_events` with the queue (or `events`): the answer decoded strictly, and the
    /// accepted and not-retriable events dropped from the queue (§8). Returns the answer's errors.
    mutating func flush(
        _ events: [JSONValue]? = nil, envelope: [(String, JSONValue)]? = nil,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) async throws -> [String: BucketeerWire.EventError] {
        let batch = events ?? install.queue
        let members =
            (envelope ?? [("sdkVersion", .string(Self.sdkVersion)), ("sourceId", .number(2))])
            + [("events", .array(batch))]
        let response = try await client.send(
            .post, "\(base)/register_events", headers: Self.headers(key),
            body: JSONWriter(style: .compact).string(
                of: .object(JSONObject(members.map { .init(key: $0.0, value: $0.1) })))
        )
        try #require(response.status == .ok, "\(response.status): \(response.text)", sourceLocation: sourceLocation)
        let errors = try Self.strict(
            BucketeerWire.RegisterEventsResponse.self, response, sourceLocation: sourceLocation
        )
        .errors
        let sent = Set(batch.compactMap { $0["id"]?.string })
        #expect(Set(errors.keys).isSubset(of: sent), "errors for events not sent", sourceLocation: sourceLocation)
        let done = sent.subtracting(errors.filter(\.value.retriable).keys)
        install.queue.removeAll { done.contains($0["id"]?.string ?? "") }
        metricsQueued = Set(
            install.queue.compactMap { $0["type"] == .number(4) ? $0["event"]?["type"]?.number.map { Int($0) } : nil })
        return errors
    }

    // MARK: OFREP

    /// Every evaluation of a full answer is what OFREP's bulk evaluation gives the same user
    /// and attributes: the same flags, the getter's value equal to OFREP's typed value, the
    /// variation its variant, the reason mapped from its reason, `featureVersion` its revision.
    func expectSameAsOFREP(
        _ fetched: Fetched, environment: String = "production", key ofrepKey: String? = nil,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) async throws {
        var context: [(String, JSONValue)] = [("targetingKey", .string(user))]
        context += attributes.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }
        let body: JSONValue = ["context": .object(JSONObject(context.map { .init(key: $0.0, value: $0.1) }))]
        let query = tag.isEmpty ? "" : "?tag=\(segment(tag))"
        let response = try await client.send(
            .post, "/t/demo/\(environment)/ofrep/v1/evaluate/flags\(query)", key: ofrepKey,
            body: JSONWriter(style: .compact).string(of: body))
        try #require(response.status == .ok, "OFREP: \(response.text)", sourceLocation: sourceLocation)
        var items: [String: JSONValue] = [:]
        for item in try response.json["flags"]?.array ?? [] { items[item["key"]?.string ?? ""] = item }
        let evaluations = fetched.answer.evaluations.evaluations
        #expect(
            Set(evaluations.map(\.featureId)) == Set(items.keys),
            "\(user): Bucketeer's flags against OFREP's \(items.keys.sorted())", sourceLocation: sourceLocation)
        for evaluation in evaluations {
            let name = evaluation.featureId
            guard let item = items[name], let getter = BucketeerGetter.demoApp[name] else { continue }
            #expect(item["errorCode"] == nil, "\(name): OFREP's error \(item)", sourceLocation: sourceLocation)
            let value = getter.read(evaluation.variationValue)
            #expect(
                value.map { Self.same($0, item["value"] ?? .null) } == true,
                "\(user) \(name): the \(getter) getter reads \(evaluation.variationValue), OFREP's value is \(item["value"] ?? .null)",
                sourceLocation: sourceLocation)
            #expect(
                item["variant"]?.string == evaluation.variationName, "\(name) variant", sourceLocation: sourceLocation)
            let rule = item["metadata"]?["rule"]?.string
            let expected: BucketeerWire.Reason =
                switch item["reason"]?.string {
                case "DISABLED": .init(type: .OFF_VARIATION)
                case "TARGETING_MATCH": rule.map { .init(type: .RULE, ruleId: $0) } ?? .init(type: .TARGET)
                default: .init(type: .DEFAULT)
                }
            #expect(
                evaluation.reason == expected, "\(name): reason against OFREP's \(item)", sourceLocation: sourceLocation
            )
            #expect(
                item["metadata"]?["revision"]?.number == Double(evaluation.featureVersion),
                "\(name): featureVersion against OFREP's revision", sourceLocation: sourceLocation)
        }
    }

    /// JSON equality with objects compared as sets of members.
    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.object(let left), .object(let right)):
            let rightMembers = Dictionary(right.members.map { ($0.key, $0.value) }) { first, _ in first }
            return left.members.count == right.members.count
                && left.members.allSatisfy { member in rightMembers[member.key].map { same(member.value, $0) } == true }
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        default:
            return left == right
        }
    }
}
