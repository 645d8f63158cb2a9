import FlagpoleCore
import FlagpoleStore

/// What saving a config would change, field by field in words, and what its clients get: the
/// plan a config's Save shows first, as biases and rules have theirs.
struct ConfigPlanView: Sendable {
    var summary: String
    var lines: [String]
    var hasLines: Bool
    /// The config the plan was made for; Save sends it back (`ConfigForm.planned`).
    var fingerprint: String
    var nextRevision: Int
    var canSave: Bool

    init(_ config: Config, replacing existing: Config?, outcome: ConfigsOutcome) {
        nextRevision = outcome.revision
        canSave = !outcome.isUnchanged
        fingerprint = Self.fingerprint(of: config)
        let before = existing?.jsonObject
        let after = config.jsonObject
        var keys = before?.keys ?? []
        for key in after.keys where !keys.contains(key) { keys.append(key) }
        lines = keys.compactMap { key in
            let old = before?[key]
            let new = after[key]
            guard old != new else { return nil }
            switch (old, new) {
            case (nil, let value?): return "\(key): set to \(Self.shown(value))"
            case (let value?, nil): return "\(key): removed (was \(Self.shown(value)))"
            case (let old?, let new?): return "\(key): \(Self.shown(old)) → \(Self.shown(new))"
            case (nil, nil): return nil
            }
        }
        hasLines = !lines.isEmpty
        summary =
            outcome.isUnchanged
            ? "Nothing to change: revision \(outcome.revision) already has this config."
            : existing == nil
                ? "Saving creates \(config.name) as revision \(outcome.revision): clients that ask for configs get it at their next fetch."
                : "Saving makes revision \(outcome.revision): every client that asks for \(config.name) gets the change at its next fetch (SwiftFeatureConfigs apps keep a persisted copy until then)."
    }

    /// The config as compact JSON: what a plan was made for.
    static func fingerprint(of config: Config) -> String {
        JSONWriter(style: .compact).string(of: .object(config.jsonObject))
    }

    private static func shown(_ value: JSONValue) -> String {
        let text = JSONWriter(style: .compact).string(of: value)
        return text.count > 120 ? String(text.prefix(119)) + "…" : text
    }
}
