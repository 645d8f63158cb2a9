/// A typed config of an environment: what a SwiftFeatureConfigs app finds under `name` in its
/// in-memory dictionary, and what an OpenFeature client evaluates as the flag `name`.
public struct Config: Hashable, Sendable {
    /// The key apps look the value up by, exactly as written; unique in its environment by
    /// `Feature.nameKey`, the rule feature names follow.
    public var name: String
    public var type: ConfigType
    /// What every user gets unless the config follows a feature with a value for their variation.
    public var defaultValue: ConfigValue
    public var description: String?
    /// Labels clients filter by (`configs.json?tag=ios`), in order, without repeats.
    public var tags: [String]
    /// The feature whose state picks the value: a test's variation, or `Enabled`/`Disabled` of a
    /// flag, `Unlocked`/`Locked` of an unlock flag (`Evaluation.variation`).
    public var follows: String?
    /// The value for each variation of the followed feature; a variation without one gets the
    /// default.
    public var values: [Variant]
    /// The config's own rules, serving values: for a user they decide first, before the
    /// followed feature and the default (docs/TARGETING.md).
    public var rules: [TargetingRule]
    /// What the app's declaration file says of the config, from its import on (`nil`: not
    /// declared there, or not imported from it).
    public var declaration: ConfigDeclaration?

    /// The value of one variation of the followed feature.
    public struct Variant: Hashable, Sendable {
        public var variation: String
        public var value: ConfigValue

        public init(variation: String, value: ConfigValue) {
            self.variation = variation
            self.value = value
        }
    }

    public init(
        name: String, type: ConfigType, defaultValue: ConfigValue, description: String? = nil, tags: [String] = [],
        follows: String? = nil, values: [Variant] = [], rules: [TargetingRule] = [],
        declaration: ConfigDeclaration? = nil
    ) {
        self.rules = rules
        self.declaration = declaration
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.description = description
        self.tags = tags
        self.follows = follows
        self.values = values
    }

    /// The value for a user the followed feature shows `variation` (`nil`: no user, or the
    /// feature is gone), and the variation it came from (`nil` for the default).
    public func value(for variation: String?) -> (value: ConfigValue, variant: String?) {
        if follows != nil, let variation, let variant = values.first(where: { $0.variation == variation }) {
            return (variant.value, variant.variation)
        }
        return (defaultValue, nil)
    }

    /// The value for a user its own rules decide, with the rule's id: the first that matches
    /// `context`; `nil` when none does.
    public func ruleValue(
        for context: EvaluationContext, segments: SegmentLookup
    ) -> (value: ConfigValue, rule: String)? {
        for rule in rules where rule.matches(context, segments: segments) {
            if case .value(let value) = rule.serve { return (value, rule.id) }
        }
        return nil
    }

    /// The config as its definition is written in a configs file: `name`, `type`, `description`,
    /// `tags`, `default`, `follows`, `values`, `rules`, `declared`, the optional ones only when set.
    public var jsonObject: JSONObject {
        var object: JSONObject = ["name": .string(name), "type": .string(type.rawValue)]
        if let description { object.append("description", .string(description)) }
        if !tags.isEmpty { object.append("tags", .array(tags.map(JSONValue.string))) }
        object.append("default", defaultValue.jsonValue)
        if let follows {
            object.append("follows", .string(follows))
            object.append(
                "values",
                .object(JSONObject(values.map { JSONObject.Member(key: $0.variation, value: $0.value.jsonValue) })))
        }
        if !rules.isEmpty { object.append("rules", .array(rules.map(\.jsonValue))) }
        if let declaration { object.append("declared", .object(declaration.jsonObject)) }
        return object
    }

