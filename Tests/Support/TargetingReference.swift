import FlagpoleCore
import Foundation

/// A second reading of the rules, written from docs/TARGETING.md ("Clauses") alone, not from the
/// code: what `firstMatch` answers, and what every client of the server shows, must agree with it
/// for any context and rules. It parses versions and times by the doc's words with Foundation's
/// own ISO 8601 reader, sharing nothing with `AppVersion` or `TimeText`.
public enum TargetingReference {
    public static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): s
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
        }
    }

    /// "A string reads as a number when it is written as a JSON number."
    public static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .number(let n): n
        case .string(let s): decimal(s)
        case .bool: nil
        }
    }

    static func decimal(_ s: String) -> Double? {
        guard s.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/) != nil else { return nil }
        return Double(s).flatMap { $0.isFinite ? $0 : nil }
    }

    /// "A clause compares a string with a number or a boolean by reading the string as one."
    public static func same(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let s), .number(let n)), (.number(let n), .string(let s)): return decimal(s) == n
        case (.string(let s), .bool(let f)), (.bool(let f), .string(let s)): return s == String(f)
        default: return false
        }
    }

    /// Whether the two can be compared at all: "a value the operator can't read makes its clause
    /// false", so a string compared with a number must read as one, with a boolean be one.
    public static func readable(_ a: AttributeValue, _ b: AttributeValue) -> Bool {
        switch (a, b) {
        case (.string(let s), .number), (.number, .string(let s)): return decimal(s) != nil
        case (.string(let s), .bool), (.bool, .string(let s)): return s == "true" || s == "false"
        case (.number, .bool), (.bool, .number): return false
        default: return true
        }
    }

    /// An app version as the doc describes one: `v`, numeric parts (at most 8), a pre-release
    /// after `-`, a build as ` (123)` or `+123`; at most 64 characters.
    public struct Version {
        var parts: [Int]
        var preRelease: [String]
        var build: Int?
    }

    public static func version(_ value: AttributeValue) -> Version? {
        var text: String
        switch value {
        case .string(let s): text = s
        case .number(let n) where n >= 0: text = Self.text(value)
        default: return nil
        }
        guard text.count <= 64 else { return nil }
        text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("v") || text.hasPrefix("V") { text.removeFirst() }
        var build: Int?
        if text.hasSuffix(")"), let open = text.range(of: "(", options: .backwards) {
            guard let number = digits(String(text[open.upperBound..<text.index(before: text.endIndex)])) else {
                return nil
            }
            build = number
            text = String(text[..<open.lowerBound]).trimmingCharacters(in: .whitespaces)
        } else if let plus = text.firstIndex(of: "+") {
            guard let number = digits(String(text[text.index(after: plus)...])) else { return nil }
            build = number
            text = String(text[..<plus])
        }
        var preRelease: [String] = []
        if let dash = text.firstIndex(of: "-") {
            preRelease = text[text.index(after: dash)...].components(separatedBy: ".")
            guard
                preRelease.allSatisfy({ id in
                    !id.isEmpty
                        && id.unicodeScalars.allSatisfy {
                            CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-"
                        }
                })
            else { return nil }
            text = String(text[..<dash])
        }
        let parts = text.components(separatedBy: ".").map(digits)
        guard (1...8).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        return Version(parts: parts.map { $0! }, preRelease: preRelease, build: build)
    }

    private static func digits(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else {
            return nil
        }
        return Int(text)
    }

    /// "Numeric parts compare as numbers and missing ones count as zero; a pre-release comes
    /// before its release (semver's order between pre-releases). A build number breaks ties only
    /// when both name one."
    public static func order(_ a: Version, _ b: Version) -> Int {
        for index in 0..<max(a.parts.count, b.parts.count) {
            let x = index < a.parts.count ? a.parts[index] : 0
            let y = index < b.parts.count ? b.parts[index] : 0
            if x != y { return x < y ? -1 : 1 }
        }
        switch (a.preRelease.isEmpty, b.preRelease.isEmpty) {
        case (true, false): return 1
        case (false, true): return -1
        case (false, false):
            for (x, y) in zip(a.preRelease, b.preRelease) where x != y {
                switch (Int(x), Int(y)) {
                case (let m?, let n?): return m < n ? -1 : 1
                case (.some, nil): return -1
                case (nil, .some): return 1
                case (nil, nil): return x < y ? -1 : 1
                }
            }
            if a.preRelease.count != b.preRelease.count { return a.preRelease.count < b.preRelease.count ? -1 : 1 }
        case (true, true): break
        }
        guard let x = a.build, let y = b.build, x != y else { return 0 }
        return x < y ? -1 : 1
    }

    /// "Read as a time (ISO 8601, or a number since 1970: seconds, milliseconds from 10^11 on)":
    /// a number, or a string of either.
    public static func time(_ value: AttributeValue) -> Date? {
        func since1970(_ n: Double) -> Date { Date(timeIntervalSince1970: abs(n) >= 100_000_000_000 ? n / 1000 : n) }
        switch value {
        case .number(let n): return since1970(n)
        case .bool: return nil
        case .string(let s):
            if let number = decimal(s) { return since1970(number) }
            for options: ISO8601DateFormatter.Options in [
                [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
            ] {
                let reader = ISO8601DateFormatter()
                reader.formatOptions = options
                if let date = reader.date(from: s) { return date }
            }
            // A date alone is YYYY-MM-DD; Foundation's reader of dates alone takes "5.2.1" too.
            let characters = Array(s.unicodeScalars)
            guard characters.count == 10,
                characters.indices.allSatisfy({
                    [4, 7].contains($0) ? characters[$0] == "-" : ("0"..."9").contains(characters[$0])
                })
            else { return nil }
            let reader = ISO8601DateFormatter()
            reader.formatOptions = [.withFullDate]
            return reader.date(from: s)
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
        // "A missing attribute makes its clause false, the negative operators included."
        guard let value else { return false }
        let bound = clause.values[0]
        switch clause.op {
        case .equals, .in: return clause.values.contains { same(value, $0) }
        case .notEquals, .notIn: return clause.values.allSatisfy { readable(value, $0) && !same(value, $0) }
        case .startsWith: return clause.values.contains { text(value).hasPrefix(text($0)) }
        case .endsWith: return clause.values.contains { text(value).hasSuffix(text($0)) }
        case .contains: return clause.values.contains { text(value).contains(text($0)) }
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            guard let x = number(value), let y = number(bound) else { return false }
            return ordered(clause.op, x < y ? -1 : x == y ? 0 : 1)
        case .versionLessThan, .versionLessThanOrEqual, .versionEquals, .versionGreaterThanOrEqual,
            .versionGreaterThan:
            guard let x = version(value), let y = version(bound) else { return false }
            return ordered(clause.op, order(x, y))
        case .before, .after:
            guard let x = time(value), let y = time(bound) else { return false }
            return clause.op == .before ? x < y : x > y
        case .inSegment, .notInSegment: return false
        }
    }

    private static func ordered(_ op: ClauseOperator, _ order: Int) -> Bool {
        switch op {
        case .lessThan, .versionLessThan: order < 0
        case .lessThanOrEqual, .versionLessThanOrEqual: order <= 0
        case .versionEquals: order == 0
        case .greaterThanOrEqual, .versionGreaterThanOrEqual: order >= 0
        default: order > 0
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

/// Random clauses for the property tests, over every operator: each of an operand the operator
/// takes, on one of `attributes`, or naming one of `segments`.
public struct ClauseGenerator {
    public var attributes: [String]
    public var segments: [String]
    /// What `equals`, `in` and their negations compare with.
    public var values: [AttributeValue]

    public static let operators = ClauseOperator.allCases

    /// What version and time clauses compare with, in the forms the doc names (strings, as a
    /// rule's JSON must write them).
    public static let versions: [AttributeValue] = [
        .string("5.2"), .string("5.10"), .string("v5.2.1 (123)"), .string("5.2.1+130"), .string("5.2.0-beta.2"),
    ]
    public static let times: [AttributeValue] = [
        .string("2025-01-01T00:00:00Z"), .string("2025-01-01"), .string("2024-12-31T23:59:59.500Z"),
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
        case .version:
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: [Self.versions.randomElement(using: &random)!])
        case .time:
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: [Self.times.randomElement(using: &random)!])
        default:
            let count = op.takesOneValue ? 1 : Int.random(in: 1...3, using: &random)
            return Clause(
                attribute: attributes.randomElement(using: &random)!, op: op,
                values: (0..<count).map { _ in values.randomElement(using: &random)! })
        }
    }
}
