/// What a stock app can take of a config: values without what crashes it or what it skips.
extension Config {
    /// Every value the config serves, with where it is in the config: the default, the value of
    /// each variation, and the value each rule serves.
    public var servedValues: [(pointer: JSONPointer, value: ConfigValue)] {
        var served: [(pointer: JSONPointer, value: ConfigValue)] = [(.root.appending("default"), defaultValue)]
        served += values.map { (.root.appending("values").appending($0.variation), $0.value) }
        for (index, rule) in rules.enumerated() {
            if case .value(let value) = rule.serve {
                served.append((.root.appending("rules").appending(index).appending("serve").appending("value"), value))
            }
        }
        return served
    }

    /// What no app can take in the values served (see `ConfigValue.problemsForApps`), at `pointer`.
    public func problemsForApps(at pointer: JSONPointer = .root) -> [ConfigIssue] {
        servedValues.flatMap { served in
            served.value.problemsForApps.map { inner, problem in
                ConfigIssue(
                    .error, config: name, pointer: pointer.appending(served.pointer).appending(inner), location: nil,
                    message: problem.message, fix: problem.fix)
            }
        }
    }

    /// The config with every JSON `null` left out of its values, as apps must get it.
    public func withoutNulls() -> Config {
        var config = self
        config.defaultValue = defaultValue.withoutNulls()
        config.values = values.map { Config.Variant(variation: $0.variation, value: $0.value.withoutNulls()) }
        for index in config.rules.indices {
            if case .value(let value) = config.rules[index].serve {
                config.rules[index].serve = .value(value.withoutNulls())
            }
        }
        return config
    }

    /// Why the app that declares the config would ignore what this write stores, at `pointer`:
    /// a change of type away from what installed apps read (`current` is the stored config), or
    /// a value its declared type doesn't hold as the app casts it. A forced write stores it
    /// anyway; a write back to the declared type needs no force.
    public func declarationProblems(replacing current: Config?, at pointer: JSONPointer = .root) -> [ConfigIssue] {
        let force = "force the write (--force, \"force\": true in the API, or the editor's Force box)"
        // What installed apps read it as: the declared type on record, or, when this write brings
        // the first declaration, the type the config had.
        if let current, current.type != type,
            let installed = current.declaration?.type.configType ?? (declaration != nil ? current.type : nil),
            type != installed
        {
            let reading = current.declaration.map { "with `as? \($0.type)`" } ?? "as \(installed.withArticle)"
            return [
                ConfigIssue(
                    .error, config: name, pointer: pointer.appending("type"), location: nil,
                    message:
                        "\"\(name)\" changes type from \(current.type) to \(type), but the app declares it (featureConfigs.json) and installed apps read it \(reading): they skip \(type.withArticle) without a word and show their compiled default",
                    fix:
                        "keep it \(installed.withArticle); once a release of the app declares the new type, import its declaration file with --force, or \(force)"
                )
            ]
        }
        guard let declaration else { return [] }
        let fix =
            declaration.type == .float && type == .double
            ? "use a number a Float holds exactly (0.5, 12.25), declare Double in the app, or \(force)"
            : "write \(declaration.type.configType.withArticle), or \(force)"
        return servedValues.compactMap { served in
            // The declared default is the one the app compiled in: skipped or not, users get it
            // (a Float's 12.4, which `as? Float` skips).
            guard served.value != declaration.defaultValue else { return nil }
            return declaration.type.problem(with: served.value).map {
                ConfigIssue(
                    .error, config: name, pointer: pointer.appending(served.pointer), location: nil, message: $0,
                    fix: fix)
            }
        }
    }
}

extension ConfigValue {
    /// The value with every JSON `null` member and element left out (`ConfigPlist` leaves them
    /// out the same way).
    public func withoutNulls() -> ConfigValue {
        guard case .json(let object) = self else { return self }
        return .json(Self.withoutNulls(object))
    }

    private static func withoutNulls(_ object: JSONObject) -> JSONObject {
        JSONObject(
            object.members.compactMap { member in withoutNulls(member.value).map { .init(key: member.key, value: $0) } }
        )
    }

    private static func withoutNulls(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .null: nil
        case .array(let elements): .array(elements.compactMap(withoutNulls))
        case .object(let object): .object(withoutNulls(object))
        default: value
        }
    }
}
