import Foundation

/// A user attribute's value as a client sends it: a JSON scalar. Query parameters
/// (`attr.KEY=VALUE`) arrive as strings; a clause compares a string with a number or a boolean
/// by reading the string as one (`"5"` equals `5`, `"true"` equals `true`).
public enum AttributeValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)

    public var description: String {
        switch self {
        case .string(let text): text
        case .number(let number): JSONWriter.format(number)
        case .bool(let value): value ? "true" : "false"
        }
    }

    /// The value as a number: a number, or a string written as a JSON number (`Self.decimal`).
    var number: Double? {
        switch self {
        case .number(let number): number
        case .string(let text): Self.decimal(text)
        case .bool: nil
        }
    }

    /// `text` read as a number when it is written as JSON writes one: decimal digits with an
    /// optional `-`, fraction and exponent (`40`, `-2.5`, `1e2`), no leading zero, finite.
    /// Nothing else reads as a number, though Swift's `Double(String)` would: not hexadecimal
    /// (`0x22`), a `+` sign (`+34`), spaces (` 40`), `007`, `inf` or `nan`.
    static func decimal(_ text: String) -> Double? {
        var bytes = text.utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let leadingZero = bytes.first == UInt8(ascii: "0")
        let integerDigits = digits()
        guard integerDigits > 0, !leadingZero || integerDigits == 1 else { return nil }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return nil }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        guard bytes.isEmpty, let number = Double(text), number.isFinite else { return nil }
        return number
    }

    /// The value as an app version: a string (or a number, `5.2`) that reads as one.
    var version: AppVersion? {
        switch self {
        case .string(let text): AppVersion(text)
        case .number(let number): number >= 0 ? AppVersion(description) : nil
        case .bool: nil
        }
    }

    /// The value as a time: an ISO 8601 string (a date alone is its midnight UTC), or a number
    /// since 1970, written as a number or as a string (a query parameter is always one): seconds,
    /// or milliseconds from 10^11 on (JavaScript's `Date.now()`; 10^11 seconds is the year 5138).
    var time: Date? {
        switch self {
        case .string(let text):
            guard text.utf8.count <= 40 else { return nil }
            return number.map(Self.date(since1970:)) ?? TimeText.date(from: text)
        case .number(let number): return Self.date(since1970: number)
        case .bool: return nil
        }
    }

    /// Where a number since 1970 is read as milliseconds rather than seconds.
    static let millisecondsFrom = 1e11

    private static func date(since1970 number: Double) -> Date {
        Date(timeIntervalSince1970: abs(number) >= millisecondsFrom ? number / 1000 : number)
    }

    /// Whether an attribute with this value can be compared with `expected`, a clause's value:
    /// values of one type always can; a string compared with a number must read as one, and with
    /// a boolean be `true` or `false`, whichever side it is on; a number and a boolean never can.
    func isComparable(with expected: AttributeValue) -> Bool {
        switch (self, expected) {
        case (.string(let text), .number), (.number, .string(let text)): Self.decimal(text) != nil
        case (.string(let text), .bool), (.bool, .string(let text)): text == "true" || text == "false"
        case (.number, .bool), (.bool, .number): false
        default: true
        }
    }

    /// Whether an attribute with this value equals `expected`, a clause's value.
    func equals(_ expected: AttributeValue) -> Bool {
        switch (self, expected) {
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.string, .number), (.number, .string):
            guard let a = number, let b = expected.number else { return false }
            return a == b
        case (.string(let a), .bool(let b)): return a == (b ? "true" : "false")
        case (.bool(let a), .string(let b)): return b == (a ? "true" : "false")
        default: return false
        }
    }
}

/// What a client says of the user an evaluation is for: the id, and attributes beside it.
public struct EvaluationContext: Sendable {
    public var user: UserID
    public var attributes: [String: AttributeValue] {
        didSet { versions = Self.versions(of: attributes) }
    }
    /// The attributes that read as app versions, read once: one evaluation may compare them
    /// with a version in every test.
    private var versions: [String: AppVersion]

    /// The attribute that names the user id itself, as OFREP names it, so a rule can list ids
    /// without a segment. A context can't carry an attribute of that name.
    public static let userAttribute = "targetingKey"

    public init(user: UserID, attributes: [String: AttributeValue] = [:]) {
        self.user = user
        self.attributes = attributes
        versions = Self.versions(of: attributes)
    }

    public subscript(attribute: String) -> AttributeValue? {
        attribute == Self.userAttribute ? .string(user.rawValue) : attributes[attribute]
    }

    /// The attribute read as an app version, when it is one.
    func version(of attribute: String) -> AppVersion? {
        attribute == Self.userAttribute ? AppVersion(user.rawValue) : versions[attribute]
    }

    private static func versions(of attributes: [String: AttributeValue]) -> [String: AppVersion] {
        attributes.compactMapValues { $0.version }
    }
}

