import FlagpoleTestSupport
import Foundation
import Testing

@testable import FlagpoleCore

@Suite("Targeting: app versions, clauses, rules and segments")
struct TargetingTests {
    static func version(_ text: String) -> AppVersion { AppVersion(text)! }

    @Test(
        "App versions compare as apps write them",
        arguments: [
            ("5.2", "5.2.0", 0), ("5.2.1", "5.2", 1), ("5.10", "5.9", 1), ("v5.2", "5.2", 0), ("5", "5.0.0.0", 0),
            ("5.2.1 (123)", "5.2.1 (124)", -1), ("5.2.1 (123)", "5.2.1", 0), ("5.2.1", "5.2.1 (1)", 0),
            ("5.2.1", "5.2.1 (130)", 0), ("5.2.0-beta.2+7", "5.2.0-beta.2", 0),
            ("5.2.0-beta.2+7", "5.2.0-beta.2+8", -1),
            ("5.2.1+7", "5.2.1 (7)", 0), ("5.2.0-beta.2", "5.2.0", -1), ("5.2.0-beta.2", "5.2.0-beta.10", -1),
            ("5.2.0-alpha", "5.2.0-beta", -1), ("5.2.0-beta", "5.2.0-beta.1", -1), ("5.2.0-1", "5.2.0-alpha", -1),
            ("6.0-rc.1", "5.9.9", 1), (" 5.2 ", "5.2", 0),
        ])
    func versionOrder(_ a: String, _ b: String, _ order: Int) {
        #expect(Self.version(a).compare(to: Self.version(b)) == order, "\(a) vs \(b)")
        // Builds count only when both name one, whichever side: the reverse is always the opposite.
        #expect(Self.version(b).compare(to: Self.version(a)) == -order, "\(b) vs \(a)")
    }

    @Test(
        "Text that is not a version is refused, and bounded",
        arguments: [
            "", "abc", "5..2", "5.2.x", ".5", "5.", "-5", "5.2 (abc)", "5.2-", "5.2-be ta", "1.2.3.4.5.6.7.8.9",
            "9999999999", String(repeating: "1.", count: 40) + "1", "5,2",
        ])
    func notVersions(_ text: String) {
        #expect(AppVersion(text) == nil, "\(text)")
    }

    static let context = EvaluationContext(
        user: UserID(rawValue: "user-1"),
        attributes: [
            "country": .string("DE"), "age": .number(34), "ageText": .string("34"), "beta": .bool(true),
            "betaText": .string("true"), "appVersion": .string("5.2.1 (40)"), "numericVersion": .number(5.2),
            "installed": .string("2026-03-01T10:00:00Z"), "installedSeconds": .number(1_772_359_200),
            "installedText": .string("1772359200"), "email": .string("ana@example.com"), "junk": .string("abc"),
            "premium": .string("yes"), "plainVersion": .string("5.2.1"),
        ])

    static func clause(_ attribute: String?, _ op: ClauseOperator, _ values: AttributeValue...) -> Clause {
        Clause(attribute: attribute, op: op, values: values)
    }

    static let segments = SegmentLookup([
        Segment(name: "staff", users: [UserID(rawValue: "user-1")]),
        Segment(name: "germany", clauses: [clause("country", .equals, .string("DE"))]),
        Segment(name: "nobody"),
    ])

