/// What importing SwiftFeatureConfigs' declaration file does to an environment's configs: a
/// merge, shown as a plan before it is applied.
///
/// Teams regenerate `featureConfigs.json` routinely, so importing it again must not undo what the
/// team set. New declarations are added. A config the file no longer declares stays served,
/// marked withdrawn: leaving `configs.json` would silently move installed apps to a persisted or
/// compiled value. A default the team edited (it differs from the declared default on record) is
/// kept; one nobody edited follows a changed declaration; so does a description nobody edited.
/// Tags, values per variation, rules and the other configs are kept. A changed type is a type
/// change, which the store refuses unless forced (`Config.declarationProblems`): installed apps
/// still read the old type.
public struct DeclarationsMerge: Hashable, Sendable {
    /// One config the import changes, and how.
    public struct Step: Hashable, Sendable {
        public enum Kind: String, Hashable, Sendable {
            /// Declared for the first time: added with the declared default.
            case added
            /// Already a config: its declaration changed, or is on record for the first time.
            case updated
            /// Declared with another type: installed apps read the old one, so it needs force.
            case retyped
            /// No longer declared: still served, marked.
            case withdrawn
        }

        public var config: String
        public var kind: Kind
        /// What happens to the config, one phrase each, as the plan prints them.
        public var details: [String]
    }

    /// The configs once merged, in order: the current ones in place, new ones at the end.
    public var document: ConfigsDocument
    /// Every config the import changes, in the document's order.
    public var steps: [Step]
    /// How many declared configs stay exactly as they are.
    public var unchanged: Int
    /// The release the file is recorded as: what it is served, and what it is not.
    public struct Release: Hashable, Sendable {
        public var name: String
        public var served: [String]
        /// Declared, but with a key that is no getter's name (`keysWithoutGetters`).
        public var leftOut: [String]
    }

    /// The release the file is recorded as, when it is one's.
    public var release: Release?

    /// Merges `declared` (`ConfigDeclarations.Declarations.configs`, each with its declaration)
    /// into `current`; with a `release`, records the configs that release declares, but those in
    /// `leavingOut` (`ConfigDeclarations.Declarations.keysWithoutGetters`), as what it is served.
    public init(
        _ declared: [Config], into current: ConfigsDocument, release: String? = nil, leavingOut: Set<String> = []
    ) {
        var document = current
        var steps: [Step] = []
        var unchanged = 0
        let declaredKeys = Set(declared.map { Feature.nameKey($0.name) })
        for config in declared {
            guard let index = document.index(of: config.name) else {
                document.configs.append(config)
                steps.append(
                    Step(
                        config: config.name, kind: .added,
                        details: [
                            "\(config.declaration?.type.rawValue ?? config.type.rawValue), default \(config.defaultValue.shown)"
                        ]))
                continue
            }
            let (merged, step) = Self.merge(config, into: document.configs[index])
            document.configs[index] = merged
            if let step { steps.append(step) } else { unchanged += 1 }
        }
        for index in document.configs.indices {
            let config = document.configs[index]
            guard var declaration = config.declaration, !declaration.isWithdrawn,
                !declaredKeys.contains(Feature.nameKey(config.name))
            else { continue }
            declaration.isWithdrawn = true
            document.configs[index].declaration = declaration
            steps.append(
                Step(
                    config: config.name, kind: .withdrawn,
                    details: [
                        "no longer declared: still served, so installed apps keep reading it; delete it (`flagpole config delete`) once no installed app does"
                    ]))
        }
        let order = Dictionary(
            document.configs.enumerated().map { (Feature.nameKey($1.name), $0) },
            uniquingKeysWith: { first, _ in first })
        if let release {
            let names = declared.map(\.name)
            let served = names.filter { !leavingOut.contains($0) }
            document.releases[release] = served
            self.release = Release(name: release, served: served, leftOut: names.filter(leavingOut.contains))
        }
        self.document = document
        self.steps = steps.sorted { order[Feature.nameKey($0.config)] ?? 0 < order[Feature.nameKey($1.config)] ?? 0 }
        self.unchanged = unchanged
    }

