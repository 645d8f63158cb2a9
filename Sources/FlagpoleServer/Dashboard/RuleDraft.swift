import FlagpoleCore
import Foundation

/// A rule as the rule builder's fields describe it: one clause (attribute, operator, values)
/// and the variation it serves, added after the feature's rules. It becomes the rules' JSON,
/// which the editor's advanced view shows and the plan reads, so both ways are one.
struct RuleDraft: Sendable {
    var attribute: String
    /// `ClauseOperator`'s raw value.
    var op: String
    /// Comma-separated where the operator takes a list.
    var values: String
    var variation: String
    /// Blank: one is made from the clause.
    var id: String

    /// The builder's labels of the fields its issues point at.
    static let fieldLabels = ["attribute": "Attribute", "op": "Condition", "values": "Value", "serve": "Serves"]

    /// What is wrong with the fields, every mistake at once, each pointing at its field (the
    /// rules' decoder would stop at a clause's first); empty when the rule can be planned.
    func issues(variations: [String]) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func refuse(_ field: String, _ message: String, _ fix: String) {
            issues.append(
                ConfigIssue(
                    .error, config: nil, pointer: JSONPointer.root.appending(field), location: nil, message: message,
                    fix: fix))
        }
        guard let known = ClauseOperator(rawValue: op) else {
            refuse("op", "“\(op)” is not a condition rules have.", "choose one of the list")
            return issues
        }
        if known.operand != .segment && attribute.trimmed.isEmpty {
            refuse("attribute", "No attribute is named.", "name the attribute the app sends, such as country")
        }
        let values = Self.values(values, for: known)
        if values.isEmpty || values == [.string("")] {
            refuse(
                "values", "No value is given.",
                known.takesOneValue ? "type one value" : "type one or more, commas between")
        } else if known.operand == .number, values.contains(where: { if case .string = $0 { true } else { false } }) {
            refuse(
                "values", "“\(self.values.trimmed)” is not a number, which “\(TargetingText.words(known))” compares.",
                "type a number, such as 18")
        }
        if !variations.contains(variation) {
            refuse(
                "serve", "“\(variation)” is not a variation of the feature.",
                "choose one of \(variations.joined(separator: ", "))")
        }
        return issues
    }

    /// The rules' JSON: `existing`, then this rule.
    func text(after existing: [TargetingRule]) -> String {
        var rules = existing.map(\.jsonValue)
        rules.append(rule(avoiding: Set(existing.map(\.id))))
        return JSONWriter(style: .pretty(indent: 2)).string(of: ["rules": .array(rules)])
    }

    /// Everything typed goes into the JSON as typed, so the decoder's refusal names each
    /// mistake at once, with its place.
    private func rule(avoiding ids: Set<String>) -> JSONValue {
        let known = ClauseOperator(rawValue: op)
        var clause: JSONObject = [:]
        if known?.operand != .segment { clause.append("attribute", .string(attribute.trimmed)) }
        clause.append("operator", .string(op))
        clause.append("values", .array(Self.values(values, for: known)))
        var rule: JSONObject = ["id": .string(id.trimmed.isEmpty ? madeID(avoiding: ids) : id.trimmed)]
        rule.append("clauses", .array([.object(clause)]))
        rule.append("serve", ["variation": .string(variation)])
        return .object(rule)
    }

    /// The values typed: a list split at commas where the operator takes one, numbers for
    /// the operators that compare numbers (others are compared as the attribute is read).
    static func values(_ text: String, for op: ClauseOperator?) -> [JSONValue] {
        let parts =
            op?.takesOneValue == true
            ? [text.trimmed] : text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
        return parts.map { part in
            if op?.operand == .number, let number = Double(part), number.isFinite { return .number(number) }
            return .string(part)
        }
    }

    /// `country-equals-nz`: letters, digits and dashes of the clause, unique among `ids`.
    private func madeID(avoiding ids: Set<String>) -> String {
        let words = [attribute, op, values].joined(separator: "-").lowercased()
        let slug = String(
            words.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" }
                .reduce(into: "") { result, character in
                    if !(character == "-" && (result.isEmpty || result.last == "-")) { result.append(character) }
                }
                .trimmingCharacters(in: CharacterSet(charactersIn: "-")).prefix(56))
        let base = slug.isEmpty ? "rule" : slug
        var candidate = base
        var number = 2
        while ids.contains(candidate) {
            candidate = "\(base)-\(number)"
            number += 1
        }
        return candidate
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