/// How a clause compares an attribute with its values.
public enum ClauseOperator: String, Hashable, Sendable, CaseIterable {
    case equals, notEquals, `in`, notIn
    case startsWith, endsWith, contains
    case lessThan, lessThanOrEqual, greaterThan, greaterThanOrEqual
    case versionLessThan, versionLessThanOrEqual, versionEquals, versionGreaterThanOrEqual, versionGreaterThan
    case before, after
    case inSegment, notInSegment

    /// What the clause's values must be, which is also how the attribute is read.
    public enum Operand: String, Sendable {
        case any, text, number, version, time, segment
    }

    public var operand: Operand {
        switch self {
        case .equals, .notEquals, .in, .notIn: .any
        case .startsWith, .endsWith, .contains: .text
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: .number
        case .versionLessThan, .versionLessThanOrEqual, .versionEquals, .versionGreaterThanOrEqual, .versionGreaterThan:
            .version
        case .before, .after: .time
        case .inSegment, .notInSegment: .segment
        }
    }

    /// `value` as a value of this operator's clauses (a number written as text is read as the
    /// number), or `nil` when it can't be one: the decoder and the store's check of rules built
    /// in code both ask here, so that what is stored always reads back.
    public func clauseValue(_ value: AttributeValue) -> AttributeValue? {
        // The store cannot keep U+0000.
        if case .string(let text) = value, text.utf8.contains(0) { return nil }
        switch operand {
        case .any: return value
        case .text:
            guard case .string = value else { return nil }
            return value
        case .number: return value.number.map(AttributeValue.number)
        case .version:
            guard case .string = value, value.version != nil else { return nil }
            return value
        case .time:
            guard case .string = value, value.time != nil else { return nil }
            return value
        case .segment:
            guard case .string(let name) = value, TargetingDecoder.isValidIdentifier(name) else { return nil }
            return value
        }
    }

    /// How to write a value this operator's clauses take.
    public var clauseValueFix: String {
        switch operand {
        case .any: "write a string, a number or true/false"
        case .text: "write a string"
        case .number: "write a number, such as 18"
        case .version: "write an app version as a string, such as \"5.2\" or \"5.2.1 (123)\""
        case .time: "write an ISO 8601 time as a string, such as \"2026-11-23T09:30:00Z\""
        case .segment: "write the name of a segment of this environment"
        }
    }

    /// Whether an order (`-1`, `0`, `1`) of an attribute against the clause's value satisfies
    /// this operator, when it is an ordering one.
    func holds(order: Int) -> Bool {
        switch self {
        case .lessThan, .versionLessThan: order < 0
        case .lessThanOrEqual, .versionLessThanOrEqual: order <= 0
        case .versionEquals: order == 0
        case .greaterThanOrEqual, .versionGreaterThanOrEqual: order >= 0
        case .greaterThan, .versionGreaterThan: order > 0
        default: false
        }
    }

    /// Whether the operator takes one value (an order) rather than a list to match any of.
    public var takesOneValue: Bool {
        switch operand {
        case .number, .version, .time: true
        case .any: self == .equals || self == .notEquals
        case .text, .segment: false
        }
    }
}

/// One condition of a rule: an attribute, an operator and the values it compares with.
/// Segment clauses name segments and no attribute.
public struct Clause: Hashable, Sendable {
    /// `nil` for `inSegment` and `notInSegment`.
    public var attribute: String?
    public var op: ClauseOperator {
        didSet { bound = Bound(op, values) }
    }
    public var values: [AttributeValue] {
        didSet { bound = Bound(op, values) }
    }
    /// The value an ordering operator compares with, read once: evaluation runs for every
    /// user and test, and reading a version or a time is most of a clause's work.
    private var bound: Bound?

    private enum Bound: Hashable, Sendable {
        case number(Double)
        case version(AppVersion)
        case time(Date)

        init?(_ op: ClauseOperator, _ values: [AttributeValue]) {
            guard let first = values.first else { return nil }
            switch op.operand {
            case .number:
                guard let number = first.number else { return nil }
                self = .number(number)
            case .version:
                guard let version = first.version else { return nil }
                self = .version(version)
            case .time:
                guard let time = first.time else { return nil }
                self = .time(time)
            case .any, .text, .segment: return nil
            }
        }
    }

    public init(attribute: String?, op: ClauseOperator, values: [AttributeValue]) {
        self.attribute = attribute
        self.op = op
        self.values = values
        bound = Bound(op, values)
    }