    @Test(
        "Each operator on each kind of attribute, missing ones and unreadable ones false",
        arguments: [
            (clause("country", .equals, .string("DE")), true), (clause("country", .equals, .string("de")), false),
            (clause("age", .equals, .number(34)), true), (clause("ageText", .equals, .number(34)), true),
            (clause("age", .equals, .string("34")), true), (clause("beta", .equals, .bool(true)), true),
            (clause("betaText", .equals, .bool(true)), true), (clause("beta", .equals, .string("true")), true),
            (clause("beta", .equals, .number(1)), false), (clause("missing", .equals, .string("x")), false),
            (clause("country", .notEquals, .string("FR")), true), (clause("missing", .notEquals, .string("FR")), false),
            (clause("country", .in, .string("AT"), .string("DE")), true),
            (clause("country", .notIn, .string("AT"), .string("DE")), false),
            (clause("missing", .notIn, .string("AT")), false), (clause("targetingKey", .in, .string("user-1")), true),
            (clause("email", .endsWith, .string("@example.com")), true),
            (clause("email", .startsWith, .string("bob"), .string("ana")), true),
            (clause("email", .contains, .string("EXAMPLE")), false), (clause("age", .startsWith, .string("3")), true),
            (clause("age", .greaterThan, .number(18)), true), (clause("ageText", .lessThanOrEqual, .number(34)), true),
            (clause("age", .lessThan, .number(34)), false), (clause("country", .greaterThan, .number(1)), false),
            (clause("beta", .greaterThanOrEqual, .number(0)), false),
            (clause("appVersion", .versionGreaterThanOrEqual, .string("5.2")), true),
            (clause("appVersion", .versionEquals, .string("5.2.1")), true),
            (clause("appVersion", .versionLessThan, .string("5.2.1 (41)")), true),
            (clause("appVersion", .versionGreaterThan, .string("5.2.1")), false),
            (clause("numericVersion", .versionEquals, .string("5.2.0")), true),
            (clause("country", .versionLessThan, .string("9")), false),
            (clause("installed", .after, .string("2026-01-01")), true),
            (clause("installed", .before, .string("2026-03-01T09:00:00Z")), false),
            (clause("installedSeconds", .after, .string("2026-02-28T23:00:00Z")), true),
            (clause("country", .before, .string("2030-01-01")), false),
            // Seconds since 1970 written as text, as a query parameter always is.
            (clause("installedText", .after, .string("2026-02-28T23:00:00Z")), true),
            (clause("installedText", .before, .string("2026-03-01T09:00:00Z")), false),
            // A value the operator can't read makes a negative clause false too.
            (clause("junk", .notEquals, .number(18)), false), (clause("junk", .notIn, .number(18), .number(21)), false),
            (clause("premium", .notEquals, .bool(true)), false), (clause("age", .notEquals, .bool(true)), false),
            (clause("ageText", .notEquals, .number(18)), true), (clause("betaText", .notEquals, .bool(false)), true),
            (clause("country", .notIn, .string("AT"), .number(1)), false),
            // A build number breaks ties only when both sides name one.
            (clause("plainVersion", .versionEquals, .string("5.2.1 (123)")), true),
            (clause("plainVersion", .versionLessThan, .string("5.2.1 (130)")), false),
            (clause("appVersion", .versionLessThan, .string("5.2.1 (130)")), true),
            (clause(nil, .inSegment, .string("staff")), true), (clause(nil, .inSegment, .string("germany")), true),
            (clause(nil, .inSegment, .string("nobody"), .string("unknown")), false),
            (clause(nil, .notInSegment, .string("nobody")), true),
            (clause(nil, .notInSegment, .string("staff")), false),
        ])
    func operators(_ clause: Clause, _ expected: Bool) {
        #expect(clause.matches(Self.context, segments: Self.segments) == expected, "\(clause)")
    }

