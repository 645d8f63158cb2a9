/// Reads a configs file (the shape `ConfigsDocument.rendered()` writes) and single configs sent
/// to the API, reporting every problem with its place, not only the first.
public enum ConfigsDecoder {
    /// The keys of a config definition.
    static let configKeys: Set<String> = [
        "name", "type", "description", "tags", "default", "follows", "values", "rules", "declared",
    ]

    /// Where the configs read come from, which decides what becomes of a value no app can take
    /// (`ConfigValue.problemsForApps`).
    enum Source {
        /// A file or a body someone sends: such a value is an error.
        case input
        /// What a revision keeps, which an earlier version may have accepted: a JSON `null` is
        /// left out (so it is never served) and every such value is a warning.
        case stored
    }

    /// Decodes a whole configs file.
    ///
    /// - throws: `ConfigsRefused` with every error (and the warnings beside them).
    public static func decode(_ bytes: [UInt8]) throws(ConfigsRefused) -> (ConfigsDocument, warnings: [ConfigIssue]) {
        let (document, warnings, _) = try decode(bytes, optionKeys: [])
        return (document, warnings)
    }

    /// Decodes the configs a revision keeps, which an earlier version wrote: a value no app can
    /// take is kept out of what is served where it can be (a JSON `null`), and reported as a
    /// warning either way.
    ///
    /// - throws: `ConfigsRefused` when they don't decode.
    public static func decodeStored(
        _ bytes: [UInt8]
    ) throws(ConfigsRefused) -> (ConfigsDocument, warnings: [ConfigIssue]) {
        let (document, warnings, _) = try decode(bytes, optionKeys: [], source: .stored)
        return (document, warnings)
    }

    /// Decodes a whole configs file whose top level may also hold `optionKeys` (an API body's
    /// `dryRun`, `message`), returned as they are.
    public static func decode(
        _ bytes: [UInt8], optionKeys: Set<String>
    ) throws(ConfigsRefused) -> (
        ConfigsDocument, warnings: [ConfigIssue], options: JSONObject
    ) {
        try decode(bytes, optionKeys: optionKeys, source: .input)
    }

    private static func decode(
        _ bytes: [UInt8], optionKeys: Set<String>, source: Source
    ) throws(ConfigsRefused) -> (
        ConfigsDocument, warnings: [ConfigIssue], options: JSONObject
    ) {
        var issues = IssueList(bytes, isStored: source == .stored)
        guard bytes.count <= DocumentDecoder.maximumInputSize else {
            throw ConfigsRefused([
                ConfigIssue(
                    .error, config: nil, pointer: .root, location: nil,
                    message:
                        "the file is \(bytes.count) bytes, over the \(DocumentDecoder.maximumInputSize) bytes Flagpole reads",
                    fix: "check that this is a configs file")
            ])
        }
        let root: JSONNode
        do {
            // What a revision keeps holds each value a few levels below where it was checked.
            let depth = JSONParser.maximumDepth + (source == .stored ? JSONParser.storedDepthAllowance : 0)
            root = try JSONParser.parse(bytes, maximumDepth: depth)
        } catch {
            issues.error(nil, .root, offset: error.offset, error.message, fix: error.fix)
            throw ConfigsRefused(issues.all)
        }
        guard case .object(let members) = root.content, let configsMember = root.member("configs"),
            case .array(let nodes) = configsMember.node.content
        else {
            issues.error(
                nil, .root, offset: root.offset, "a configs file is an object with a \"configs\" array",
                fix: "write {\"configs\": [...]}, as `flagpole config export` does")
            throw ConfigsRefused(issues.all)
        }
        var document = ConfigsDocument()
        var options = JSONObject()
        var seen: [String: JSONPointer] = [:]
        for (index, node) in nodes.enumerated() {
            let pointer = JSONPointer.root.appending("configs").appending(index)
            guard let config = decodeConfig(node, at: pointer, source: source, issues: &issues) else { continue }
            let key = Feature.nameKey(config.name)
            if let first = seen[key] {
                issues.error(
                    config.name, pointer.appending("name"), offset: node.member("name")?.node.offset ?? node.offset,
                    "a config named \"\(config.name)\" already appears at \(first) (apps compare names as Swift strings)",
                    fix: "rename this config or delete one of the two")
                continue
            }
            seen[key] = pointer
            document.configs.append(config)
        }
        for member in members where member.key != "configs" {
            if optionKeys.contains(member.key) {
                options.append(member.key, member.node.value)
                continue
            }
            let pointer = JSONPointer.root.appending(member.key)
            if member.key == "releases" {
                document.releases = decodeReleases(member.node, at: pointer, issues: &issues)
                continue
            }
            guard member.key == "feature-tags" else {
                issues.error(
                    nil, pointer, offset: member.keyOffset, "unknown key \"\(member.key)\"",
                    fix: "a configs file has \"configs\", \"feature-tags\" and \"releases\" only")
                continue
            }
            guard case .object(let features) = member.node.content else {
                issues.error(
                    nil, pointer, offset: member.node.offset, "\"feature-tags\" must be an object",
                    fix: "write {\"Feature name\": [\"ios\"]}")
                continue
            }
            for feature in features {
                if let tags = decodeTags(feature.node, at: pointer.appending(feature.key), config: nil, issues: &issues)
                {
                    document.featureTags[feature.key] = tags
                }
            }
        }
        if issues.hasErrors { throw ConfigsRefused(issues.all) }
        return (document, issues.all, options)
    }

