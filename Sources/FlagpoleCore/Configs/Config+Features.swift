extension Feature {
    /// The variations a config that follows this feature can have values for: what
    /// `Evaluation.variation` can say of it. An unlock flag is `Unlocked` or `Locked`; anything else
    /// is one of its variations, or `Enabled`/`Disabled` as a flag (or a disabled test) shows.
    public var configVariations: [String] {
        if kind == .unlockFlag { return ["Unlocked", "Locked"] }
        var names = isBucketed ? effectiveVariations : []
        for state in ["Enabled", "Disabled"] where !names.contains(state) { names.append(state) }
        return names
    }
}

extension Feature {
    /// What the feature shows every user alike (`Evaluation.variation`), `nil` for a test that
    /// splits them.
    public var sharedVariation: String? {
        if kind == .unlockFlag { return unlocked == true ? "Unlocked" : "Locked" }
        // As a release app shows it: a development flag is on only in debug builds.
        if kind == .developmentFlag { return "Disabled" }
        return isEnabled && isBucketed ? nil : variation(at: 0)
    }
}

extension ConfigsDocument {
    /// The configs dictionary of a client that names no user, beside `features` (the same
    /// revision's): flags give the value of their state, tests their default.
    public func sharedEntries(
        beside features: [Feature], tagged tag: String? = nil
    ) -> [(
        key: String, value: ConfigValue
    )] {
        let byKey = Dictionary(features.map { (Feature.nameKey($0.name), $0) }, uniquingKeysWith: { first, _ in first })
        return configs.filter { tag.map($0.tags.contains) ?? true }.map { config in
            let feature = config.follows.flatMap { byKey[Feature.nameKey($0)] }
            return (config.name, config.value(for: feature?.sharedVariation).value)
        }
    }
}

extension Config {
    /// What is wrong with the config beside `features`, the current document's: a followed
    /// feature must exist, and each value must be for one of its variations.
    public func problems(beside features: [Feature], at pointer: JSONPointer = .root) -> [ConfigIssue] {
        guard let follows else { return [] }
        let key = Feature.nameKey(follows)
        guard let feature = features.first(where: { Feature.nameKey($0.name) == key }) else {
            return [
                ConfigIssue(
                    .error, config: name, pointer: pointer.appending("follows"), location: nil,
                    message: "there is no feature \"\(follows)\" in this environment to follow",
                    fix: "name a feature of the current features.json (`flagpole feature list`), or remove \"follows\"")
            ]
        }
        let variations = feature.configVariations
        return values.filter { !variations.contains($0.variation) }.map { variant in
            ConfigIssue(
                .error, config: name, pointer: pointer.appending("values").appending(variant.variation), location: nil,
                message: "\(feature.kind.withArticle) \"\(feature.name)\" has no variation \"\(variant.variation)\"",
                fix: "use one of \(variations.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }
}

extension Config {
    /// What is wrong with the config itself, whoever built it: what `ConfigsDecoder` refuses in a
    /// file, checked again for a config made in code, so no write can store one that the
    /// store could not read back.
    public func problems(at pointer: JSONPointer = .root) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func issue(_ path: JSONPointer, _ message: String, _ fix: String) {
            issues.append(ConfigIssue(.error, config: name, pointer: path, location: nil, message: message, fix: fix))
        }
        if name.isEmpty || name.utf8.contains(0) {
            issue(pointer.appending("name"), "a config's name is a non-empty string without U+0000", "name it")
        } else if let problem = ConfigValue.controlProblem(in: name) {
            // The name is the plist's key.
            issue(pointer.appending("name"), problem.message, problem.fix)
        }
        if description?.utf8.contains(0) == true {
            issue(pointer.appending("description"), "the description holds U+0000", "remove the \\u0000")
        }
        for (index, tag) in tags.enumerated() where !ConfigsDecoder.isValidTag(tag) {
            issue(
                pointer.appending("tags").appending(index), "\"\(tag)\" is not a tag",
                "a tag is 1 to 64 characters, without commas or spaces at either end")
        }
        func check(_ value: ConfigValue, at path: JSONPointer) {
            do {
                // Through JSON, as a file would bring it: the same type, range and text rules.
                guard value.type == type else { throw ConfigValueProblem(message: "", fix: "") }
                _ = try ConfigValue(value.jsonValue, as: type)
            } catch {
                issue(
                    path, "expected \(type.withArticle), found \(value.jsonValue.summary)",
                    "write a value of the config's type")
            }
        }
        check(defaultValue, at: pointer.appending("default"))
        if follows == nil && !values.isEmpty {
            issue(
                pointer.appending("values"), "values without a feature to follow",
                "add \"follows\", or remove the values")
        }
        var variations: Set<String> = []
        for variant in values {
            check(variant.value, at: pointer.appending("values").appending(variant.variation))
            if !variations.insert(variant.variation).inserted {
                issue(
                    pointer.appending("values").appending(variant.variation), "the variation has two values", "keep one"
                )
            }
        }
        if let declaration, declaration.defaultValue.type != declaration.type.configType {
            issue(
                pointer.appending("declared").appending("default"),
                "the declared default is \(declaration.defaultValue.type.withArticle), not a \(declaration.type)",
                "write the default the declaration file gives, as a \(declaration.type)")
        }
        return issues + problemsForApps(at: pointer)
    }
}