    @Test(
        "A string reads as a number only as JSON writes one; times take a date alone and milliseconds since 1970",
        arguments: [
            (clause("v", .equals, .number(34)), "0x22", false), (clause("v", .greaterThan, .number(0)), "0x22", false),
            (clause("v", .equals, .number(34)), "+34", false), (clause("v", .equals, .number(40)), " 40", false),
            (clause("v", .equals, .number(7)), "007", false), (clause("v", .greaterThan, .number(0)), "inf", false),
            (clause("v", .equals, .number(100)), "1e2", true), (clause("v", .lessThan, .number(0)), "-2.5", true),
            (clause("v", .equals, .string("0x22")), "0x22", true),
            (clause("v", .before, .string("2026-11-23T00:00:01Z")), "2026-11-23", true),
            (clause("v", .after, .string("2026-11-22T23:59:59Z")), "2026-11-23", true),
            // Milliseconds, as JavaScript's Date.now() sends them: 2026-03-01T10:00:00Z.
            (clause("v", .after, .string("2026-03-01T09:59:59Z")), "1772359200000", true),
            (clause("v", .before, .string("2026-03-01T10:00:01Z")), "1772359200000", true),
            (clause("v", .after, .string("2026-03-01T09:59:59Z")), "1772359200", true),
        ])
    func attributeReadings(_ clause: Clause, _ attribute: String, _ expected: Bool) {
        let context = EvaluationContext(user: UserID(rawValue: "u"), attributes: ["v": .string(attribute)])
        #expect(clause.matches(context, segments: Self.segments) == expected, "\(clause) on \"\(attribute)\"")
        #expect(
            TargetingReference.holds(clause, context, [:]) == expected, "the reference, \(clause) on \"\(attribute)\"")
    }

    @Test(
        "Version bounds that meet but for one side's build can still match: no warning; truly empty ranges still warn")
    func versionBoundsWithBuilds() throws {
        func warns(_ lower: (ClauseOperator, String), _ upper: (ClauseOperator, String)) -> Bool {
            let rule = TargetingRule(
                id: "r",
                clauses: [
                    Clause(attribute: "appVersion", op: lower.0, values: [.string(lower.1)]),
                    Clause(attribute: "appVersion", op: upper.0, values: [.string(upper.1)]),
                ], serve: .variation("A"))
            return [rule].problems(variations: ["A", "B"], segments: []).contains { $0.message.contains("never match") }
        }
        #expect(!warns((.versionGreaterThanOrEqual, "5.2.1"), (.versionLessThan, "5.2.1 (130)")))
        let matching = EvaluationContext(
            user: UserID(rawValue: "u"), attributes: ["appVersion": .string("5.2.1 (123)")])
        #expect(
            Clause(attribute: "appVersion", op: .versionGreaterThanOrEqual, values: [.string("5.2.1")]).matches(
                matching, segments: Self.segments))
        #expect(
            Clause(attribute: "appVersion", op: .versionLessThan, values: [.string("5.2.1 (130)")]).matches(
                matching, segments: Self.segments))
        #expect(!warns((.versionGreaterThan, "5.2.1 (120)"), (.versionLessThanOrEqual, "5.2.1")))
        #expect(warns((.versionGreaterThanOrEqual, "5.2.1 (130)"), (.versionLessThan, "5.2.1")))
        #expect(warns((.versionGreaterThanOrEqual, "5.3"), (.versionLessThan, "5.2.9 (1)")))
        #expect(warns((.versionGreaterThan, "5.2.1 (130)"), (.versionLessThan, "5.2.1 (130)")))
    }

    @Test("The first rule that matches decides; a split buckets by the feature's point")
    func firstMatch() {
        let rules = [
            TargetingRule(
                id: "france", clauses: [Self.clause("country", .equals, .string("FR"))], serve: .variation("A")),
            TargetingRule(
                id: "germany-adults",
                clauses: [
                    Self.clause("country", .equals, .string("DE")), Self.clause("age", .greaterThan, .number(18)),
                ],
                serve: .split([.init(variation: "A", weight: 20), .init(variation: "B", weight: 80)])),
            TargetingRule(id: "everyone", clauses: [], serve: .variation("A")),
        ]
        let low = rules.firstMatch(Self.context, point: 19.99, segments: .none)
        #expect(low?.rule.id == "germany-adults" && low?.index == 1 && low?.variation == "A")
        #expect(rules.firstMatch(Self.context, point: 20, segments: .none)?.variation == "B")
        var child = Self.context
        child.attributes["age"] = .number(12)
        #expect(rules.firstMatch(child, point: 50, segments: .none)?.rule.id == "everyone")
        #expect(Array(rules.prefix(2)).firstMatch(child, point: 50, segments: .none) == nil)
    }

    // MARK: Decoding and validation

    static func rulesError(_ text: String, config: ConfigType? = nil) -> [ConfigIssue] {
        do {
            _ = try TargetingDecoder.decodeRules(Array(text.utf8), configType: config)
            return []
        } catch {
            return error.issues
        }
    }

    @Test(
        "Bad rules are refused with what, where and how to fix it",
        arguments: [
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "like", "values": ["x"]}], "serve": {"variation": "A"}}]}"#,
                "unknown operator \"like\"", "/rules/0/clauses/0/operator"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "lessThan", "values": ["abc"]}], "serve": {"variation": "A"}}]}"#,
                "lessThan can't compare with the string \"abc\"", "/rules/0/clauses/0/values/0"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "versionEquals", "values": ["5.x"]}], "serve": {"variation": "A"}}]}"#,
                "versionEquals can't compare", "/rules/0/clauses/0/values/0"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "before", "values": ["tomorrow"]}], "serve": {"variation": "A"}}]}"#,
                "before can't compare", "/rules/0/clauses/0/values/0"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "startsWith", "values": [5]}], "serve": {"variation": "A"}}]}"#,
                "startsWith can't compare with the number 5", "/rules/0/clauses/0/values/0"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "equals", "values": ["x", "y"]}], "serve": {"variation": "A"}}]}"#,
                "equals compares with one value, not 2", "/rules/0/clauses/0/values"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "in", "values": []}], "serve": {"variation": "A"}}]}"#,
                "in needs \"values\": a non-empty array", "/rules/0/clauses/0/values"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"operator": "in", "values": ["x"]}], "serve": {"variation": "A"}}]}"#,
                "in needs an \"attribute\"", "/rules/0/clauses/0/attribute"
            ),
            (
                #"{"rules": [{"id": "r", "clauses": [{"attribute": "a", "operator": "inSegment", "values": ["s"]}], "serve": {"variation": "A"}}]}"#,
                "inSegment takes segment names", "/rules/0/clauses/0/attribute"
            ),
            (
                #"{"rules": [{"id": "r", "clause": [], "serve": {"variation": "A"}}]}"#, "unknown key \"clause\"",
                "/rules/0/clause"
            ),
            (
                #"{"rules": [{"id": "r", "serve": {"variation": "A"}}, {"id": "r", "serve": {"variation": "B"}}]}"#,
                "the id \"r\" is already the rule's at /rules/0", "/rules/1/id"
            ),
            (
                #"{"rules": [{"id": "r", "serve": {"split": [{"variation": "A", "weight": 30}, {"variation": "B", "weight": 30}]}}]}"#,
                "the weights sum to 60, not 100", "/rules/0/serve/split"
            ),
            (#"{"rules": [{"id": "r", "serve": {"value": 3}}]}"#, "a feature's rule serves", "/rules/0/serve/value"),
            (#"{"rules": [{"id": "bad id!", "serve": {"variation": "A"}}]}"#, "a rule needs an \"id\"", "/rules/0/id"),
            (#"{"rules": [{"id": "r"}]}"#, "a rule needs \"serve\"", "/rules/0/serve"),
            (#"{"rules": {}}"#, "rules are an object with a \"rules\" array", ""),
        ])
    func refusedRules(_ text: String, _ message: String, _ pointer: String) throws {
        let issues = Self.rulesError(text)
        let issue = try #require(issues.first { $0.message.contains(message) }, "\(issues)")
        #expect(issue.pointer.description == pointer)
        #expect(issue.location != nil, "every refusal has its line and column")
        #expect(!issue.fix.isEmpty)
    }

    @Test("A config's rules serve values of its type, checked as its default is")
    func configRules() throws {
        let (rules, _) = try TargetingDecoder.decodeRules(
            Array(
                #"{"rules": [{"id": "de", "clauses": [{"attribute": "country", "operator": "in", "values": ["DE"]}], "serve": {"value": 20}}]}"#
                    .utf8),
            configType: .int)
        #expect(rules.first?.serve == .value(.int(20)))
        #expect(!Self.rulesError(#"{"rules": [{"id": "de", "serve": {"value": "20"}}]}"#, config: .int).isEmpty)
        #expect(!Self.rulesError(#"{"rules": [{"id": "de", "serve": {"variation": "A"}}]}"#, config: .int).isEmpty)
    }

    @Test("Validation: unknown variations and segments are errors; rules that can never match, warnings")
    func validation() throws {
        let text = #"""
            {"rules": [
              {"id": "to-c", "serve": {"variation": "C"}},
              {"id": "in-ghost", "clauses": [{"operator": "inSegment", "values": ["ghosts"]}], "serve": {"variation": "A"}},
              {"id": "two-countries", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]},
                  {"attribute": "country", "operator": "in", "values": ["FR", "AT"]}], "serve": {"variation": "A"}},
              {"id": "after-all", "serve": {"variation": "B"}}
            ]}
            """#
        let (rules, _) = try TargetingDecoder.decodeRules(Array(text.utf8))
        let problems = rules.problems(variations: ["A", "B"], segments: ["staff"])
        let byRule = Dictionary(grouping: problems, by: { $0.config ?? "" })
        #expect(byRule["to-c"]?.first?.message == "the feature has no variation \"C\"")
        #expect(byRule["in-ghost"]?.contains { $0.severity == .error && $0.message.contains("\"ghosts\"") } == true)
        #expect(byRule["two-countries"]?.first?.severity == .warning)
        #expect(byRule["after-all"]?.first?.message.contains("the rule \"to-c\" before it matches everyone") == true)
    }

    @Test(
        "Contradictions are found",
        arguments: [
            ([clause("age", .greaterThan, .number(40)), clause("age", .lessThan, .number(30))], true),
            ([clause("age", .greaterThanOrEqual, .number(30)), clause("age", .lessThanOrEqual, .number(30))], false),
            (
                [clause("v", .versionGreaterThanOrEqual, .string("6")), clause("v", .versionLessThan, .string("5.9"))],
                true
            ),
            (
                [clause("v", .versionGreaterThanOrEqual, .string("5")), clause("v", .versionLessThan, .string("6"))],
                false
            ),
            ([clause("t", .after, .string("2026-06-01")), clause("t", .before, .string("2026-01-01"))], true),
            ([clause("c", .equals, .string("DE")), clause("c", .notIn, .string("DE"), .string("AT"))], true),
            ([clause(nil, .inSegment, .string("s")), clause(nil, .notInSegment, .string("s"))], true),
            ([clause("c", .in, .string("DE"), .string("AT")), clause("c", .in, .string("AT"))], false),
        ])
    func contradictions(_ clauses: [Clause], _ impossible: Bool) {
        #expect((clauses.contradiction != nil) == impossible, "\(clauses)")
    }

    @Test("A segment lists users and/or clauses; bad ones are refused")
    func segments() throws {
        let (segment, _) = try TargetingDecoder.decodeSegment(
            Array(
                #"{"name": "beta-testers", "users": ["u1", "u2", "u1"], "clauses": [{"attribute": "email", "operator": "endsWith", "values": ["@corp.com"]}]}"#
                    .utf8))
        #expect(segment.users.count == 2 && segment.clauses.count == 1)
        #expect(segment.contains(EvaluationContext(user: UserID(rawValue: "u2"))))
        #expect(
            segment.contains(
                EvaluationContext(user: UserID(rawValue: "x"), attributes: ["email": .string("a@corp.com")])))
        #expect(!segment.contains(EvaluationContext(user: UserID(rawValue: "x"))))
        for bad in [
            #"{"name": "s", "clauses": [{"operator": "inSegment", "values": ["t"]}]}"#,
            #"{"name": "s", "users": [""]}"#, #"{"name": "a b"}"#, #"{"name": "s", "members": []}"#,
        ] {
            #expect(throws: ConfigsRefused.self, "\(bad)") { try TargetingDecoder.decodeSegment(Array(bad.utf8)) }
        }
        let many =
            "{\"name\": \"s\", \"users\": [" + (0...Segment.maximumUsers).map { "\"u\($0)\"" }.joined(separator: ",")
            + "]}"
        #expect {
            try TargetingDecoder.decodeSegment(Array(many.utf8))
        } throws: { error in
            (error as? ConfigsRefused)?.issues.first?.message.contains("over the 100000") == true
        }
    }

    // MARK: Against a reference

    /// What each kind of operand must refuse, as JSON: objects, arrays and null for all.
    static let wrongValues: [ClauseOperator.Operand: [String]] = [
        .any: [],
        .text: ["5", "true"],
        .number: [#""abc""#, "true", #""""#],
        .version: [#""not a version""#, "5", "true", #""1.2.3.4.5.6.7.8.9""#],
        .time: [#""yesterday""#, "true", #""2026-13-45""#],
        .segment: ["5", "true", #""no spaces allowed""#, #""""#],
    ]

    @Test(
        "Every operator refuses every value of a type it can't compare, at the value's place",
        arguments: ClauseOperator.allCases)
    func everyOperatorEveryWrongType(op: ClauseOperator) throws {
        for wrong in ["{}", "[]", "null"] + Self.wrongValues[op.operand]! {
            let attribute = op.operand == .segment ? "" : #""attribute": "a", "#
            let text =
                #"{"rules": [{"id": "r", "clauses": [{\#(attribute)"operator": "\#(op.rawValue)", "values": [\#(wrong)]}], "serve": {"variation": "A"}}]}"#
            var issue: ConfigIssue?
            do throws(ConfigsRefused) {
                _ = try TargetingDecoder.decodeRules(Array(text.utf8))
            } catch {
                issue = error.issues.first
            }
            #expect(
                issue?.pointer.description == "/rules/0/clauses/0/values/0",
                "\(op.rawValue) with \(wrong): \(String(describing: issue))")
            #expect(issue?.location != nil && issue?.fix.isEmpty == false)
        }
    }

    @Test("firstMatch agrees with the reference for 3 000 generated contexts and rule lists")
    func agreesWithReference() {
        var random = SeededGenerator(
            seed: UInt64(ProcessInfo.processInfo.environment["FLAGPOLE_TARGETING_SEED"] ?? "") ?? 16)
        let attributes = ["country", "age", "plan", "beta"]
        let pool: [AttributeValue] = [
            .string("DE"), .string("FR"), .string("34"), .string("true"), .number(34), .number(18), .number(0),
            .bool(true), .bool(false), .string("pro"), .string("pr"), .string(""), .string("abc"), .string("5.2.1"),
            .string("5.9"), .string("5.2.1 (125)"), .number(5.2), .string("1735689599"),
            .string("2024-12-31T23:59:59Z"),
            .number(1_800_000_000),
        ]
        let clauses = ClauseGenerator(attributes: attributes, segments: ["staff", "germany", "ghost"], values: pool)
        let segments = [
            "staff": Segment(name: "staff", users: [UserID(rawValue: "u1"), UserID(rawValue: "u3")]),
            "germany": Segment(
                name: "germany", clauses: [Clause(attribute: "country", op: .equals, values: [.string("DE")])]),
        ]
        let lookup = SegmentLookup(Array(segments.values))
        for round in 0..<3_000 {
            var context = EvaluationContext(user: UserID(rawValue: "u\(Int.random(in: 0..<5, using: &random))"))
            for attribute in attributes where Bool.random(using: &random) {
                context.attributes[attribute] = pool.randomElement(using: &random)!
            }
            let rules = (0..<Int.random(in: 1...4, using: &random)).map { index in
                TargetingRule(
                    id: "r\(index)",
                    clauses: (0..<Int.random(in: 0...3, using: &random)).map { _ in clauses.clause(using: &random) },
                    serve: .variation("A"))
            }
            let found = rules.firstMatch(context, point: 50, segments: lookup)?.rule.id
            #expect(found == TargetingReference.first(rules, context, segments), "round \(round): \(context) \(rules)")
            if found != TargetingReference.first(rules, context, segments) { return }
        }
    }
}

