/// What decoding alone can't know about rules: whether their variations and segments exist,
/// and whether each can ever match.
extension Array where Element == TargetingRule {
    /// The problems of these rules, a feature's (`variations`, the names a rule may serve) or a
    /// config's (`variations` nil), in an environment that has `segments`: errors for a variation
    /// or a segment that doesn't exist, warnings for a rule that can never match.
    public func problems(variations: [String]?, segments: Set<String>) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func add(_ severity: Severity, _ rule: TargetingRule, _ pointer: JSONPointer, _ message: String, fix: String) {
            issues.append(
                ConfigIssue(severity, config: rule.id, pointer: pointer, location: nil, message: message, fix: fix))
        }
        var catchAll: String?
        for (index, rule) in enumerated() {
            let pointer = JSONPointer.root.appending("rules").appending(index)
            if let variations {
                let served: [String] =
                    switch rule.serve {
                    case .variation(let name): [name]
                    case .split(let shares): shares.map(\.variation)
                    case .value: []
                    }
                for name in served where !variations.contains(name) {
                    add(
                        .error, rule, pointer.appending("serve"), "the feature has no variation \"\(name)\"",
                        fix: "serve one of \(variations.map { "\"\($0)\"" }.joined(separator: ", "))")
                }
            }
            // Rules built in code (not decoded) must hold only what the decoder reads back.
            for (clauseIndex, clause) in rule.clauses.enumerated() {
                for (valueIndex, value) in clause.values.enumerated() where clause.op.clauseValue(value) == nil {
                    add(
                        .error, rule,
                        pointer.appending("clauses").appending(clauseIndex).appending("values")
                            .appending(valueIndex),
                        "\(clause.op.rawValue) can't compare with \(value.jsonValue.summary)",
                        fix: clause.op.clauseValueFix)
                }
            }
            for (clauseIndex, clause) in rule.clauses.enumerated() where clause.op.operand == .segment {
                for case .string(let name) in clause.values where !segments.contains(name) {
                    add(
                        .error, rule, pointer.appending("clauses").appending(clauseIndex),
                        "no segment is named \"\(name)\" in this environment",
                        fix: "create it first (`flagpole segment set \(name)`), or name another")
                }
            }
            if let catchAll {
                add(
                    .warning, rule, pointer,
                    "this rule can never match: the rule \"\(catchAll)\" before it matches everyone",
                    fix: "move it before \"\(catchAll)\", or give \"\(catchAll)\" clauses")
            } else if let contradiction = rule.clauses.contradiction {
                add(
                    .warning, rule, pointer, "this rule can never match: \(contradiction)",
                    fix: "change or remove one of them")
            }
            if rule.clauses.isEmpty && catchAll == nil { catchAll = rule.id }
        }
        return issues
    }
}

extension Array where Element == Clause {
    /// Why no context can satisfy all these clauses at once, when two of them say so plainly:
    /// different `equals` of one attribute, an `equals` its `notEquals` excludes, `in` lists with
    /// nothing in common, a range whose lower bound is above its upper one, a segment both required
    /// and excluded. `nil` when none of those is found (which doesn't prove a match is possible).
    var contradiction: String? {
        for (first, a) in enumerated() {
            for b in self[(first + 1)...] {
                if let reason = Self.contradiction(a, b) ?? Self.contradiction(b, a) { return reason }
            }
        }
        return nil
    }

    private static func contradiction(_ a: Clause, _ b: Clause) -> String? {
        if a.op == .inSegment, b.op == .notInSegment, a.values.count == 1, b.values.contains(a.values[0]) {
            return "it requires the segment \(a.values[0]) and excludes it"
        }
        guard let attribute = a.attribute, attribute == b.attribute else { return nil }
        switch (a.op, b.op) {
        case (.equals, .in), (.in, .equals), (.equals, .equals), (.in, .in):
            if !a.values.contains(where: { value in b.values.contains { value.equals($0) || $0.equals(value) } }) {
                return "\(attribute) can't be one of \(a.valuesText) and one of \(b.valuesText)"
            }
        case (.equals, .notEquals), (.equals, .notIn):
            if a.values.allSatisfy({ value in b.values.contains { value.equals($0) } }) {
                return "\(attribute) must be \(a.valuesText) and must not"
            }
        case (.greaterThan, .lessThan), (.greaterThan, .lessThanOrEqual), (.greaterThanOrEqual, .lessThan),
            (.greaterThanOrEqual, .lessThanOrEqual):
            guard let lower = a.values.first?.number, let upper = b.values.first?.number else { return nil }
            let inclusive = a.op == .greaterThanOrEqual && b.op == .lessThanOrEqual
            if lower > upper || (lower == upper && !inclusive) {
                return "\(attribute) can't be \(a.op.rawValue) \(a.valuesText) and \(b.op.rawValue) \(b.valuesText)"
            }
        case (.versionGreaterThan, .versionLessThan), (.versionGreaterThan, .versionLessThanOrEqual),
            (.versionGreaterThanOrEqual, .versionLessThan), (.versionGreaterThanOrEqual, .versionLessThanOrEqual),
            (.versionEquals, .versionLessThan), (.versionEquals, .versionGreaterThan):
            guard let lower = a.values.first?.version, let upper = b.values.first?.version else { return nil }
            let order = lower.compare(to: upper)
            var impossible =
                switch (a.op, b.op) {
                case (.versionGreaterThanOrEqual, .versionLessThanOrEqual): order > 0
                case (.versionEquals, .versionGreaterThan): order <= 0
                default: order >= 0
                }
            // Builds count only when both sides name one, so bounds equal but for one's build
            // leave room: `≥ 5.2.1` and `< 5.2.1 (130)` both hold for `5.2.1 (123)`, as the app
            // evaluates them. Impossible only when no build of that version meets both.
            if impossible, order == 0, let build = lower.build ?? upper.build,
                (lower.build == nil) != (upper.build == nil)
            {
                impossible = ![nil, build - 1, build, build + 1].contains { candidate in
                    let version = lower.withBuild(candidate)
                    return a.op.holds(order: version.compare(to: lower))
                        && b.op.holds(order: version.compare(to: upper))
                }
            }
            if impossible {
                return "\(attribute) can't be \(a.op.rawValue) \(a.valuesText) and \(b.op.rawValue) \(b.valuesText)"
            }
        case (.after, .before):
            guard let start = a.values.first?.time, let end = b.values.first?.time else { return nil }
            if start >= end { return "\(attribute) can't be after \(a.valuesText) and before \(b.valuesText)" }
        default:
            return nil
        }
        return nil
    }
}

extension Clause {
    /// The values as a message writes them.
    var valuesText: String {
        values.count == 1 ? values[0].quoted : "[\(values.map(\.quoted).joined(separator: ", "))]"
    }
}

extension AttributeValue {
    var quoted: String {
        if case .string(let text) = self { return "\"\(text)\"" }
        return description
    }
}
