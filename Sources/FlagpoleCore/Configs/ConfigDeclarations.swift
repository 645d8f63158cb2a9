/// Reads SwiftFeatureConfigs' declaration file, `featureConfigs.json`: the file its code generator
/// (`Example/FeatureConfigParser`) turns into the app's `SwiftFeatureConfigs` subclass, one computed
/// property per declared feature.
///
/// The file is `{"configCollectionName": "MyFeatures", "features": [{"type": "Bool", "name":
/// "isaEnabled", "key": "isaEnabledKey", "default": "false", "doc": "…"}]}`, each `default` written
/// as a string because the generator pastes its text into Swift code. The generator reads the file
/// with Apple's `JSONSerialization` (`JSON-FeaturesParser/main.swift`, lines 16–17), and took a
/// comma before `}`: the repository's own file has twelve, and the generated code committed with it
/// matches it. So such a comma (or one before `]`) is a warning here, located, and everything else
/// must be strict JSON.
///
/// ## Which string names the config: the feature's `key` when it has one, else its `name`
///
/// A config's `name` is the dictionary key the app looks its value up by. In
/// dallasjohnson/SwiftFeatureConfigs at commit c768c62 (branch WithoutLocalPersistance, the one that
/// holds the generator):
///
/// - `Example/FeatureConfigParser/featureConfig.stencil`, line 11, writes each property's body as
///   `return config({% if not feature.key == nil %}"{{feature.key}}", {% endif %}defaultValue: …)`:
///   the `key`, when there is one, is the first argument; otherwise there is no first argument.
/// - `SwiftFeatureConfigs/Classes/SwiftFeatureConfigs.swift`, line 84, declares
///   `config<T>(_ key: String = #function, defaultValue: T) -> T`, and `getValue`, lines 96–100,
///   answers `overrideFeatureConfigs[key] as? T ?? inMemoryFeatureConfigs?[key] as? T ??
///   config.defaultValue`. Without an argument the key is `#function`, which in a property's getter
///   is the property's name: the feature's `name`.
/// - The generated `Example/FeatureConfigParser/FeatureConfigs.swift`, committed beside the
///   declarations, shows both cases: lines 10–12, `var isaEnabled: Bool { return
///   config("isaEnabledKey", defaultValue: false) }`, look up `isaEnabledKey`; lines 14–16, `var
///   navigationBarIsVisible: Bool { return config(defaultValue: true) }`, look up
///   `navigationBarIsVisible`.
///
/// (On master, commit b0c76a8, `SwiftFeatureConfigs.swift` line 83 labels the parameter,
/// `config<T>(key: String = #function, …)`, and `getValue`, lines 95–101, looks the key up the
/// same way, with a persisted layer after the in-memory one.)
public enum ConfigDeclarations {
    /// What a declaration file declares.
    public struct Declarations: Hashable, Sendable {
        /// `configCollectionName`: the subclass the generator writes, and so the name of the
        /// override plist the library reads (`<SubclassName>.plist`); `nil` when the file has none.
        public var collectionName: String?
        /// One config per feature, in order, named by its `key` or else its `name` (see above),
        /// described by its `doc`, with its declaration.
        public var configs: [Config]
        /// What the generator accepts but is worth fixing, such as trailing commas, and what
        /// `persist()` needs of the generated class.
        public var warnings: [ConfigIssue]
        /// The configs whose `key` is not their property's name: SwiftFeatureConfigs' `persist()`
        /// calls `perform(Selector(key))` for every key it is served, and the class has no getter
        /// of that name, so serving one crashes an app that persists. A release leaves them out.
        public var keysWithoutGetters: Set<String>

        public init(
            collectionName: String?, configs: [Config], warnings: [ConfigIssue], keysWithoutGetters: Set<String> = []
        ) {
            self.collectionName = collectionName
            self.configs = configs
            self.warnings = warnings
            self.keysWithoutGetters = keysWithoutGetters
        }
    }

    /// The keys of a feature that the generator's template reads.
    static let featureKeys: Set<String> = ["type", "name", "key", "default", "doc"]