@Suite("The attributes a client sends")
struct UserAttributesTests {
    static func object(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONParser.parse(Array(text.utf8)).value else {
            Issue.record("\(text) is not a JSON object")
            return JSONObject()
        }
        return object
    }

    @Test("OFREP's context: every scalar but targetingKey, nulls dropped, nested values refused by name")
    func fromContext() throws {
        let context = try Self.object(
            #"{"targetingKey": "u1", "country": "DE", "age": 34, "beta": true, "nothing": null}"#)
        let attributes = try UserAttributes(context: context)
        #expect(attributes.values == ["country": .string("DE"), "age": .number(34), "beta": .bool(true)])
        #expect(String(decoding: attributes.canonicalBytes, as: UTF8.self) == #"{"age":34,"beta":true,"country":"DE"}"#)
        let nested = try Self.object(#"{"device": {"model": "x"}}"#)
        #expect(throws: UserAttributes.Refusal.notScalar(key: "device", found: "an object")) {
            try UserAttributes(context: nested)
        }
    }

    @Test("Query parameters attr.KEY=VALUE are strings; other parameters are left alone")
    func fromQuery() throws {
        let attributes = try UserAttributes(query: [
            ("user", "u1"), ("attr.country", "DE"), ("attr.appVersion", "5.2.1 (40)"), ("attr.country", "AT"),
        ])
        #expect(attributes.values == ["country": .string("AT"), "appVersion": .string("5.2.1 (40)")])
    }

    @Test("The same attributes in any order give the same bytes and fingerprint; others, another")
    func canonical() throws {
        let a = try UserAttributes(["b": .number(1), "a": .string("x")])
        let b = try UserAttributes(["a": .string("x"), "b": .number(1)])
        #expect(a.canonicalBytes == b.canonicalBytes && a.fingerprint == b.fingerprint)
        #expect(try UserAttributes(["a": .string("x"), "b": .number(2)]).fingerprint != a.fingerprint)
        #expect(UserAttributes.empty.fingerprint == (try UserAttributes([:])).fingerprint)
    }

    @Test("Fitting: whole attributes within the limits are kept; beyond them, what fits by key order, kept nowhere")
    func fitting() throws {
        let limits = UserAttributes.Limits(keys: 3, bytes: 40)
        let within = UserAttributes.fitting(["a": .string("x"), "b": .string("y")], limits: limits)
        #expect(
            within == (try UserAttributes(["a": .string("x"), "b": .string("y")], limits: limits)) && within.isKept)
        // Too many: the first three valid keys in code-point order; a bad key is left out.
        let many = UserAttributes.fitting(
            ["d": .string("4"), "b": .string("2"), "a": .string("1"), "c": .string("3"), "": .string("bad")],
            limits: limits)
        #expect(many.values == ["a": .string("1"), "b": .string("2"), "c": .string("3")] && !many.isKept)
        // Too large: a value that doesn't fit is skipped, the smaller ones after it still fit.
        let large = UserAttributes.fitting(
            ["a": .string("1"), "b": .string(String(repeating: "x", count: 40)), "c": .string("3")], limits: limits)
        #expect(large.values == ["a": .string("1"), "c": .string("3")] && !large.isKept)
        #expect(large.canonicalBytes.count <= limits.bytes)
    }

