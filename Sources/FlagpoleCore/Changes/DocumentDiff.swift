/// What changed between two documents, field by field: the audit trail of a revision.
public struct DocumentDiff: Hashable, Sendable {
    /// One changed value.
    public struct Change: Hashable, Sendable {
        /// Whether the value appeared, disappeared or changed.
        public enum Kind: String, Hashable, Sendable {
            case added, removed, changed
        }

        /// The feature concerned; `nil` for the document's own keys, the features' order
        /// (field `features`) and the order of the top-level keys (no field).
        public var feature: String?
        /// The key that changed; `nil` when the whole feature was added or removed, or for the
        /// order of the top-level keys.
        public var field: String?
        /// What happened to the value.
        public var kind: Kind
        /// The value in the old document; `nil` when it was absent.
        public var before: JSONValue?
        /// The value in the new document; `nil` when it is absent.
        public var after: JSONValue?
        /// The config concerned, for a change of an environment's configs (`ConfigsDiff`).
        public var config: String? = nil
        /// The segment concerned, for a change of an environment's segments (`TargetingDiff`).
        public var segment: String? = nil

        public init(
            feature: String?, field: String?, kind: Kind, before: JSONValue?, after: JSONValue?,
            config: String? = nil, segment: String? = nil
        ) {
            self.feature = feature
            self.field = field
            self.kind = kind
            self.before = before
            self.after = after
            self.config = config
            self.segment = segment
        }
    }

    /// Every change found.
    public private(set) var changes: [Change] = []

    /// Compares `old` with `new`, features matched by name.
    public init(from old: FeaturesDocument, to new: FeaturesDocument) {
        let oldByName = Dictionary(old.features.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newNames = Set(new.features.map(\.name))
        for feature in new.features {
            guard let previous = oldByName[feature.name] else {
                changes.append(
                    Change(
                        feature: feature.name, field: nil, kind: .added, before: nil, after: .object(feature.jsonObject)
                    ))
                continue
            }
            if !previous.isIdentical(to: feature) {
                changes += Self.fieldChanges(from: previous.jsonObject, to: feature.jsonObject, feature: feature.name)
            }
        }
        for feature in old.features where !newNames.contains(feature.name) {
            changes.append(
                Change(
                    feature: feature.name, field: nil, kind: .removed, before: .object(feature.jsonObject), after: nil))
        }
        let oldOrder = old.features.map(\.name).filter(newNames.contains)
        let newOrder = new.features.map(\.name).filter { oldByName[$0] != nil }
        if oldOrder != newOrder {
            changes.append(
                Change(
                    feature: nil, field: "features", kind: .changed,
                    before: .array(oldOrder.map(JSONValue.string)), after: .array(newOrder.map(JSONValue.string))))
        }
        changes += Self.fieldChanges(from: old.extras, to: new.extras, feature: nil)
        let oldKeySet = Set(old.topLevelKeys)
        let newKeySet = Set(new.topLevelKeys)
        let oldKeys = old.topLevelKeys.filter(newKeySet.contains)
        let newKeys = new.topLevelKeys.filter(oldKeySet.contains)
        if oldKeys != newKeys {
            changes.append(
                Change(
                    feature: nil, field: nil, kind: .changed,
                    before: .array(oldKeys.map(JSONValue.string)), after: .array(newKeys.map(JSONValue.string))))
        }
    }

    /// The names of features added, in the new document's order.
    public var addedFeatures: [String] { names(of: .added) }
    /// The names of features removed, in the old document's order.
    public var removedFeatures: [String] { names(of: .removed) }
    /// The names of features with at least one changed field, without repeats.
    public var changedFeatures: [String] {
        var seen: Set<String> = []
        return changes.compactMap { change in
            guard change.field != nil, let name = change.feature, seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// Adds changes found elsewhere, such as those of the configs kept beside the document.
    public mutating func append(contentsOf more: [Change]) {
        changes += more
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { changes.isEmpty }

    private func names(of kind: Change.Kind) -> [String] {
        changes.filter { $0.field == nil && $0.kind == kind }.compactMap(\.feature)
    }

    static func fieldChanges(from old: JSONObject, to new: JSONObject, feature: String?) -> [Change] {
        // Indexed once: an object may hold tens of thousands of keys, and `JSONObject`'s
        // subscript reads them in order.
        let oldMembers = Dictionary(old.members.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(new.keys)
        var result: [Change] = []
        for member in new.members {
            let previous = oldMembers[member.key]
            // A value or a key respelled in other bytes (NFC, NFD) changes the file, though not the app's reading.
            if let previous, previous.key.utf8.elementsEqual(member.key.utf8),
                previous.value.isIdentical(to: member.value)
            {
                continue
            }
            result.append(
                Change(
                    feature: feature, field: member.key, kind: previous == nil ? .added : .changed,
                    before: previous?.value, after: member.value))
        }
        for member in old.members where !newKeys.contains(member.key) {
            result.append(Change(feature: feature, field: member.key, kind: .removed, before: member.value, after: nil))
        }
        return result
    }
}
