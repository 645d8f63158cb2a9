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
