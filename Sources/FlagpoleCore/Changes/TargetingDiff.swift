/// What changed between two states of an environment's rules and segments: the audit rows of a
/// revision that changes them, beside `DocumentDiff`'s and `ConfigsDiff`'s.
///
/// A feature's rules are one field (`rules`) of the feature: their order is their meaning, so a
/// change anywhere in them shows the whole list before and after. A segment added or removed is
/// one row; a changed one, a row per field (`description`, `clauses`, `users`, the list shown by
/// its digest and count).
public enum TargetingDiff {
    public static func changes(from old: TargetingDocument, to new: TargetingDocument) -> [DocumentDiff.Change] {
        var changes: [DocumentDiff.Change] = []
        for feature in Set(old.featureRules.keys).union(new.featureRules.keys).sorted(by: codePointOrder) {
            let before = old.featureRules[feature]
            let after = new.featureRules[feature]
            guard before != after else { continue }
            changes.append(
                DocumentDiff.Change(
                    feature: feature, field: "rules", kind: before == nil ? .added : after == nil ? .removed : .changed,
                    before: before.map { .array($0.map(\.jsonValue)) }, after: after.map { .array($0.map(\.jsonValue)) }
                ))
        }
        for name in Set(old.segments.keys).union(new.segments.keys).sorted(by: codePointOrder) {
            switch (old.segments[name], new.segments[name]) {
            case (nil, let added?):
                changes.append(
                    DocumentDiff.Change(
                        feature: nil, field: nil, kind: .added, before: nil, after: added.jsonValue, segment: name))
            case (let removed?, nil):
                changes.append(
                    DocumentDiff.Change(
                        feature: nil, field: nil, kind: .removed, before: removed.jsonValue, after: nil, segment: name))
            case (let before?, let after?) where before != after:
                guard case .object(let oldObject) = before.jsonValue, case .object(let newObject) = after.jsonValue
                else { continue }
                changes += DocumentDiff.fieldChanges(from: oldObject, to: newObject, feature: nil).map {
                    var change = $0
                    change.segment = name
                    return change
                }
            default:
                continue
            }
        }
        return changes
    }

    private static func codePointOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
