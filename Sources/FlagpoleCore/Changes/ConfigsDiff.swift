/// What changed between two states of an environment's configs and feature tags, field by field:
/// the audit rows of a revision that changes them, beside `DocumentDiff`'s.
public enum ConfigsDiff {
    /// Every change from `old` to `new`; configs are matched by name as apps compare names.
    public static func changes(from old: ConfigsDocument, to new: ConfigsDocument) -> [DocumentDiff.Change] {
        var changes: [DocumentDiff.Change] = []
        let oldByKey = Dictionary(
            old.configs.map { (Feature.nameKey($0.name), $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(new.configs.map { Feature.nameKey($0.name) })
        for config in new.configs {
            guard let previous = oldByKey[Feature.nameKey(config.name)] else {
                changes.append(
                    DocumentDiff.Change(
                        feature: nil, field: nil, kind: .added, before: nil, after: .object(config.jsonObject),
                        config: config.name))
                continue
            }
            guard !previous.isIdentical(to: config) else { continue }
            changes += DocumentDiff.fieldChanges(from: previous.jsonObject, to: config.jsonObject, feature: nil).map {
                var change = $0
                change.config = config.name
                return change
            }
            // A value's type can change while its JSON stays the same (`2` as an int, then a double).
            if previous.type != config.type,
                !changes.contains(where: { $0.config == config.name && $0.field == "type" })
            {
                changes.append(
                    DocumentDiff.Change(
                        feature: nil, field: "type", kind: .changed, before: .string(previous.type.rawValue),
                        after: .string(config.type.rawValue), config: config.name))
            }
        }
        for config in old.configs where !newKeys.contains(Feature.nameKey(config.name)) {
            changes.append(
                DocumentDiff.Change(
                    feature: nil, field: nil, kind: .removed, before: .object(config.jsonObject), after: nil,
                    config: config.name))
        }
        let oldOrder = old.configs.map(\.name).filter { newKeys.contains(Feature.nameKey($0)) }
        let newOrder = new.configs.map(\.name).filter { oldByKey[Feature.nameKey($0)] != nil }
        if oldOrder != newOrder {
            changes.append(
                DocumentDiff.Change(
                    feature: nil, field: "configs", kind: .changed, before: .array(oldOrder.map(JSONValue.string)),
                    after: .array(newOrder.map(JSONValue.string))))
        }
        changes += listChanges(from: old.releases, to: new.releases) { release in
            (nil, JSONPointer.root.appending("releases").appending(release).description)
        }
        changes += listChanges(from: old.featureTags, to: new.featureTags) { feature in (feature, "tags") }
        return changes
    }

    /// A change for each key whose list of names differs (a release's configs, a feature's
    /// tags), at the feature and field `place` gives it.
    private static func listChanges(
        from old: [String: [String]], to new: [String: [String]],
        at place: (String) -> (feature: String?, field: String)
    ) -> [DocumentDiff.Change] {
        Set(old.keys).union(new.keys).sorted().compactMap { key in
            let (before, after) = (old[key], new[key])
            guard before != after else { return nil }
            let (feature, field) = place(key)
            return DocumentDiff.Change(
                feature: feature, field: field, kind: before == nil ? .added : after == nil ? .removed : .changed,
                before: before.map { .array($0.map(JSONValue.string)) },
                after: after.map { .array($0.map(JSONValue.string)) })
        }
    }

    /// The nulls an earlier version stored, which the stored configs' `warnings` name
    /// (`ConfigsDecoder.decodeStored`): one removal each, for the revision that leaves them out.
    public static func removedNulls(_ warnings: [ConfigIssue]) -> [DocumentDiff.Change] {
        warnings.filter { $0.message.hasPrefix(ConfigValue.nullProblem.message) }.map {
            DocumentDiff.Change(
                feature: nil, field: $0.pointer.description, kind: .removed, before: .null, after: nil,
                config: $0.config)
        }
    }
}