    /// Whether the clause holds for `context`. An attribute the context lacks, or holds in a
    /// form the operator can't read (`"abc"` for `lessThan`), makes every clause on it false,
    /// the negative ones (`notEquals`, `notIn`) included: "not in Germany" says nothing of a user
    /// whose country is unknown.
    public func matches(_ context: EvaluationContext, segments: SegmentLookup) -> Bool {
        if op.operand == .segment {
            let member = values.contains { value in
                guard case .string(let name) = value else { return false }
                return segments.segment(named: name)?.contains(context) ?? false
            }
            return op == .inSegment ? member : !member
        }
        guard let attribute, let value = context[attribute] else { return false }
        switch op {
        case .equals, .in: return values.contains { value.equals($0) }
        case .notEquals, .notIn:
            // A value the operator can't read says nothing: `"abc"` is not "not 18".
            return values.allSatisfy { value.isComparable(with: $0) && !value.equals($0) }
        case .startsWith: return values.contains { value.description.hasPrefix($0.description) }
        case .endsWith: return values.contains { value.description.hasSuffix($0.description) }
        case .contains: return values.contains { value.description.contains($0.description) }
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard case .number(let bound) = bound, let number = value.number else { return false }
            return op.holds(order: number < bound ? -1 : number == bound ? 0 : 1)
        case .versionLessThan, .versionLessThanOrEqual, .versionEquals, .versionGreaterThanOrEqual,
            .versionGreaterThan:
            guard case .version(let bound) = bound, let version = context.version(of: attribute) else { return false }
            return op.holds(order: version.compare(to: bound))
        case .before, .after:
            guard case .time(let bound) = bound, let time = value.time else { return false }
            return op == .before ? time < bound : time > bound
        case .inSegment, .notInSegment:
            return false
        }
    }
}

/// A named set of users of an environment, reusable by many rules: listed ids, and/or those
/// every one of its clauses matches.
public struct Segment: Hashable, Sendable {
    public var name: String
    public var description: String?
    public var users: Set<UserID>
    /// ANDed; empty: only the listed users are members. Never segment clauses (no recursion).
    public var clauses: [Clause]

    /// The most users a segment may list.
    public static let maximumUsers = 100_000

    public init(name: String, description: String? = nil, users: Set<UserID> = [], clauses: [Clause] = []) {
        self.name = name
        self.description = description
        self.users = users
        self.clauses = clauses
    }

    public func contains(_ context: EvaluationContext) -> Bool {
        if users.contains(context.user) { return true }
        return !clauses.isEmpty && clauses.allSatisfy { $0.matches(context, segments: .none) }
    }
}

/// Finds segments by name, for segment clauses.
public struct SegmentLookup: Sendable {
    private let byName: [String: Segment]

    public init(_ segments: [Segment]) {
        byName = Dictionary(segments.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// No segments: what a segment's own clauses see.
    public static let none = SegmentLookup([])

    public func segment(named name: String) -> Segment? { byName[name] }
}

/// What a rule serves when it matches.
public enum RuleServe: Hashable, Sendable {
    /// One variation of the feature.
    case variation(String)
    /// A split of its own: each variation owns a share of the points, in order, bucketed by the
    /// feature's point, so a user keeps their place as shares grow.
    case split([WeightedVariation])
    /// A config's value (rules of a config).
    case value(ConfigValue)

    public struct WeightedVariation: Hashable, Sendable {
        public var variation: String
        /// Percent; a split's weights sum to 100.
        public var weight: Double

        public init(variation: String, weight: Double) {
            self.variation = variation
            self.weight = weight
        }
    }
}

/// A rule of a feature or config: its clauses, ANDed, and what it serves. Rules are ordered; the
/// first that matches decides.
public struct TargetingRule: Hashable, Sendable {
    /// Stable and unique among the feature's (or config's) rules: what history and OFREP's
    /// metadata name.
    public var id: String
    public var description: String?
    public var clauses: [Clause]
    public var serve: RuleServe {
        didSet { splitRanges = Self.ranges(of: serve) }
    }
    /// A split's ranges, built once: every evaluation that reaches the rule buckets by them.
    private(set) var splitRanges: VariationRanges?

    public init(id: String, description: String? = nil, clauses: [Clause], serve: RuleServe) {
        self.id = id
        self.description = description
        self.clauses = clauses
        self.serve = serve
        splitRanges = Self.ranges(of: serve)
    }

    private static func ranges(of serve: RuleServe) -> VariationRanges? {
        guard case .split(let shares) = serve else { return nil }
        return VariationRanges(names: shares.map(\.variation), biases: shares.map(\.weight))
    }

    public func matches(_ context: EvaluationContext, segments: SegmentLookup) -> Bool {
        clauses.allSatisfy { $0.matches(context, segments: segments) }
    }
}

/// The outcome of a list of rules for one user.
public struct RuleMatch: Hashable, Sendable {
    /// The position of the rule that matched, from 0.
    public var index: Int
    public var rule: TargetingRule
    /// For a variation or a split, the variation the user gets; `nil` for a config value.
    public var variation: String?
}

extension Array where Element == TargetingRule {
    /// The first rule that matches `context`, and the variation it gives a user at `point` (the
    /// feature's point of the user, in [0, 100)).
    public func firstMatch(_ context: EvaluationContext, point: Double, segments: SegmentLookup) -> RuleMatch? {
        for (index, rule) in enumerated() where rule.matches(context, segments: segments) {
            switch rule.serve {
            case .variation(let name):
                return RuleMatch(index: index, rule: rule, variation: name)
            case .split:
                return RuleMatch(index: index, rule: rule, variation: rule.splitRanges?.variation(at: point))
            case .value:
                return RuleMatch(index: index, rule: rule, variation: nil)
            }
        }
        return nil
    }
}
