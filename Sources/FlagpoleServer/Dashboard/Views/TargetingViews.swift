import FlagpoleCore
import FlagpoleStore

/// Rules and clauses in words, as the feature and segment pages list them:
/// `country is "DE" and appVersion is a version from "5.2"`.
enum TargetingText {
    /// A rule's or segment's clauses, ANDed; `none` when there are none.
    static func clauses(_ clauses: [Clause], none: String) -> String {
        clauses.isEmpty ? none : clauses.map(clause).joined(separator: " and ")
    }

    static func clause(_ clause: Clause) -> String {
        let values = clause.values.map(value)
        if clause.op.operand == .segment {
            let names = clause.values.map(\.description).joined(separator: " or ")
            return (clause.op == .inSegment ? "in segment " : "not in segment ") + names
        }
        let attribute = clause.attribute.map { $0 == EvaluationContext.userAttribute ? "user id" : $0 } ?? "?"
        return "\(attribute) \(words(clause.op)) \(values.joined(separator: ", "))"
    }

    /// What a rule serves: a variation, a split with its weights, or a config's value.
    static func serve(_ serve: RuleServe) -> String {
        switch serve {
        case .variation(let name): name
        case .split(let shares): shares.map { "\($0.variation) \(Percent.format($0.weight))" }.joined(separator: ", ")
        case .value(let value): value.json
        }
    }

    /// A string quoted, as the JSON has it; a number or a boolean as it is.
    private static func value(_ value: AttributeValue) -> String {
        if case .string(let text) = value { return "\"\(text)\"" }
        return value.description
    }

    static func words(_ op: ClauseOperator) -> String {
        switch op {
        case .equals: "is"
        case .notEquals: "is not"
        case .in: "is one of"
        case .notIn: "is none of"
        case .startsWith: "starts with"
        case .endsWith: "ends with"
        case .contains: "contains"
        case .lessThan: "is less than"
        case .lessThanOrEqual: "is at most"
        case .greaterThan: "is more than"
        case .greaterThanOrEqual: "is at least"
        case .versionLessThan: "is a version before"
        case .versionLessThanOrEqual: "is a version up to"
        case .versionEquals: "is version"
        case .versionGreaterThanOrEqual: "is a version from"
        case .versionGreaterThan: "is a version after"
        case .before: "is before"
        case .after: "is after"
        case .inSegment: "in segment"
        case .notInSegment: "not in segment"
        }
    }
}

/// One rule of a feature, in words.
struct RuleRow: Sendable {
    /// From 1: the first rule that matches decides.
    var position: Int
    var id: String
    var ruleDescription: String?
    var when: String
    var serves: String
    /// The rules without this one, for planning its removal.
    var removalText: String?

    init(_ rule: TargetingRule, position: Int) {
        self.position = position
        id = rule.id
        ruleDescription = rule.description
        when = TargetingText.clauses(rule.clauses, none: "everyone")
        serves = TargetingText.serve(rule.serve)
    }
}

/// The rule builder's fields: an attribute (the environment's known names offered), an operator
/// in words, its values, and the variation served; filled with what was sent, when it was.
struct RuleBuilder: Sendable {
    var attribute: String
    var attributeNames: [String]
    var operators: [Choice]
    var values: String
    var variations: [Choice]
    var ruleID: String

    init(draft: RuleDraft?, variations: [String], attributeNames: [String]) {
        attribute = draft?.attribute ?? ""
        self.attributeNames = attributeNames
        operators = ClauseOperator.allCases.map { op in
            Choice(
                name: op.operand == .segment ? "user " + TargetingText.words(op) : TargetingText.words(op),
                value: op.rawValue, isSelected: op.rawValue == (draft?.op ?? ClauseOperator.equals.rawValue))
        }
        values = draft?.values ?? ""
        self.variations = variations.map { Choice(name: $0, value: $0, isSelected: $0 == draft?.variation) }
        ruleID = draft?.id ?? ""
    }
}

/// The problems of refused rules or a refused segment, or the warnings of accepted ones: what,
/// where (line and column when the text has them, the JSON pointer, the field) and how to fix it.
struct TargetingIssueList: Sendable {
    struct Item: Sendable {
        var severity: String
        /// Never empty: "line 3, column 14, at /rules/0/clauses/0/operator".
        var place: String
        var message: String
        var fix: String
    }

    var items: [Item]
    var hasItems: Bool