    /// `{"5.2": ["isEnabled", …]}`: the configs each release declares, by release.
    static func decodeReleases(
        _ node: JSONNode, at pointer: JSONPointer, issues: inout IssueList
    ) -> [String: [String]] {
        guard case .object(let members) = node.content else {
            issues.error(
                nil, pointer, offset: node.offset, "\"releases\" must be an object",
                fix: "write {\"5.2\": [\"isEnabled\"]}, or leave it to `flagpole config import --release`")
            return [:]
        }
        var releases: [String: [String]] = [:]
        for member in members {
            guard isValidRelease(member.key), case .array(let elements) = member.node.content else {
                issues.error(
                    nil, pointer.appending(member.key), offset: member.node.offset,
                    "a release is 1 to 64 characters without control characters, with a list of config names",
                    fix: "write \"5.2\": [\"isEnabled\"]")
                continue
            }
            var names: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let name) = element.content, !name.isEmpty, !name.utf8.contains(0) else {
                    issues.error(
                        nil, pointer.appending(member.key).appending(index), offset: element.offset,
                        "a release lists config names", fix: "write the name as a string")
                    continue
                }
                names.append(name)
            }
            releases[member.key] = names
        }
        return releases
    }

    /// A release as `config import --release` and `?release=` name it: `5.2`, `5.2.1 (130)`.
    public static func isValidRelease(_ text: String) -> Bool {
        (1...64).contains(text.count) && !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Decodes one config sent alone, such as an API body, named `name` unless it names itself
    /// (then the same name); `optionKeys` may sit beside its keys and are returned as they are.
    ///
    /// - throws: `ConfigsRefused`.
    public static func decodeConfig(
        _ bytes: [UInt8], name: String, optionKeys: Set<String> = []
    ) throws(ConfigsRefused)
        -> (Config, options: JSONObject)
    {
        var issues = IssueList(bytes)
        do {
            var node = try JSONParser.parse(bytes)
            var options = JSONObject()
            if case .object(var members) = node.content {
                for member in members where optionKeys.contains(member.key) {
                    options.append(member.key, member.node.value)
                }
                members.removeAll { optionKeys.contains($0.key) }
                if let written = node.member("name"), case .string(let writtenName) = written.node.content,
                    writtenName != name
                {
                    issues.error(
                        name, .root.appending("name"), offset: written.node.offset,
                        "the body names the config \"\(writtenName)\", the URL \"\(name)\"",
                        fix: "leave \"name\" out, or make it the URL's")
                } else if node.member("name") == nil {
                    members.insert(
                        JSONNode.Member(
                            key: "name", keyOffset: node.offset,
                            node: JSONNode(content: .string(name), offset: node.offset)),
                        at: 0)
                }
                node.content = .object(members)
            }
            if let config = decodeConfig(node, at: .root, source: .input, issues: &issues), !issues.hasErrors {
                return (config, options)
            }
        } catch {
            issues.error(nil, .root, offset: error.offset, error.message, fix: error.fix)
        }
        throw ConfigsRefused(issues.all)
    }

    static func decodeConfig(
        _ node: JSONNode, at pointer: JSONPointer, source: Source, issues: inout IssueList
    ) -> Config? {
        guard case .object(let members) = node.content else {
            issues.error(
                nil, pointer, offset: node.offset, "a config must be an object",
                fix: "write {\"name\": …, \"type\": …, \"default\": …}")
            return nil
        }
        guard case .string(let name)? = node.member("name")?.node.content, !name.isEmpty, !name.utf8.contains(0) else {
            issues.error(
                nil, pointer.appending("name"), offset: node.member("name")?.node.offset ?? node.offset,
                "a config needs a \"name\": a non-empty string without U+0000",
                fix: "add the key apps look the value up by, such as \"mainViewTitle\"")
            return nil
        }
        let errorsBefore = issues.errorCount
        // The name is the plist's key; an earlier version may have stored such a name.
        if case .input = source, let problem = ConfigValue.controlProblem(in: name) {
            issues.error(
                name, pointer.appending("name"), offset: node.member("name")?.node.offset ?? node.offset,
                problem.message, fix: problem.fix)
        }
        for member in members where !configKeys.contains(member.key) {
            issues.error(
                name, pointer.appending(member.key), offset: member.keyOffset, "unknown key \"\(member.key)\"",
                fix: "a config has \(configKeys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")) only")
        }
        let typeNode = node.member("type")?.node
        guard case .string(let typeName)? = typeNode?.content, let type = ConfigType(rawValue: typeName) else {
            issues.error(
                name, pointer.appending("type"), offset: typeNode?.offset ?? node.offset,
                "\"type\" must be one of \(ConfigType.allCases.map(\.rawValue).joined(separator: ", "))",
                fix: "write \"type\": \"string\" (or bool, int, double, json)")
            return nil
        }
        // Where each value read is written, for the problems found once the config is whole.
        var valueOffsets: [JSONPointer: Int] = [:]
        func value(_ node: JSONNode, at pointer: JSONPointer) -> ConfigValue? {
            valueOffsets[pointer] = node.offset
            if !issues.isStored {
                for (at, offset, problem) in ConfigValue.numberProblems(in: node, as: type, source: issues.bytes) {
                    issues.error(name, pointer.appending(at), offset: offset, problem.message, fix: problem.fix)
                }
            }
            do {
                return try ConfigValue(node.value, as: type)
            } catch {
                issues.error(name, pointer, offset: node.offset, error.message, fix: error.fix)
                return nil
            }
        }
        var description: String?
        if let member = node.member("description") {
            switch member.node.content {
            case .string(let text) where !text.utf8.contains(0): description = text
            case .null: break
            default:
                issues.error(
                    name, pointer.appending("description"), offset: member.node.offset,
                    "\"description\" must be a string", fix: "write a sentence for the team, or leave the key out")
            }
        }
        let tags =
            node.member("tags").flatMap {
                decodeTags($0.node, at: pointer.appending("tags"), config: name, issues: &issues)
            } ?? []
        guard let defaultNode = node.member("default")?.node else {
            issues.error(
                name, pointer.appending("default"), offset: node.offset, "a config needs a \"default\"",
                fix: "add the value users get when nothing else applies, of type \(type)")
            return nil
        }
        let defaultValue = value(defaultNode, at: pointer.appending("default"))
        var follows: String?
        var variants: [Config.Variant] = []
        let followsNode = node.member("follows")?.node
        let valuesNode = node.member("values")?.node
        if let followsNode {
            guard case .string(let feature) = followsNode.content, !feature.isEmpty else {
                issues.error(
                    name, pointer.appending("follows"), offset: followsNode.offset,
                    "\"follows\" must name a feature", fix: "write the name of a test or flag of this environment")
                return nil
            }
            follows = feature
            guard case .object(let valueMembers)? = valuesNode?.content else {
                issues.error(
                    name, pointer.appending("values"), offset: valuesNode?.offset ?? followsNode.offset,
                    "a config that follows a feature needs \"values\": an object from variation to value",
                    fix: "write \"values\": {\"Group A\": …, \"Group B\": …}")
                return nil
            }
            var seenVariations: Set<String> = []
            for member in valueMembers {
                let memberPointer = pointer.appending("values").appending(member.key)
                guard seenVariations.insert(member.key).inserted else {
                    issues.error(
                        name, memberPointer, offset: member.keyOffset, "the variation \"\(member.key)\" has two values",
                        fix: "keep one")
                    continue
                }
                if let variantValue = value(member.node, at: memberPointer) {
                    variants.append(Config.Variant(variation: member.key, value: variantValue))
                }
            }
        } else if let valuesNode {
            issues.error(
                name, pointer.appending("values"), offset: valuesNode.offset,
                "\"values\" without \"follows\": values are per variation of a feature",
                fix: "add \"follows\": the feature's name, or remove \"values\"")
        }
        let rules = node.member("rules").map {
            TargetingDecoder.decodeRuleList($0.node, at: pointer.appending("rules"), configType: type, issues: &issues)
        }
        let declaration = node.member("declared").flatMap {
            decodeDeclaration($0.node, at: pointer.appending("declared"), config: name, issues: &issues)
        }
        guard let defaultValue, issues.errorCount == errorsBefore else { return nil }
        let config = Config(
            name: name, type: type, defaultValue: defaultValue, description: description, tags: tags,
            follows: follows, values: variants, rules: rules ?? [], declaration: declaration)
        for served in config.servedValues {
            let at = pointer.appending(served.pointer)
            // A rule's value is located at its rules.
            let offset = valueOffsets[at] ?? node.member("rules")?.node.offset ?? node.offset
            for (inner, problem) in served.value.problemsForApps {
                switch source {
                case .input: issues.error(name, at.appending(inner), offset: offset, problem.message, fix: problem.fix)
                case .stored:
                    let served = problem == ConfigValue.nullProblem ? "served without it" : "served as it is"
                    issues.warning(
                        name, at.appending(inner), offset: nil, "\(problem.message): \(served)",
                        fix: "\(problem.fix), then write the config again")
                }
            }
        }
        if case .stored = source { return config.withoutNulls() }
        return config
    }

    /// A config's `declared` object, `{"type", "default", "doc"?, "withdrawn"?}`, or `nil` after
    /// reporting what is wrong with it.
    static func decodeDeclaration(
        _ node: JSONNode, at pointer: JSONPointer, config: String, issues: inout IssueList
    ) -> ConfigDeclaration? {
        let errorsBefore = issues.errorCount
        guard case .object(let members) = node.content else {
            issues.error(
                config, pointer, offset: node.offset, "\"declared\" must be an object",
                fix: "write {\"type\": \"Int\", \"default\": 12}, or leave \"declared\" out")
            return nil
        }
        for member in members where !["type", "default", "doc", "withdrawn"].contains(member.key) {
            issues.error(
                config, pointer.appending(member.key), offset: member.keyOffset, "unknown key \"\(member.key)\"",
                fix: "a declaration has \"type\", \"default\", \"doc\" and \"withdrawn\" only")
        }
        let typeNode = node.member("type")?.node
        guard case .string(let typeName)? = typeNode?.content, let type = DeclaredType(rawValue: typeName) else {
            issues.error(
                config, pointer.appending("type"), offset: typeNode?.offset ?? node.offset,
                "a declaration's \"type\" is one of \(DeclaredType.allCases.map(\.rawValue).joined(separator: ", "))",
                fix: "write the Swift type the app declares, such as \"Int\"")
            return nil
        }
        var defaultValue: ConfigValue?
        if let defaultNode = node.member("default")?.node {
            do {
                defaultValue = try ConfigValue(defaultNode.value, as: type.configType)
            } catch {
                issues.error(
                    config, pointer.appending("default"), offset: defaultNode.offset, error.message, fix: error.fix)
            }
        } else {
            issues.error(
                config, pointer.appending("default"), offset: node.offset, "a declaration needs its \"default\"",
                fix: "write the default the declaration file gives")
        }
        var doc: String?
        if let docNode = node.member("doc")?.node {
            if case .string(let text) = docNode.content, !text.utf8.contains(0) {
                doc = text
            } else {
                issues.error(
                    config, pointer.appending("doc"), offset: docNode.offset, "\"doc\" must be a string",
                    fix: "write the declaration's doc, or leave it out")
            }
        }
        var isWithdrawn = false
        if let withdrawnNode = node.member("withdrawn")?.node {
            if case .bool(let flag) = withdrawnNode.content {
                isWithdrawn = flag
            } else {
                issues.error(
                    config, pointer.appending("withdrawn"), offset: withdrawnNode.offset,
                    "\"withdrawn\" must be true or false", fix: "write true, or leave it out")
            }
        }
        guard let defaultValue, issues.errorCount == errorsBefore else { return nil }
        return ConfigDeclaration(type: type, defaultValue: defaultValue, doc: doc, isWithdrawn: isWithdrawn)
    }

    static func decodeTags(
        _ node: JSONNode, at pointer: JSONPointer, config: String?, issues: inout IssueList
    ) -> [String]? {
        guard case .array(let elements) = node.content else {
            issues.error(
                config, pointer, offset: node.offset, "tags must be an array of strings",
                fix: "write [\"ios\", \"watch\"]")
            return nil
        }
        var tags: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let tag) = element.content, Self.isValidTag(tag) else {
                issues.error(
                    config, pointer.appending(index), offset: element.offset,
                    "a tag is a string of 1 to 64 characters, without commas, control characters or spaces at either end",
                    fix: "write a short label such as \"ios\"")
                continue
            }
            if !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    /// Whether `tag` can be a tag: it must survive a comma-separated `?tag=` and a command line.
    public static func isValidTag(_ tag: String) -> Bool {
        !tag.isEmpty && tag.count <= 64 && !tag.contains(",")
            && !tag.unicodeScalars.contains { $0.properties.generalCategory == .control }
            && tag.first?.isWhitespace == false && tag.last?.isWhitespace == false
    }
}

