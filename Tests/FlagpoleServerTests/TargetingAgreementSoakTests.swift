import FlagpoleCore
import FlagpoleStore
import FlagpoleTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import FlagpoleServer

/// One user, one group, whichever client asks, with rules: a generated population with random
/// attributes, under random segments and rules, asks the real server (on a real port, so the
/// event loop's answers are checked too) through every surface in a random order. Each answer
/// must be the reference evaluator's. A disagreement is shrunk (rules, clauses and attributes
/// dropped while it persists) and reported with its seed.
@Suite("Rules agree across every client and with the reference")
struct TargetingAgreementSoakTests {
    static let path = TestServer.acme
    static let features = #"""
        {"features": [
            {"name": "Checkout", "test-variations": ["A", "B", "C"], "test-biases": [40, 40, 20]},
            {"name": "Theme", "test-variations": ["red", "green", "blue", "gold"], "test-biases": [25, 25, 25, 25]}
        ]}
        """#
    static let configs = #"""
        {"configs": [{"name": "checkoutTitle", "type": "string", "default": "none", "follows": "Checkout",
                      "values": {"A": "title-A", "B": "title-B", "C": "title-C"}}]}
        """#
    static let tests: [(name: String, variations: [String], biases: [Double])] = [
        ("Checkout", ["A", "B", "C"], [40, 40, 20]), ("Theme", ["red", "green", "blue", "gold"], [25, 25, 25, 25]),
    ]
    static let attributeNames = ["country", "age", "plan", "beta"]
    static let attributeValues = [
        "DE", "FR", "34", "18", "7", "true", "false", "pro", "pr", "x", "5.2.1", "5.10", "5.2.1 (125)", "1735689599",
        "2024-12-31",
    ]
    static let options = EditOptions(actor: "test")

    /// What one user sent, and the order they asked in.
    struct Case: CustomStringConvertible {
        var user: UserID
        var attributes: [String: String]
        var rules: [String: [TargetingRule]]
        var segments: [Segment]
        var order: [Surface]

        var description: String {
            let rules = rules.sorted { $0.key < $1.key }.map { name, rules in
                "\(name): " + rules.map { JSONWriter(style: .compact).string(of: $0.jsonValue) }.joined(separator: ", ")
            }
            let segments = segments.map { JSONWriter(style: .compact).string(of: $0.jsonValue) }
            return "user \(user) attributes \(attributes) asking \(order)\n  rules \(rules)\n  segments \(segments)"
        }
    }

    enum Surface: CaseIterable { case features, configs, ofrep, evaluate }

    @Test(
        "Every user of a generated population gets the reference's group from features.json, configs.json, OFREP and evaluate"
    )
    func agreement() async throws {
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_AGREEMENT_SEED")
        let server = try await TestServer(
            configuration: ServerConfiguration(
                port: 0, accessLogLevel: .warning, newUsersPerSecond: 1e6, newUserBurst: 1_000_000))
        let store = server.store
        _ = try await store.catalog.importDocument(
            Array(Self.features.utf8), into: Self.path, options: ImportOptions(actor: "test"))
        _ = try await store.catalog.importConfigs(
            try ConfigsDecoder.decode(Array(Self.configs.utf8)).0, in: Self.path, options: Self.options)
        var salts: [String: String] = [:]
        for test in Self.tests { salts[test.name] = try await store.catalog.feature(test.name, in: Self.path).salt }
        let reader = server.key("acme", .reader)
        let testSalts = salts
        let application = ServerApplication.make(
            store: store, configuration: server.configuration, registry: testRegistry, logger: Logger(label: "test"))
        try await application.test(.live) { client in
            let salts = testSalts
            var random = SeededGenerator(seed: seed)
            var checked = 0
            for round in 0..<8 {
                let users = (0..<30).map { UserID(rawValue: "r\(round)-u\($0)") }
                let segments = Self.segments(listing: users, using: &random)
                let rules = Dictionary(
                    uniqueKeysWithValues: Self.tests.map { ($0.name, Self.rules(for: $0.variations, using: &random)) })
                for user in users {
                    var attributes: [String: String] = [:]
                    for name in Self.attributeNames where Bool.random(using: &random) {
                        attributes[name] = Self.attributeValues.randomElement(using: &random)!
                    }
                    let found = Case(
                        user: user, attributes: attributes, rules: rules, segments: segments,
                        order: Surface.allCases.shuffled(using: &random))
                    if let failure = try await Self.check(
                        found, store: store, client: client, reader: reader, salts: salts,
                        isFresh: checked == 0
                            || user == users.first)
                    {
                        let shrunk = try await Self.shrink(
                            found, failure: failure, store: store, client: client, reader: reader, salts: salts)
                        Issue.record("seed \(seed): \(shrunk.failure)\n  \(shrunk.case)")
                        return
                    }
                    checked += 1
                }
            }
            #expect(checked == 240)
        }
    }

    // MARK: Generation

    static func segments(listing users: [UserID], using random: inout SeededGenerator) -> [Segment] {
        [
            Segment(name: "staff", users: Set(users.filter { _ in Int.random(in: 0..<4, using: &random) == 0 })),
            Segment(name: "germany", clauses: [Clause(attribute: "country", op: .equals, values: [.string("DE")])]),
            Segment(
                name: "adults", clauses: [Clause(attribute: "age", op: .greaterThanOrEqual, values: [.number(18)])]),
        ]
    }

    static func rules(for variations: [String], using random: inout SeededGenerator) -> [TargetingRule] {
        let clauses = ClauseGenerator(
            attributes: attributeNames, segments: ["staff", "germany", "adults"],
            values: attributeValues.map(AttributeValue.string))
        return (0..<Int.random(in: 0...3, using: &random)).map { index in
            let serve: RuleServe
            if Bool.random(using: &random) {
                serve = .variation(variations.randomElement(using: &random)!)
            } else {
                let first = Double(Int.random(in: 0...100, using: &random))
                let pair = variations.shuffled(using: &random).prefix(2)
                serve = .split([
                    .init(variation: pair.first!, weight: first), .init(variation: pair.last!, weight: 100 - first),
                ])
            }
            return TargetingRule(
                id: "rule-\(index)",
                clauses: (0..<Int.random(in: 0...2, using: &random)).map { _ in clauses.clause(using: &random) },
                serve: serve)
        }
    }

    // MARK: Checking

    /// Puts the case's segments and rules in place (writing nothing when they already are),
    /// forgets the user unless `isFresh`, asks every surface in the case's order, and returns the
    /// first disagreement with the reference, if any.
    static func check(
        _ found: Case, store: FeatureStore, client: any TestClientProtocol, reader: String, salts: [String: String],
        isFresh: Bool = false
    ) async throws -> String? {
        for segment in found.segments { _ = try await store.catalog.setSegment(segment, in: path, options: options) }
        for (name, rules) in found.rules {
            _ = try await store.catalog.setRules(rules, ofFeature: name, in: path, options: options)
        }
        if !isFresh { _ = try await store.assignments.forget(found.user, in: path.tenant, actor: "test") }
        let context = EvaluationContext(
            user: found.user, attributes: found.attributes.mapValues { AttributeValue.string($0) })
        let segments = Dictionary(uniqueKeysWithValues: found.segments.map { ($0.name, $0) })
        var expected: [String: String] = [:]
        for test in tests {
            let point = UserPoints(salt: salts[test.name]!).point(for: found.user.rawValue)
            expected[test.name] =
                TargetingReference.variation(
                    found.rules[test.name] ?? [], context, segments, point: point, variations: test.variations,
                    biases: test.biases
                ).variation
        }
        let query =
            "user=\(encoded(found.user.rawValue))"
            + found.attributes.sorted { $0.key < $1.key }.map { "&attr.\($0.key)=\(encoded($0.value))" }.joined()
        for surface in found.order {
            let answers: [String: String?]
            switch surface {
            case .features:
                let bytes = try await client.send(.get, "/t/acme/production/features.json?\(query)").bytes
                answers = Dictionary(
                    uniqueKeysWithValues: try tests.map {
                        ($0.name, try OFREPTests.pinnedVariation(of: $0.name, in: bytes))
                    })
            case .configs:
                let title = try await client.send(.get, "/t/acme/production/configs.json?\(query)").json[
                    "checkoutTitle"]
                answers = ["Checkout": title?.string.map { String($0.dropFirst("title-".count)) }]
            case .ofrep:
                var members = found.attributes.map { "\"\($0.key)\": \"\($0.value)\"" }
                members.append("\"targetingKey\": \"\(found.user.rawValue)\"")
                let bulk = try await client.send(
                    .post, "/t/acme/production/ofrep/v1/evaluate/flags",
                    body: "{\"context\": {\(members.joined(separator: ", "))}}"
                ).json
                let flags = bulk["flags"]?.array ?? []
                answers = Dictionary(
                    uniqueKeysWithValues: tests.map { test in
                        (test.name, flags.first { $0["key"]?.string == test.name }?["variant"]?.string)
                    })
            case .evaluate:
                let evaluated =
                    try await client.send(
                        .get, "/api/v1/tenants/acme/environments/production/evaluate?\(query)", key: reader
                    ).json["features"]?.array ?? []
                answers = Dictionary(
                    uniqueKeysWithValues: tests.map { test in
                        (test.name, evaluated.first { $0["feature"]?.string == test.name }?["variation"]?.string)
                    })
            }
            for (name, answer) in answers where answer != expected[name] {
                return "\(surface) gave \(name) \(answer ?? "nothing") where the reference says \(expected[name]!)"
            }
        }
        return nil
    }

    /// Drops rules, clauses and attributes one at a time while the disagreement persists: the
    /// smallest case found that still fails.
    static func shrink(
        _ failing: Case, failure: String, store: FeatureStore, client: any TestClientProtocol, reader: String,
        salts: [String: String]
    ) async throws -> (case: Case, failure: String) {
        var current = (case: failing, failure: failure)
        var isShrinking = true
        while isShrinking {
            isShrinking = false
            for candidate in smaller(current.case) {
                if let failure = try await check(candidate, store: store, client: client, reader: reader, salts: salts)
                {
                    current = (candidate, failure)
                    isShrinking = true
                    break
                }
            }
        }
        return current
    }

    /// Every case one step smaller than `found`.
    static func smaller(_ found: Case) -> [Case] {
        var cases: [Case] = []
        for (name, rules) in found.rules {
            for index in rules.indices {
                var without = found
                without.rules[name]!.remove(at: index)
                cases.append(without)
                for clause in rules[index].clauses.indices {
                    var fewer = found
                    fewer.rules[name]![index].clauses.remove(at: clause)
                    cases.append(fewer)
                }
            }
        }
        for key in found.attributes.keys {
            var without = found
            without.attributes[key] = nil
            cases.append(without)
        }
        if found.order.count > 1 {
            for index in found.order.indices {
                var without = found
                without.order.remove(at: index)
                cases.append(without)
            }
        }
        return cases
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
}