    @Test("Bounds: keys, bytes, names")
    func bounds() throws {
        let limits = UserAttributes.Limits(keys: 3, bytes: 40)
        #expect(throws: UserAttributes.Refusal.tooManyKeys(count: 4, limit: 3)) {
            try UserAttributes(
                ["a": .bool(true), "b": .bool(true), "c": .bool(true), "d": .bool(true)], limits: limits)
        }
        #expect {
            try UserAttributes(["a": .string(String(repeating: "x", count: 50))], limits: limits)
        } throws: { error in
            if case UserAttributes.Refusal.tooLarge(let bytes, 40) = error { return bytes > 40 }
            return false
        }
        for key in ["", "targetingKey", "a\u{7}b", String(repeating: "k", count: 129)] {
            #expect(throws: UserAttributes.Refusal.badKey(key)) { try UserAttributes([key: .bool(true)]) }
        }
    }
}

@Suite("The targeting document a revision keeps")
struct TargetingDocumentTests {
    static let rules: [TargetingRule] = [
        TargetingRule(
            id: "beta", description: "Beta testers see B",
            clauses: [Clause(attribute: nil, op: .inSegment, values: [.string("beta-testers")])],
            serve: .variation("B")),
        TargetingRule(
            id: "de-5.2",
            clauses: [
                Clause(attribute: "country", op: .in, values: [.string("DE"), .string("AT")]),
                Clause(attribute: "appVersion", op: .versionGreaterThanOrEqual, values: [.string("5.2")]),
                Clause(attribute: "age", op: .greaterThan, values: [.number(17.5)]),
            ],
            serve: .split([.init(variation: "A", weight: 20), .init(variation: "B", weight: 80)])),
    ]