    /// The definition as JSON, laid out as a configs file lays it out, each value in its type's
    /// form (a double with its decimal point, which `jsonObject` loses).
    public func rendered() -> [UInt8] {
        var output: [UInt8] = []
        ConfigsDocument.write(self, indent: 0, into: &output)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    /// Definitions as a JSON array, each as `rendered()` writes it.
    public static func rendered(_ configs: [Config]) -> [UInt8] {
        guard !configs.isEmpty else { return Array("[]\n".utf8) }
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (index, config) in configs.enumerated() {
            output.append(contentsOf: (index == 0 ? "\n" : ",\n").utf8)
            ConfigsDocument.write(config, indent: 4, into: &output)
        }
        output.append(contentsOf: "\n]\n".utf8)
        return output
    }

    /// Whether the two are written alike, byte for byte (see `JSONValue.isIdentical(to:)`).
    public func isIdentical(to other: Config) -> Bool {
        type == other.type && jsonObject.isIdentical(to: other.jsonObject) && defaultValue == other.defaultValue
            && values.map(\.value) == other.values.map(\.value) && rules == other.rules
            && declaration == other.declaration
    }
}

/// An environment's configs in order, with the tags of its features: what a revision keeps
/// beside its features.json, and the file `flagpole config export` writes.
public struct ConfigsDocument: Hashable, Sendable {
    public var configs: [Config]
    /// The tags given to features in the store, by feature name (a feature's `tags` key in
    /// features.json counts too: see `tags(of:)`).
    public var featureTags: [String: [String]]
    /// The names of the configs each release of the app declares and can take, by release
    /// (`"5.2"`): what `configs.json?release=5.2` and the plist exported for it serve. Only a
    /// declaration import with a release sets one (`DeclarationsMerge.release`).
    public var releases: [String: [String]]

    public init(configs: [Config] = [], featureTags: [String: [String]] = [:], releases: [String: [String]] = [:]) {
        self.configs = configs
        self.featureTags = featureTags
        self.releases = releases
    }

    public var isEmpty: Bool { configs.isEmpty && featureTags.isEmpty && releases.isEmpty }

    /// The config named `name`, as apps compare names.
    public func config(named name: String) -> Config? {
        index(of: name).map { configs[$0] }
    }

    /// Where the config named `name` is, as apps compare names.
    public func index(of name: String) -> Int? {
        let key = Feature.nameKey(name)
        return configs.firstIndex { Feature.nameKey($0.name) == key }
    }

    /// Replaces the config of `config`'s name in its place, or adds it at the end.
    public mutating func set(_ config: Config) {
        if let index = index(of: config.name) { configs[index] = config } else { configs.append(config) }
    }

    /// A feature's tags: those set in the store, then those of a `tags` array in its features.json.
    public func tags(of feature: Feature) -> [String] {
        var tags = featureTags[feature.name] ?? []
        if case .array(let written)? = feature.unknownKeys["tags"] {
            for case .string(let tag) in written where !tags.contains(tag) { tags.append(tag) }
        }
        return tags
    }

    /// The document as JSON: `{"configs": [...]}`, then `"feature-tags"` when any feature has some.
    public var jsonValue: JSONValue {
        var object: JSONObject = ["configs": .array(configs.map { .object($0.jsonObject) })]
        if let featureTagsJSON { object.append("feature-tags", featureTagsJSON) }
        if let releasesJSON { object.append("releases", releasesJSON) }
        return .object(object)
    }

    /// `{"Feature": ["ios"]}` by feature name, as bytes sort; `nil` when no feature has tags.
    private var featureTagsJSON: JSONValue? { Self.listsJSON(featureTags) }

    /// `{"5.2": ["isEnabled"]}` by release, as bytes sort; `nil` when no release is declared.
    private var releasesJSON: JSONValue? { Self.listsJSON(releases) }

    private static func listsJSON(_ lists: [String: [String]]) -> JSONValue? {
        guard !lists.isEmpty else { return nil }
        return .object(
            JSONObject(
                lists.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                    JSONObject.Member(key: $0.key, value: .array($0.value.map(JSONValue.string)))
                }))
    }

    /// The configs release `release` declares, or `nil` when no declaration import recorded it.
    public func configs(ofRelease release: String) -> [Config]? {
        releases[release].map { names in
            let keys = Set(names.map(Feature.nameKey))
            return configs.filter { keys.contains(Feature.nameKey($0.name)) }
        }
    }

    /// The document's bytes as revisions keep them and `flagpole config export` writes them;
    /// with a `revision`, that member first (`{"revision": N, "configs": …}`), and `extra`
    /// members last, as the API answers.
    public func rendered(revision: Int?? = .none, extra: JSONObject = [:]) -> [UInt8] {
        var output: [UInt8] = []
        renderPretty(revision: revision, extra: extra, into: &output)
        return output
    }