    /// Decodes a declaration file.
    ///
    /// - throws: `ConfigsRefused` with every error (and the warnings beside them): the file is
    ///   not JSON once trailing commas are set aside, a feature lacks a `type`, `name` or
    ///   `default`, a type is not one of Bool, Int, Float, Double, String, a default does not read
    ///   as its type, or two features name one config (or one property).
    public static func decode(_ bytes: [UInt8]) throws(ConfigsRefused) -> Declarations {
        guard bytes.count <= DocumentDecoder.maximumInputSize else {
            throw ConfigsRefused([
                ConfigIssue(
                    .error, config: nil, pointer: .root, location: nil,
                    message:
                        "the file is \(bytes.count) bytes, over the \(DocumentDecoder.maximumInputSize) bytes Flagpole reads",
                    fix: "check that this is SwiftFeatureConfigs' featureConfigs.json")
            ])
        }
        var issues = IssueList(bytes)
        let (strictBytes, trailingCommas) = blankingTrailingCommas(in: bytes)
        for comma in trailingCommas {
            issues.warning(
                nil, .root, offset: comma.offset,
                "a comma before `\(Character(Unicode.Scalar(comma.closer)))` is not strict JSON",
                fix: "delete the comma: SwiftFeatureConfigs' generator accepts it, strict JSON readers do not")
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(strictBytes)
        } catch {
            issues.error(nil, .root, offset: error.offset, error.message, fix: error.fix)
            throw ConfigsRefused(issues.all)
        }
        guard case .object(let members) = root.content else {
            issues.error(
                nil, .root, offset: root.offset, "a declaration file is an object with a \"features\" array",
                fix: "write {\"configCollectionName\": \"MyFeatures\", \"features\": [...]}")
            throw ConfigsRefused(issues.all)
        }
        for member in members where member.key != "configCollectionName" && member.key != "features" {
            issues.warning(
                nil, JSONPointer.root.appending(member.key), offset: member.keyOffset,
                "unknown key \"\(member.key)\": the generator ignores it",
                fix: "a declaration file has \"configCollectionName\" and \"features\"; check the spelling")
        }
        let collectionName = decodeCollectionName(root, issues: &issues)
        let featuresPointer = JSONPointer.root.appending("features")
        guard let featuresNode = root.member("features")?.node, case .array(let nodes) = featuresNode.content else {
            issues.error(
                nil, featuresPointer, offset: root.member("features")?.node.offset ?? root.offset,
                "a declaration file needs a \"features\" array",
                fix: "write \"features\": [{\"type\": \"Bool\", \"name\": \"isEnabled\", \"default\": \"false\"}]")
            throw ConfigsRefused(issues.all)
        }
        var configs: [Config] = []
        var keysWithoutGetters: Set<String> = []
        // Where each config name and each property name was first declared, by `Feature.nameKey`.
        var configNames: [String: JSONPointer] = [:]
        var propertyNames: [String: JSONPointer] = [:]
        for (index, node) in nodes.enumerated() {
            let pointer = featuresPointer.appending(index)
            guard let feature = decodeFeature(node, at: pointer, issues: &issues) else { continue }
            let name = feature.config.name
            if let first = configNames[Feature.nameKey(name)] {
                issues.error(
                    name, feature.namePointer, offset: feature.nameOffset,
                    "the config \"\(name)\" is already declared at \(first) (apps compare keys as Swift strings)",
                    fix: "give one of the two its own \"key\", or delete one")
                continue
            }
            let propertyPointer = pointer.appending("name")
            if let first = propertyNames[Feature.nameKey(feature.property)] {
                issues.error(
                    name, propertyPointer, offset: feature.propertyOffset,
                    "the property \"\(feature.property)\" is already declared at \(first): the generated class would not compile",
                    fix: "rename one of the two properties")
                continue
            }
            configNames[Feature.nameKey(name)] = feature.namePointer
            propertyNames[Feature.nameKey(feature.property)] = propertyPointer
            configs.append(feature.config)
            if name != feature.property {
                keysWithoutGetters.insert(name)
                issues.warning(
                    name, feature.namePointer, offset: feature.nameOffset,
                    "the key \"\(name)\" is not the name of its property \"\(feature.property)\": SwiftFeatureConfigs' persist() calls perform(Selector(\"\(name)\")) for every key it is served, the class has no such getter, and the app crashes; configs.json?release= leaves it out",
                    fix:
                        "name the property \"\(name)\" (or drop \"key\"), regenerate the class and import the file again"
                )
            }
        }
        if !configs.isEmpty {
            issues.warning(
                nil, featuresPointer, offset: featuresNode.offset,
                "persist() calls perform(Selector(key)) for every key it is served: the generated class needs @objcMembers (or @objc on each of \(configs.map { "\"\($0.name)\"" }.joined(separator: ", "))), which Swift 4 and later don't add by themselves",
                fix:
                    "mark the class @objcMembers in the generator's template; serve each release what it declares (`flagpole config import --release`, `configs.json?release=`)"
            )
        }
        if issues.hasErrors { throw ConfigsRefused(issues.all) }
        return Declarations(
            collectionName: collectionName, configs: configs, warnings: issues.all,
            keysWithoutGetters: keysWithoutGetters)
    }

    /// `configCollectionName`, or `nil` with a warning: the generator's template declares
    /// `static var shared: {{configCollectionName}}` with no fallback, so without it the
    /// generated class does not compile.
    private static func decodeCollectionName(_ root: JSONNode, issues: inout IssueList) -> String? {
        let pointer = JSONPointer.root.appending("configCollectionName")
        guard let node = root.member("configCollectionName")?.node else {
            issues.warning(
                nil, pointer, offset: root.offset,
                "no \"configCollectionName\": the generator then writes a class whose `shared` property has no type",
                fix:
                    "add \"configCollectionName\": the name of the SwiftFeatureConfigs subclass, such as \"MyFeatures\""
            )
            return nil
        }
        guard case .string(let name) = node.content, !name.isEmpty, !name.utf8.contains(0) else {
            issues.error(
                nil, pointer, offset: node.offset, "\"configCollectionName\" must be a non-empty string",
                fix: "write the name of the SwiftFeatureConfigs subclass, such as \"MyFeatures\"")
            return nil
        }
        return name
    }

    /// A feature read from the file: its config, and where the names that must be unique are.
    private struct DeclaredFeature {
        var config: Config
        /// The Swift property the generator declares.
        var property: String
        var propertyOffset: Int
        /// Where the config's name comes from: `key` when present, else `name`.
        var namePointer: JSONPointer
        var nameOffset: Int
    }

    /// One feature, or `nil` after reporting everything wrong with it.
    private static func decodeFeature(
        _ node: JSONNode, at pointer: JSONPointer, issues: inout IssueList
    ) -> DeclaredFeature? {
        guard case .object(let members) = node.content else {
            issues.error(
                nil, pointer, offset: node.offset, "a feature declaration must be an object",
                fix: "write {\"type\": \"Bool\", \"name\": \"isEnabled\", \"default\": \"false\"}")
            return nil
        }
        let errorsBefore = issues.errorCount
        let nameNode = node.member("name")?.node
        let keyNode = node.member("key")?.node
        var property: String?
        if case .string(let text)? = nameNode?.content, !text.isEmpty, !text.utf8.contains(0) {
            property = text
        } else {
            issues.error(
                nil, pointer.appending("name"), offset: nameNode?.offset ?? node.offset,
                "a feature needs a \"name\": the non-empty name of the Swift property the generator declares",
                fix: "add \"name\": \"isEnabled\"")
        }
        var key: String?
        if let keyNode {
            if case .string(let text) = keyNode.content, !text.isEmpty, !text.utf8.contains(0) {
                key = text
            } else {
                issues.error(
                    property, pointer.appending("key"), offset: keyNode.offset,
                    "\"key\" must be a non-empty string: the key the app looks the value up by",
                    fix: "write the key, or leave \"key\" out to look the value up by the \"name\"")
            }
        }
        // The name apps look the value up by; for messages, the best name known so far.
        let configName = key ?? property
        for member in members where !featureKeys.contains(member.key) {
            issues.warning(
                configName, pointer.appending(member.key), offset: member.keyOffset,
                "unknown key \"\(member.key)\": the generator ignores it",
                fix: "a feature has \"type\", \"name\", \"key\", \"default\" and \"doc\"; check the spelling")
        }
        let type = decodeType(node, at: pointer, config: configName, issues: &issues)
        let defaultValue = type.flatMap {
            decodeDefault(node, as: $0.configType, at: pointer, config: configName, issues: &issues)
        }
        var description: String?
        if let docNode = node.member("doc")?.node {
            if case .string(let text) = docNode.content, !text.utf8.contains(0) {
                description = text
            } else {
                issues.error(
                    configName, pointer.appending("doc"), offset: docNode.offset, "\"doc\" must be a string",
                    fix: "write a sentence for the property's documentation comment, or leave \"doc\" out")
            }
        }
        guard let property, let nameNode, let configName, let type, let defaultValue,
            issues.errorCount == errorsBefore
        else { return nil }
        return DeclaredFeature(
            config: Config(
                name: configName, type: type.configType, defaultValue: defaultValue, description: description,
                declaration: ConfigDeclaration(type: type, defaultValue: defaultValue, doc: description)),
            property: property, propertyOffset: nameNode.offset,
            namePointer: pointer.appending(key == nil ? "name" : "key"), nameOffset: (keyNode ?? nameNode).offset)
    }

    /// A feature's `type`, or `nil` after reporting it.
    private static func decodeType(
        _ node: JSONNode, at pointer: JSONPointer, config: String?, issues: inout IssueList
    ) -> DeclaredType? {
        let typeNode = node.member("type")?.node
        if case .string(let name)? = typeNode?.content, let type = DeclaredType(rawValue: name) { return type }
        let found = typeNode?.value.summary ?? "none"
        issues.error(
            config, pointer.appending("type"), offset: typeNode?.offset ?? node.offset,
            "a feature's \"type\" must be Bool, Int, Float, Double or String, found \(found)",
            fix: "write the Swift type of the property, such as \"type\": \"Bool\"")
        return nil
    }

    /// A feature's `default`, read as a value of `type`, or `nil` after reporting it.
    private static func decodeDefault(
        _ node: JSONNode, as type: ConfigType, at pointer: JSONPointer, config: String?, issues: inout IssueList
    ) -> ConfigValue? {
        let defaultPointer = pointer.appending("default")
        guard let defaultNode = node.member("default")?.node else {
            issues.error(
                config, defaultPointer, offset: node.offset, "a feature needs a \"default\"",
                fix: "add the value the app falls back on, written as a string, such as \"default\": \"false\"")
            return nil
        }
        guard case .string(let text) = defaultNode.content else {
            let written = JSONWriter(style: .compact).string(of: defaultNode.value)
            issues.error(
                config, defaultPointer, offset: defaultNode.offset,
                "\"default\" must be written as a string: the generator pastes its text into Swift code",
                fix: "write it between quotes: \"default\": \(JSONWriter(style: .compact).string(of: .string(written)))"
            )
            return nil
        }
        do {
            // A String's default is pasted between quotes: the app's default is what that
            // literal means in Swift, not the text as written.
            return try ConfigValue(text: type == .string ? try swiftLiteral(text) : text, as: type)
        } catch {
            issues.error(config, defaultPointer, offset: defaultNode.offset, error.message, fix: error.fix)
            return nil
        }
    }

    /// What `text`, pasted between the quotes of a Swift string literal as the generator pastes
    /// a String's default, means to the app: `Hello\nWorld` holds a line feed, `\"` a quote.
    /// Text the literal can't hold (a bare `"` or line feed, an unknown escape, an interpolation)
    /// would not compile, and is refused.
    static func swiftLiteral(_ text: String) throws(ConfigValueProblem) -> String {
        let literal = "the generator pastes a String's default between the quotes of a Swift string literal"
        var result = ""
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\"":
                throw ConfigValueProblem(
                    message: "\(literal), which this quote would end: the generated class would not compile",
                    fix: "write \\\" for a quote in the app's text")
            case "\n", "\r":
                throw ConfigValueProblem(
                    message: "\(literal), which can't hold a line break: the generated class would not compile",
                    fix: "write \\n for a line feed in the app's text")
            case "\\":
                let escaped = scalars.next()
                switch escaped {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "0": result.append("\0")
                case "\\", "\"", "'": result.unicodeScalars.append(escaped!)
                case "u":
                    var digits = ""
                    guard scalars.next() == "{" else { throw escapeProblem(literal) }
                    while let digit = scalars.next(), digit != "}" { digits.unicodeScalars.append(digit) }
                    guard (1...8).contains(digits.count), let value = UInt32(digits, radix: 16),
                        let unicode = Unicode.Scalar(value)
                    else { throw escapeProblem(literal) }
                    result.unicodeScalars.append(unicode)
                default: throw escapeProblem(literal)
                }
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func escapeProblem(_ literal: String) -> ConfigValueProblem {
        ConfigValueProblem(
            message:
                "\(literal), where a backslash starts an escape Swift knows (\\n, \\t, \\r, \\0, \\\\, \\\", \\', \\u{…}): this one would not compile, or would interpolate",
            fix: "write \\\\ for a backslash in the app's text")
    }

    /// `bytes` with every comma that closes a list (one just before a `}` or `]`, outside strings,
    /// after a value) replaced by a space, and where each was.
    ///
    /// A space keeps every offset true, so the strict parser's errors and the decoder's positions
    /// still point into the file as written. A comma after `[`, `{`, `:` or another comma is left
    /// for the strict parser to refuse: `[,]` is not a list with a trailing comma.
    static func blankingTrailingCommas(in bytes: [UInt8]) -> (bytes: [UInt8], commas: [(offset: Int, closer: UInt8)]) {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        let comma = UInt8(ascii: ",")
        let closers: [UInt8] = [UInt8(ascii: "}"), UInt8(ascii: "]")]
        let notValueEnds: [UInt8] = [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), comma]
        func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
        var result = bytes
        var commas: [(offset: Int, closer: UInt8)] = []
        var isInString = false
        // The last byte outside strings that is not whitespace: whether a comma follows a value.
        var previous: UInt8?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if isInString {
                if byte == backslash {
                    index += 2
                    continue
                }
                if byte == quote { isInString = false }
            } else if byte == quote {
                isInString = true
            } else if byte == comma, let previous, !notValueEnds.contains(previous),
                let next = bytes[(index + 1)...].first(where: { !isWhitespace($0) }), closers.contains(next)
            {
                result[index] = 0x20
                commas.append((index, next))
                index += 1
                continue
            }
            if !isInString && !isWhitespace(byte) { previous = byte }
            index += 1
        }
        return (result, commas)
    }
}
