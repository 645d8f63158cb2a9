/// Reads the rules of a feature or config and the segments of an environment, as the API and
/// the command line take them, reporting every problem with its place:
///
///     {"rules": [{"id": "beta", "description": "…",
///                 "clauses": [{"attribute": "country", "operator": "in", "values": ["DE", "AT"]},
///                             {"operator": "inSegment", "values": ["beta-testers"]}],
///                 "serve": {"variation": "Group B"}}]}
///
/// `serve` is `{"variation": NAME}`, `{"split": [{"variation": NAME, "weight": PERCENT}, …]}`, or
/// for a config `{"value": VALUE}`. A segment is
/// `{"name": …, "description": …, "users": [ID, …], "clauses": [CLAUSE, …]}`.
public enum TargetingDecoder {
    static let ruleKeys: Set<String> = ["id", "description", "clauses", "serve"]
    static let clauseKeys: Set<String> = ["attribute", "operator", "values"]
    static let segmentKeys: Set<String> = ["name", "description", "users", "clauses"]

    /// The most rules a feature or config may have, clauses a rule or segment may have, and
    /// values a clause may list: bounds on the work one evaluation does.
    public static let maximumRules = 100
    public static let maximumClauses = 20
    public static let maximumValues = 1_000

    /// Decodes `{"rules": [...]}` (and `optionKeys` beside it, returned as they are). With
    /// `configType`, the rules are a config's and serve values of that type; otherwise a
    /// feature's, serving variations.
    public static func decodeRules(
        _ bytes: [UInt8], configType: ConfigType? = nil, optionKeys: Set<String> = []
    ) throws(ConfigsRefused) -> (rules: [TargetingRule], options: JSONObject) {
        var issues = IssueList(bytes)
        let root = try parse(bytes, issues: &issues)
        guard case .object(let members) = root.content, let list = root.member("rules")?.node,
            case .array = list.content
        else {
            issues.error(
                nil, .root, offset: root.offset, "rules are an object with a \"rules\" array",
                fix: "write {\"rules\": [...]}; an empty array removes them all")
            throw ConfigsRefused(issues.all)
        }
        let options = split(
            members, known: ["rules"], optionKeys: optionKeys,
            fix: "the body has \"rules\"\(optionKeys.sorted().map { ", \"\($0)\"" }.joined()) only", issues: &issues)
        let rules = decodeRuleList(
            list, at: JSONPointer.root.appending("rules"), configType: configType, issues: &issues)
        guard !issues.hasErrors else { throw ConfigsRefused(issues.all) }
        return (rules, options)
    }

    /// Decodes an array of rules at `pointer`: each rule, at most `maximumRules`, ids unique.
    static func decodeRuleList(
        _ list: JSONNode, at pointer: JSONPointer, configType: ConfigType?, issues: inout IssueList
    ) -> [TargetingRule] {
        guard case .array(let nodes) = list.content else {
            issues.error(
                nil, pointer, offset: list.offset, "rules are an array",
                fix: "write \"rules\": [{\"id\": …, \"clauses\": […], \"serve\": …}]")
            return []
        }
        if nodes.count > maximumRules {
            issues.error(
                nil, pointer, offset: list.offset,
                "\(nodes.count) rules, over the \(maximumRules) one feature or config may have",
                fix: "merge rules, or move lists of users into a segment")
        }
        var rules: [TargetingRule] = []
        var seen: [String: JSONPointer] = [:]
        for (index, node) in nodes.enumerated() {
            let rulePointer = pointer.appending(index)
            guard let rule = decodeRule(node, at: rulePointer, configType: configType, issues: &issues) else {
                continue
            }
            if let first = seen[rule.id] {
                issues.error(
                    rule.id, rulePointer.appending("id"), offset: node.member("id")?.node.offset ?? node.offset,
                    "the id \"\(rule.id)\" is already the rule's at \(first)",
                    fix: "give each rule an id of its own: history and OFREP's metadata name rules by it")
                continue
            }
            seen[rule.id] = rulePointer
            rules.append(rule)
        }
        return rules
    }

    /// Decodes one segment (and `optionKeys` beside its fields). With `name` (the API's path),
    /// `"name"` may be left out, and must be that name when given.
    public static func decodeSegment(
        _ bytes: [UInt8], name expected: String? = nil, optionKeys: Set<String> = []
    ) throws(ConfigsRefused) -> (segment: Segment, options: JSONObject) {
        var issues = IssueList(bytes)
        let root = try parse(bytes, issues: &issues)
        guard case .object(let members) = root.content else {
            issues.error(
                nil, .root, offset: root.offset, "a segment is an object",
                fix: "write {\"name\": \"beta-testers\", \"users\": [...], \"clauses\": [...]}")
            throw ConfigsRefused(issues.all)
        }
        let options = split(
            members, known: segmentKeys, optionKeys: optionKeys,
            fix: "a segment has \(segmentKeys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) only",
            issues: &issues)
        var given: String?
        if case .string(let text)? = root.member("name")?.node.content { given = text }
        if let expected, let member = root.member("name"), given != expected {
            issues.error(
                nil, JSONPointer.root.appending("name"), offset: member.node.offset,
                "\"name\" differs from the segment the request names, \"\(expected)\"",
                fix: "leave \"name\" out, or write \"\(expected)\"")
            throw ConfigsRefused(issues.all)
        }
        guard let name = root.member("name") == nil ? expected : given, isValidIdentifier(name) else {
            issues.error(
                nil, JSONPointer.root.appending("name"), offset: root.member("name")?.node.offset ?? root.offset,
                "a segment needs a \"name\": 1 to 64 letters, digits, '-', '_' or '.'",
                fix: "name it as rules will, such as \"beta-testers\"")
            throw ConfigsRefused(issues.all)
        }
        let description = decodeDescription(root, at: .root, subject: name, issues: &issues)
        var users: Set<UserID> = []
        if let member = root.member("users") {
            let pointer = JSONPointer.root.appending("users")
            if case .array(let nodes) = member.node.content {
                if nodes.count > Segment.maximumUsers {
                    issues.error(
                        name, pointer, offset: member.node.offset,
                        "\(nodes.count) users, over the \(Segment.maximumUsers) a segment may list",
                        fix: "split the list, or describe the users with clauses on their attributes")
                } else {
                    users.reserveCapacity(nodes.count)
                    for (index, node) in nodes.enumerated() {
                        guard case .string(let text) = node.content, let user = try? UserID(validating: text) else {
                            issues.error(
                                name, pointer.appending(index), offset: node.offset,
                                "a user id is a string of 1 to 256 bytes of UTF-8 without control characters",
                                fix: "write the id the app sends as the user")
                            continue
                        }
                        users.insert(user)
                    }
                }
            } else {
                issues.error(
                    name, pointer, offset: member.node.offset, "\"users\" must be an array of user ids",
                    fix: "write \"users\": [\"user-1\", …]")
            }
        }
        let clauses = decodeClauses(root, at: .root, subject: name, allowSegments: false, issues: &issues)
        guard !issues.hasErrors, let clauses else { throw ConfigsRefused(issues.all) }
        return (Segment(name: name, description: description, users: users, clauses: clauses), options)
    }

    /// Reads a revision's targeting document (`TargetingDocument.rendered()`).
    static func decodeDocument(_ bytes: [UInt8]) throws(ConfigsRefused) -> TargetingDocument {
        var issues = IssueList(bytes)
        let root = try parse(bytes, issues: &issues)
        var document = TargetingDocument()
        if case .object(let features)? = root.member("features")?.node.content {
            for feature in features {
                let pointer = JSONPointer.root.appending("features").appending(feature.key)
                guard case .array(let nodes) = feature.node.content else {
                    issues.error(nil, pointer, offset: feature.node.offset, "a feature's rules are an array", fix: "")
                    continue
                }
                document.featureRules[feature.key] = nodes.enumerated().compactMap { index, node in
                    decodeRule(node, at: pointer.appending(index), configType: nil, issues: &issues)
                }
            }
        }
        if case .array(let nodes)? = root.member("segments")?.node.content {
            for (index, node) in nodes.enumerated() {
                let pointer = JSONPointer.root.appending("segments").appending(index)
                guard case .string(let name)? = node.member("name")?.node.content else {
                    issues.error(nil, pointer, offset: node.offset, "a segment needs a name", fix: "")
                    continue
                }
                var definition = SegmentDefinition(name: name)
                if case .string(let description)? = node.member("description")?.node.content {
                    definition.description = description
                }
                definition.clauses =
                    decodeClauses(node, at: pointer, subject: name, allowSegments: false, issues: &issues) ?? []
                if let users = node.member("users")?.node {
                    guard case .string(let sha256)? = users.member("sha256")?.node.content,
                        case .number(let count)? = users.member("count")?.node.content
                    else {
                        issues.error(
                            name, pointer.appending("users"), offset: users.offset, "a list needs its sha256 and count",
                            fix: "")
                        continue
                    }
                    definition.users = SegmentUsers(sha256: sha256, count: Int(count))
                }
                document.segments[name] = definition
            }
        }
        guard !issues.hasErrors else { throw ConfigsRefused(issues.all) }
        return document
    }

    /// The top-level members that are neither `known` nor options: errors, with `fix`. Returns
    /// the options as they are.
    private static func split(
        _ members: [JSONNode.Member], known: Set<String>, optionKeys: Set<String>, fix: String,
        issues: inout IssueList
    ) -> JSONObject {
        var options = JSONObject()
        for member in members where !known.contains(member.key) {
            if optionKeys.contains(member.key) {
                options.append(member.key, member.node.value)
            } else {
                issues.error(
                    nil, JSONPointer.root.appending(member.key), offset: member.keyOffset,
                    "unknown key \"\(member.key)\"", fix: fix)
            }
        }
        return options
    }

    /// Ids of rules and names of segments: what URLs, flags and metadata carry as they are.
    public static func isValidIdentifier(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    private static func parse(_ bytes: [UInt8], issues: inout IssueList) throws(ConfigsRefused) -> JSONNode {
        guard bytes.count <= DocumentDecoder.maximumInputSize else {
            issues.error(
                nil, .root, offset: nil,
                "the body is \(bytes.count) bytes, over the \(DocumentDecoder.maximumInputSize) bytes Flagpole reads",
                fix: "send fewer rules or users at once")
            throw ConfigsRefused(issues.all)
        }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            issues.error(nil, .root, offset: error.offset, error.message, fix: error.fix)
            throw ConfigsRefused(issues.all)
        }
    }

    static func decodeRule(
        _ node: JSONNode, at pointer: JSONPointer, configType: ConfigType?, issues: inout IssueList
    ) -> TargetingRule? {
        guard case .object(let members) = node.content else {
            issues.error(
                nil, pointer, offset: node.offset, "a rule must be an object",
                fix: "write {\"id\": …, \"clauses\": [...], \"serve\": {…}}")
            return nil
        }
        guard case .string(let id)? = node.member("id")?.node.content, isValidIdentifier(id) else {
            issues.error(
                nil, pointer.appending("id"), offset: node.member("id")?.node.offset ?? node.offset,
                "a rule needs an \"id\": 1 to 64 letters, digits, '-', '_' or '.'",
                fix: "name it for what it does, such as \"beta-testers-get-b\"")
            return nil
        }
        let errorsBefore = issues.errorCount
        for member in members where !ruleKeys.contains(member.key) {
            issues.error(
                id, pointer.appending(member.key), offset: member.keyOffset, "unknown key \"\(member.key)\"",
                fix: "a rule has \(ruleKeys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) only")
        }
        let description = decodeDescription(node, at: pointer, subject: id, issues: &issues)
        let clauses = decodeClauses(node, at: pointer, subject: id, allowSegments: true, issues: &issues)
        let serve = decodeServe(node, at: pointer, rule: id, configType: configType, issues: &issues)
        guard let clauses, let serve, issues.errorCount == errorsBefore else { return nil }
        return TargetingRule(id: id, description: description, clauses: clauses, serve: serve)
    }

    private static func decodeDescription(
        _ node: JSONNode, at pointer: JSONPointer, subject: String, issues: inout IssueList
    ) -> String? {
        guard let member = node.member("description") else { return nil }
        switch member.node.content {
        case .string(let text) where !text.utf8.contains(0) && text.utf8.count <= 1_000: return text
        case .null: return nil
        default:
            issues.error(
                subject, pointer.appending("description"), offset: member.node.offset,
                "\"description\" must be a string of at most 1 000 bytes", fix: "write a sentence for the team")
            return nil
        }
    }

    private static func decodeClauses(
        _ node: JSONNode, at pointer: JSONPointer, subject: String, allowSegments: Bool, issues: inout IssueList
    ) -> [Clause]? {
        guard let member = node.member("clauses") else { return [] }
        let listPointer = pointer.appending("clauses")
        guard case .array(let nodes) = member.node.content else {
            issues.error(
                subject, listPointer, offset: member.node.offset, "\"clauses\" must be an array",
                fix: "write \"clauses\": [{\"attribute\": …, \"operator\": …, \"values\": [...]}]")
            return nil
        }
        if nodes.count > maximumClauses {
            issues.error(
                subject, listPointer, offset: member.node.offset,
                "\(nodes.count) clauses, over the \(maximumClauses) a rule or segment may have",
                fix: "move some of them into a segment")
            return nil
        }
        var clauses: [Clause] = []
        for (index, clauseNode) in nodes.enumerated() {
            if let clause = decodeClause(
                clauseNode, at: listPointer.appending(index), subject: subject, allowSegments: allowSegments,
                issues: &issues)
            {
                clauses.append(clause)
            }
        }
        return clauses.count == nodes.count ? clauses : nil
    }

    static func decodeClause(
        _ node: JSONNode, at pointer: JSONPointer, subject: String, allowSegments: Bool, issues: inout IssueList
    ) -> Clause? {
        guard case .object(let members) = node.content else {
            issues.error(
                subject, pointer, offset: node.offset, "a clause must be an object",
                fix: "write {\"attribute\": \"country\", \"operator\": \"in\", \"values\": [\"DE\"]}")
            return nil
        }
        for member in members where !clauseKeys.contains(member.key) {
            issues.error(
                subject, pointer.appending(member.key), offset: member.keyOffset, "unknown key \"\(member.key)\"",
                fix: "a clause has \"attribute\", \"operator\" and \"values\" only")
        }
        let operatorNode = node.member("operator")?.node
        guard case .string(let name)? = operatorNode?.content, let op = ClauseOperator(rawValue: name) else {
            issues.error(
                subject, pointer.appending("operator"), offset: operatorNode?.offset ?? node.offset,
                operatorNode.map { node in
                    if case .string(let text) = node.content { return "unknown operator \"\(text)\"" }
                    return "\"operator\" must be a string, not \(node.value.summary)"
                } ?? "a clause needs an \"operator\"",
                fix: "use one of \(ClauseOperator.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        if op.operand == .segment && !allowSegments {
            issues.error(
                subject, pointer.appending("operator"), offset: operatorNode!.offset,
                "a segment's clauses can't name segments", fix: "list the other segment's clauses here instead")
            return nil
        }
        var attribute: String?
        let attributeNode = node.member("attribute")?.node
        if op.operand == .segment {
            if let attributeNode {
                issues.error(
                    subject, pointer.appending("attribute"), offset: attributeNode.offset,
                    "\(op.rawValue) takes segment names in \"values\", no attribute", fix: "remove \"attribute\"")
                return nil
            }
        } else {
            guard case .string(let key)? = attributeNode?.content, (1...128).contains(key.utf8.count),
                !key.utf8.contains(0)
            else {
                issues.error(
                    subject, pointer.appending("attribute"), offset: attributeNode?.offset ?? node.offset,
                    "\(op.rawValue) needs an \"attribute\": the name of a context attribute (\"targetingKey\" for the user id)",
                    fix: "write \"attribute\": \"country\", say")
                return nil
            }
            attribute = key
        }
        let valuesNode = node.member("values")?.node
        guard case .array(let valueNodes)? = valuesNode?.content, !valueNodes.isEmpty else {
            issues.error(
                subject, pointer.appending("values"), offset: valuesNode?.offset ?? node.offset,
                "\(op.rawValue) needs \"values\": a non-empty array", fix: "write \"values\": [ … ]")
            return nil
        }
        guard valueNodes.count <= maximumValues else {
            issues.error(
                subject, pointer.appending("values"), offset: valuesNode!.offset,
                "\(valueNodes.count) values, over the \(maximumValues) a clause may list",
                fix: "put long lists of users in a segment")
            return nil
        }
        if op.takesOneValue && valueNodes.count != 1 {
            issues.error(
                subject, pointer.appending("values"), offset: valuesNode!.offset,
                "\(op.rawValue) compares with one value, not \(valueNodes.count)",
                fix: op == .equals || op == .notEquals ? "use \(op == .equals ? "in" : "notIn") for a list" : "keep one"
            )
            return nil
        }
        var values: [AttributeValue] = []
        for (index, valueNode) in valueNodes.enumerated() {
            let valuePointer = pointer.appending("values").appending(index)
            guard let value = operandValue(valueNode, for: op) else {
                issues.error(
                    subject, valuePointer, offset: valueNode.offset,
                    "\(op.rawValue) can't compare with \(valueNode.value.summary)", fix: op.clauseValueFix)
                continue
            }
            values.append(value)
        }
        guard values.count == valueNodes.count else { return nil }
        return Clause(attribute: attribute, op: op, values: values)
    }

    /// A clause value the operator can compare with, or `nil`.
    private static func operandValue(_ node: JSONNode, for op: ClauseOperator) -> AttributeValue? {
        switch node.content {
        case .string(let text): op.clauseValue(.string(text))
        case .number(let number): op.clauseValue(.number(number))
        case .bool(let flag): op.clauseValue(.bool(flag))
        default: nil
        }
    }

    private static func decodeServe(
        _ node: JSONNode, at pointer: JSONPointer, rule: String, configType: ConfigType?, issues: inout IssueList
    ) -> RuleServe? {
        let servePointer = pointer.appending("serve")
        let expected =
            configType == nil
            ? "{\"variation\": NAME} or {\"split\": [{\"variation\": NAME, \"weight\": PERCENT}, …]}"
            : "{\"value\": VALUE}"
        guard let serveNode = node.member("serve")?.node, case .object(let members) = serveNode.content,
            members.count == 1, let member = members.first
        else {
            issues.error(
                rule, servePointer, offset: node.member("serve")?.node.offset ?? node.offset,
                "a rule needs \"serve\": \(expected)", fix: "say what users the rule matches get")
            return nil
        }
        let memberPointer = servePointer.appending(member.key)
        switch (member.key, configType) {
        case ("value", let type?):
            let lost =
                issues.isStored ? [] : ConfigValue.numberProblems(in: member.node, as: type, source: issues.bytes)
            for (at, offset, problem) in lost {
                issues.error(rule, memberPointer.appending(at), offset: offset, problem.message, fix: problem.fix)
            }
            guard lost.isEmpty else { return nil }
            do {
                return .value(try ConfigValue(member.node.value, as: type))
            } catch {
                issues.error(rule, memberPointer, offset: member.node.offset, error.message, fix: error.fix)
                return nil
            }
        case ("variation", nil):
            guard case .string(let name) = member.node.content, !name.isEmpty else {
                issues.error(
                    rule, memberPointer, offset: member.node.offset, "\"variation\" must name a variation",
                    fix: "write one of the feature's variations")
                return nil
            }
            return .variation(name)
        case ("split", nil):
            guard case .array(let shares) = member.node.content, !shares.isEmpty else {
                issues.error(
                    rule, memberPointer, offset: member.node.offset, "\"split\" must be a non-empty array",
                    fix: "write [{\"variation\": \"A\", \"weight\": 20}, {\"variation\": \"B\", \"weight\": 80}]")
                return nil
            }
            var weighted: [RuleServe.WeightedVariation] = []
            for (index, share) in shares.enumerated() {
                guard case .string(let variation)? = share.member("variation")?.node.content, !variation.isEmpty,
                    case .number(let weight)? = share.member("weight")?.node.content, weight >= 0, weight <= 100,
                    case .object(let shareMembers) = share.content, shareMembers.count == 2
                else {
                    issues.error(
                        rule, memberPointer.appending(index), offset: share.offset,
                        "a share is {\"variation\": NAME, \"weight\": PERCENT} with a weight from 0 to 100",
                        fix: "write {\"variation\": \"A\", \"weight\": 20}")
                    return nil
                }
                weighted.append(RuleServe.WeightedVariation(variation: variation, weight: weight))
            }
            let total = weighted.reduce(0) { $0 + $1.weight }
            guard abs(total - 100) < 1e-9 else {
                issues.error(
                    rule, memberPointer, offset: member.node.offset,
                    "the weights sum to \(JSONWriter.format(total)), not 100",
                    fix: "make the shares add up to 100 %")
                return nil
            }
            return .split(weighted)
        default:
            issues.error(
                rule, memberPointer, offset: member.keyOffset,
                "a \(configType == nil ? "feature" : "config")'s rule serves \(expected), not \"\(member.key)\"",
                fix: configType == nil
                    ? "a value goes in a config's rules" : "write {\"value\": …} of the config's type")
            return nil
        }
    }
}