    /// Pretty JSON laid out as `JSONWriter` lays it out, written member by member because
    /// `JSONValue` numbers have no type: a double must keep its decimal point.
    private func renderPretty(revision: Int??, extra: JSONObject, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        if case .some(let number) = revision {
            output.append(contentsOf: "\n    \"revision\": \(number.map(String.init) ?? "null"),".utf8)
        }
        output.append(contentsOf: "\n    \"configs\": [".utf8)
        for (index, config) in configs.enumerated() {
            output.append(contentsOf: (index == 0 ? "\n" : ",\n").utf8)
            Self.write(config, indent: 8, into: &output)
        }
        output.append(contentsOf: (configs.isEmpty ? "]" : "\n    ]").utf8)
        let tags = featureTagsJSON.map { [JSONObject.Member(key: "feature-tags", value: $0)] } ?? []
        let releases = releasesJSON.map { [JSONObject.Member(key: "releases", value: $0)] } ?? []
        for member in tags + releases + extra.members {
            output.append(contentsOf: ",\n    ".utf8)
            JSONWriter.writeString(member.key, into: &output)
            output.append(contentsOf: ": ".utf8)
            var bytes = JSONWriter(style: .pretty).bytes(of: member.value)
            bytes.removeLast()
            for byte in bytes {
                output.append(byte)
                if byte == UInt8(ascii: "\n") { output.append(contentsOf: "    ".utf8) }
            }
        }
        output.append(contentsOf: "\n}\n".utf8)
    }

    static func write(_ config: Config, indent: Int, into output: inout [UInt8]) {
        let pad = String(repeating: " ", count: indent)
        let inner = pad + "    "
        output.append(contentsOf: "\(pad){".utf8)
        var first = true
        func member(_ key: String, _ write: (inout [UInt8]) -> Void) {
            output.append(contentsOf: ((first ? "\n" : ",\n") + inner).utf8)
            first = false
            JSONWriter.writeString(key, into: &output)
            output.append(contentsOf: ": ".utf8)
            write(&output)
        }
        member("name") { JSONWriter.writeString(config.name, into: &$0) }
        member("type") { JSONWriter.writeString(config.type.rawValue, into: &$0) }
        if let description = config.description {
            member("description") { JSONWriter.writeString(description, into: &$0) }
        }
        if !config.tags.isEmpty {
            member("tags") {
                $0.append(contentsOf: JSONWriter(style: .compact).bytes(of: .array(config.tags.map(JSONValue.string))))
            }
        }
        member("default") { config.defaultValue.writeJSON(into: &$0) }
        if let follows = config.follows {
            member("follows") { JSONWriter.writeString(follows, into: &$0) }
            member("values") { output in
                output.append(UInt8(ascii: "{"))
                for (index, variant) in config.values.enumerated() {
                    output.append(contentsOf: ((index == 0 ? "\n" : ",\n") + inner + "    ").utf8)
                    JSONWriter.writeString(variant.variation, into: &output)
                    output.append(contentsOf: ": ".utf8)
                    variant.value.writeJSON(into: &output)
                }
                output.append(contentsOf: (config.values.isEmpty ? "}" : "\n" + inner + "}").utf8)
            }
        }
        if !config.rules.isEmpty {
            // One rule a line; a value keeps its type's form (a double its decimal point).
            member("rules") { output in
                output.append(UInt8(ascii: "["))
                for (index, rule) in config.rules.enumerated() {
                    output.append(contentsOf: ((index == 0 ? "\n" : ",\n") + inner + "    ").utf8)
                    rule.writeJSON(into: &output)
                }
                output.append(contentsOf: ("\n" + inner + "]").utf8)
            }
        }
        if let declaration = config.declaration {
            // On one line, the default in its type's form (a double with its decimal point).
            member("declared") { output in
                output.append(contentsOf: "{\"type\": ".utf8)
                JSONWriter.writeString(declaration.type.rawValue, into: &output)
                output.append(contentsOf: ", \"default\": ".utf8)
                declaration.defaultValue.writeJSON(into: &output)
                if let doc = declaration.doc {
                    output.append(contentsOf: ", \"doc\": ".utf8)
                    JSONWriter.writeString(doc, into: &output)
                }
                if declaration.isWithdrawn { output.append(contentsOf: ", \"withdrawn\": true".utf8) }
                output.append(UInt8(ascii: "}"))
            }
        }
        output.append(contentsOf: "\n\(pad)}".utf8)
    }
}