    /// `fields`: the issues point into a form of several fields (a segment's), named by the
    /// first component of their pointer; otherwise into the one text of rules.
    init(_ issues: [ConfigIssue] = [], fields: [String: String] = [:]) {
        items = issues.map { issue in
            var parts: [String] = []
            var pointer = issue.pointer.description
            let field = pointer.split(separator: "/").first.map(String.init)
            if let field, let label = fields[field] {
                parts.append(label)
                // Within the field: `/0/operator` of the clauses.
                pointer = String(pointer.dropFirst(field.count + 1))
            }
            if let location = issue.location { parts.append("line \(location.line), column \(location.column)") }
            if !pointer.isEmpty { parts.append("at \(pointer)") }
            return Item(
                severity: issue.severity.rawValue,
                place: parts.isEmpty ? "the whole text" : parts.joined(separator: ", "),
                message: issue.message, fix: issue.fix)
        }
        hasItems = !items.isEmpty
    }
}

/// A dry run (or an application) of a change of rules or segments, in sentences: who moves in
/// each test, with a few of them, and the FeatureFlags apps that keep their group.
struct TargetingPlanView: Sendable {
    struct Move: Sendable {
        var text: String
        var examples: [String]
        var hasExamples: Bool
        /// More users than the examples.
        var hasMore: Bool

        init(_ text: String, _ move: TargetingPlan.Move) {
            self.text = text
            examples = move.examples.map(\.rawValue)
            hasExamples = !examples.isEmpty
            hasMore = move.users > examples.count
        }
    }

    struct Test: Sendable {
        var feature: String
        var url: String
        var summary: String
        var moves: [Move]
        var hasMoves: Bool
        var kept: [Move]
        var hasKept: Bool
        /// How many FeatureFlags apps keep their group, as the warning's headline.
        var keptSummary: String
    }

    var summary: String
    var tests: [Test]
    var hasTests: Bool
    var warnings: TargetingIssueList
    /// Whether applying writes anything.
    var canApply: Bool
    var nextRevision: Int

    /// `subject`: what "already has" is said of when nothing changes ("these rules").
    init(_ outcome: ConfigsOutcome, urls: EnvironmentURLs, subject: String) {
        warnings = TargetingIssueList(outcome.warnings)
        nextRevision = outcome.revision
        canApply = !outcome.isUnchanged
        tests = outcome.plans.map { plan in
            let moving = plan.movingUsers
            let summary =
                plan.recordedUsers == 0
                ? "No user is recorded in this test yet: the rules decide each user at their first fetch."
                : "\(Self.count(plan.recordedUsers, "recorded user")), \(plan.usersWithAttributes.grouped) with attributes on record (rules on attributes can only place those): \(moving.grouped) change\(moving == 1 ? "s" : "") group."
            let moves = plan.moves.map { move in
                Move(
                    "\(Self.count(move.users, "recorded user")) move\(move.users == 1 ? "s" : "") from \(move.from) to \(move.to)",
                    move)
            }
            let kept = plan.keptByApps.map { move in
                Move(
                    "\(Self.count(move.users, "FeatureFlags app")) stay\(move.users == 1 ? "s" : "") in \(move.from) (the rules would put \(move.users == 1 ? "it" : "them") in \(move.to))",
                    move)
            }
            let keptApps = plan.keptByApps.reduce(0) { $0 + $1.users }
            return Test(
                feature: plan.feature, url: urls.feature(plan.feature), summary: summary, moves: moves,
                hasMoves: !moves.isEmpty, kept: kept, hasKept: !kept.isEmpty,
                keptSummary:
                    "\(Self.count(keptApps, "FeatureFlags app")) keep\(keptApps == 1 ? "s" : "") the group \(keptApps == 1 ? "it" : "they") cached."
            )
        }
        hasTests = !tests.isEmpty
        if outcome.isUnchanged {
            summary = "Nothing to change: revision \(outcome.revision) already has \(subject)."
        } else if outcome.plans.isEmpty {
            summary =
                "Applying makes revision \(outcome.revision). No test's rules depend on this change: no recorded user changes group."
        } else {
            let moving = outcome.plans.reduce(0) { $0 + $1.movingUsers }
            let recorded = outcome.plans.reduce(0) { $0 + $1.recordedUsers }
            let kept = outcome.plans.reduce(0) { $0 + $1.keptByApps.reduce(0) { $0 + $1.users } }
            summary =
                "Applying makes revision \(outcome.revision): \(moving.grouped) of \(Self.count(recorded, "recorded user")) change group"
                + (kept > 0 ? "; \(Self.count(kept, "FeatureFlags app")) keep\(kept == 1 ? "s" : "") theirs." : ".")
        }
    }

    /// `3 recorded users`, `1 recorded user`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number.grouped) \(noun)\(number == 1 ? "" : "s")"
    }
}