    @Test("Rendered and read back whole, byte-stable whatever the order things were added in")
    func roundTrip() throws {
        let segment = SegmentDefinition(
            name: "beta-testers", description: "QA and friends",
            clauses: [Clause(attribute: "email", op: .endsWith, values: [.string("@corp.com")])],
            users: SegmentUsers(sha256: String(repeating: "ab", count: 32), count: 2))
        let document = TargetingDocument(
            featureRules: ["Checkout": Self.rules, "Empty": []],
            segments: ["beta-testers": segment, "staff": SegmentDefinition(name: "staff")])
        #expect(document.featureRules.keys.sorted() == ["Checkout"], "a feature without rules is left out")
        let bytes = document.rendered()
        #expect(try TargetingDocument(stored: bytes) == document)
        let reordered = TargetingDocument(
            featureRules: ["Checkout": Self.rules],
            segments: ["staff": SegmentDefinition(name: "staff"), "beta-testers": segment])
        #expect(reordered.rendered() == bytes)
        #expect(try TargetingDocument(stored: nil).isEmpty && (try TargetingDocument(stored: []).isEmpty))
    }

    @Test("Rules and segments as the API gives them read back as they were")
    func apiForms() throws {
        let body = JSONWriter().bytes(of: ["rules": .array(Self.rules.map(\.jsonValue))])
        #expect(try TargetingDecoder.decodeRules(body).rules == Self.rules)
        let segment = Segment(
            name: "staff", description: "Employees", users: [UserID(rawValue: "b"), UserID(rawValue: "a")],
            clauses: [Clause(attribute: "plan", op: .equals, values: [.string("pro")])])
        #expect(try TargetingDecoder.decodeSegment(JSONWriter().bytes(of: segment.jsonValue)).segment == segment)
    }

    @Test("A list of users has one form, whatever the order, and reads back")
    func userLists() {
        let users: Set<UserID> = [UserID(rawValue: "zoë"), UserID(rawValue: "a b"), UserID(rawValue: "Z")]
        let bytes = SegmentUsers.listBytes(users)
        #expect(String(decoding: bytes, as: UTF8.self) == "Z\na b\nzoë\n")
        #expect(SegmentUsers.users(inList: bytes) == users)
        #expect(SegmentUsers.listBytes([]) == [] && SegmentUsers.users(inList: []).isEmpty)
    }
}