    /// `current` with the declaration of `declared` merged in, and the step, `nil` when nothing changes.
    private static func merge(_ declared: Config, into current: Config) -> (Config, Step?) {
        guard let new = declared.declaration else { return (current, nil) }
        var config = current
        var details: [String] = []
        let old = current.declaration
        if old?.isWithdrawn == true { details.append("declared again") }
        if old?.type != new.type, let old {
            details.append("declared \(old.type) → \(new.type)")
        }
        // Installed apps read the declared type on record: a config a team forced to another type
        // keeps it until the app declares another.
        let isDeclaredTypeChanged = old.map { $0.type.configType != new.type.configType } ?? true
        if current.type != new.type.configType, !isDeclaredTypeChanged {
            details.append("keeps the type \(current.type) the team forced (declared \(new.type))")
        } else if current.type != new.type.configType {
            config.type = new.type.configType
            config.defaultValue = new.defaultValue
            details.append(
                "type \(current.type) → \(config.type), default \(current.defaultValue.shown) → \(new.defaultValue.shown): installed apps still read \(current.type.withArticle), so this needs force"
            )
            if !config.values.isEmpty {
                details.append(
                    "its \(config.values.count) value(s) per variation of \(config.follows ?? "") are dropped")
                config.values = []
            }
            let valueRules = config.rules.filter { if case .value = $0.serve { true } else { false } }
            if !valueRules.isEmpty {
                details.append("its rule(s) \(valueRules.map { "\"\($0.id)\"" }.joined(separator: ", ")) are dropped")
                config.rules.removeAll { rule in valueRules.contains { $0.id == rule.id } }
            }
        } else if current.defaultValue == (old?.defaultValue ?? new.defaultValue) {
            if current.defaultValue != new.defaultValue {
                config.defaultValue = new.defaultValue
                details.append(
                    "default \(current.defaultValue.shown) → \(new.defaultValue.shown), as declared (nobody edited it)")
            }
        } else if let old, old.defaultValue != new.defaultValue {
            details.append(
                "keeps the team's default \(current.defaultValue.shown) (declared \(old.defaultValue.shown) → \(new.defaultValue.shown))"
            )
        } else if old == nil {
            details.append(
                "keeps its default \(current.defaultValue.shown), which differs from the declared \(new.defaultValue.shown): no earlier declaration is on record to tell whether the team set it"
            )
        }
        // A description nobody edited follows the declaration's doc.
        let isDescriptionEdited = old.map { current.description != $0.doc } ?? (current.description != nil)
        if !isDescriptionEdited, current.description != new.doc {
            config.description = new.doc
            details.append(new.doc == nil ? "description removed, as the doc is" : "description follows the doc")
        }
        config.declaration = new
        guard !config.isIdentical(to: current) else { return (current, nil) }
        if details.isEmpty {
            details.append(
                old == nil
                    ? "declaration on record"
                    : isDescriptionEdited && old?.doc != new.doc
                        ? "declaration updated; the team's description is kept" : "declaration updated")
        }
        let kind: Step.Kind = current.type != config.type ? .retyped : .updated
        return (config, Step(config: config.name, kind: kind, details: details))
    }

    /// `+ name: detail; detail` lines, then how many stay as they are, as the command line prints them.
    public var lines: [String] {
        let marks: [Step.Kind: String] = [.added: "+", .updated: "~", .retyped: "!", .withdrawn: "-"]
        return steps.map { "  \(marks[$0.kind] ?? " ") \($0.config): \($0.details.joined(separator: "; "))" }
            + (unchanged > 0 ? ["  \(unchanged) declared config(s) unchanged"] : [])
            + (release.map { release in
                [
                    "  release \(release.name): configs.json?release=\(release.name) serves \(release.served.count) config(s)"
                        + (release.leftOut.isEmpty
                            ? "" : ", leaving out \(release.leftOut.joined(separator: ", ")) (a key that is no getter)")
                ]
            } ?? [])
    }
}

extension DeclarationsMerge {
    /// `{"steps": [{"config", "kind", "details"}], "unchanged"}`.
    public var jsonValue: JSONValue {
        [
            "steps": .array(
                steps.map {
                    [
                        "config": .string($0.config), "kind": .string($0.kind.rawValue),
                        "details": .array($0.details.map(JSONValue.string)),
                    ]
                }),
            "unchanged": .number(Double(unchanged)),
            "release": release.map {
                [
                    "name": .string($0.name), "served": .array($0.served.map(JSONValue.string)),
                    "leftOut": .array($0.leftOut.map(JSONValue.string)),
                ]
            } ?? .null,
        ]
    }
}

extension ConfigValue {
    /// The value as a plan shows it: a string quoted, anything else as a command line writes it.
    public var shown: String {
        if case .string(let text) = self { return JSONWriter(style: .compact).string(of: .string(text)) }
        return text
    }
}
