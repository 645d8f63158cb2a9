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