/// Issues gathered while reading one file, located only once something is wrong.
struct IssueList {
    /// The file, which the issues locate themselves in.
    let bytes: [UInt8]
    /// Whether the file is what a revision keeps, which an earlier version checked by its rules:
    /// a check added since reports, and never makes a stored revision unreadable.
    let isStored: Bool
    private var pending: [(issue: ConfigIssue, offset: Int?)] = []

    init(_ bytes: [UInt8], isStored: Bool = false) {
        self.bytes = bytes
        self.isStored = isStored
    }

    var errorCount: Int { pending.count { $0.issue.severity == .error } }
    var hasErrors: Bool { errorCount > 0 }

    mutating func error(_ config: String?, _ pointer: JSONPointer, offset: Int?, _ message: String, fix: String) {
        add(.error, config, pointer, offset: offset, message, fix: fix)
    }

    mutating func warning(_ config: String?, _ pointer: JSONPointer, offset: Int?, _ message: String, fix: String) {
        add(.warning, config, pointer, offset: offset, message, fix: fix)
    }

    private mutating func add(
        _ severity: Severity, _ config: String?, _ pointer: JSONPointer, offset: Int?, _ message: String, fix: String
    ) {
        pending.append(
            (ConfigIssue(severity, config: config, pointer: pointer, location: nil, message: message, fix: fix), offset)
        )
    }

    /// Every issue with its line and column.
    var all: [ConfigIssue] {
        guard !pending.isEmpty else { return [] }
        let locator = SourceLocator(bytes)
        return pending.map { entry in
            var issue = entry.issue
            issue.location = entry.offset.map { locator.location(of: $0) }
            return issue
        }
    }
}
