import FlagpoleCore

/// A second reading of the rules, written from the words rather than from the code: what
/// `firstMatch` answers, and what every client of the server shows, must agree with it for any
/// context and rules. Versions and times are left to the table tests (it reads them as false).
public enum TargetingReference {
    public static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): s
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
        }
    }

    public static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .number(let n): n
        case .string(let s): Double(s).flatMap { $0.isFinite ? $0 : nil }
        case .bool: nil
        }
    }

    /// "A clause compares a string with a number or a boolean by reading the string as one."
    public static func same(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let s), .number(let n)), (.number(let n), .string(let s)): return Double(s) == n
        case (.string(let s), .bool(let f)), (.bool(let f), .string(let s)): return s == String(f)
        default: return false
        }
    }

    public static func holds(_ clause: Clause, _ context: EvaluationContext, _ segments: [String: Segment]) -> Bool {
        if clause.op == .inSegment || clause.op == .notInSegment {
            let member = clause.values.contains { name in
                guard let segment = segments[text(name)] else { return false }
                return segment.users.contains(context.user)
                    || (!segment.clauses.isEmpty && segment.clauses.allSatisfy { holds($0, context, [:]) })
            }
            return clause.op == .inSegment ? member : !member
        }
        let value =
            clause.attribute == "targetingKey"
            ? .string(context.user.rawValue) : context.attributes[clause.attribute!]
        guard let value else { return false }
        switch clause.op {
        case .equals, .in: return clause.values.contains { same(value, $0) }
        case .notEquals, .notIn: return !clause.values.contains { same(value, $0) }
        case .startsWith: return clause.values.contains { text(value).hasPrefix(text($0)) }
        case .endsWith: return clause.values.contains { text(value).hasSuffix(text($0)) }
        case .contains: return clause.values.contains { text(value).contains(text($0)) }
        case .lessThan: return number(value).map { $0 < number(clause.values[0])! } ?? false
        case .lessThanOrEqual: return number(value).map { $0 <= number(clause.values[0])! } ?? false
        case .greaterThan: return number(value).map { $0 > number(clause.values[0])! } ?? false
        case .greaterThanOrEqual: return number(value).map { $0 >= number(clause.values[0])! } ?? false
        default: return false  // versions and times: covered by the table tests above
        }
    }

    public static func first(
        _ rules: [TargetingRule], _ context: EvaluationContext, _ segments: [String: Segment]
    ) -> String? {
        rules.first { rule in rule.clauses.allSatisfy { holds($0, context, segments) } }?.id
    }
}

extension TargetingReference {
    /// The variation the first matching rule serves a user at `point` (a split cuts [0, 100) into
    /// its weights, in order), else the variation of `point` under `biases`.
    public static func variation(
        _ rules: [TargetingRule], _ context: EvaluationContext, _ segments: [String: Segment], point: Double,
        variations: [String], biases: [Double]
    ) -> (variation: String, rule: String?) {
        func cut(_ names: [String], _ weights: [Double]) -> String {
            var upper = 0.0
            for (name, weight) in zip(names, weights) {
                upper += weight
                if point < upper { return name }
            }
            return names.last!
        }
        guard let id = first(rules, context, segments), let rule = rules.first(where: { $0.id == id }) else {
            return (cut(variations, biases), nil)
        }
        switch rule.serve {
        case .variation(let name): return (name, id)
        case .split(let shares): return (cut(shares.map(\.variation), shares.map(\.weight)), id)
        case .value: return (cut(variations, biases), nil)
        }
    }
}

/// Random clauses for the property tests, over the operators the reference reads: each of an
/// operand the operator takes, on one of `attributes`, or naming one of `segments`.
public struct ClauseGenerator {
    public var attributes: [String]
    public var segments: [String]
    /// What `equals`, `in` and their negations compare with.
    public var values: [AttributeValue]

    public static let operators: [ClauseOperator] = [
        .equals, .notEquals, .in, .notIn, .startsWith, .endsWith, .contains, .lessThan, .lessThanOrEqual,
        .greaterThan, .greaterThanOrEqual, .inSegment, .notInSegment,
    ]

    public init(attributes: [String], segments: [String], values: [AttributeValue]) {
        self.attributes = attributes
        self.segments = segments
        self.values = values
    }

    public func clause(using random: inout some RandomNumberGenerator) -> Clause {
        let op = Self.operators.randomElement(using: &random)!
        switch op.operand {
        case .segment:
            return Clause(attribute: nil, op: op, values: [.string(segments.randomElement(using: &random)!)])
        case .number:
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: [.number([0, 18, 34, 50].randomElement(using: &random)!)])
        case .text:
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: [.string(["D", "E", "pr", "3", "t"].randomElement(using: &random)!)])
        default:
            let count = op.takesOneValue ? 1 : Int.random(in: 1...3, using: &random)
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: (0..<count).map { _ in values.randomElement(using: &random)! })
        }
    }
}
