import FlagpoleCore
import FlagpoleStore
import Foundation

/// A config as its editor holds it: every field as the user typed it, so a refused form comes
/// back exactly as it was sent. `config(beside:)` reads it as a typed `Config`, or says what is
/// wrong with each field, as the API's decoder does for a body.
struct ConfigDraft: Sendable {
    /// One row of the values per variation; `text` empty: no value, the default applies.
    struct Row: Sendable {
        var variation: String
        var text: String
    }

    var name: String
    var type: ConfigType
    /// The default as text (`ConfigValue.text`); for a `bool`, `"true"` or `"false"`.
    var defaultText: String
    var description: String
    /// The tags, comma-separated.
    var tags: String
    /// The feature to follow, `""` for none.
    var follows: String
    /// The feature the rows were drawn for: when `follows` names another, only the rows for
    /// variations the new feature also has are kept.
    var followed: String
    var rows: [Row]
    /// Not yet in the store: saving creates it.
    var isNew: Bool

    /// A draft of a stored config.
    init(_ config: Config) {
        name = config.name
        type = config.type
        defaultText = config.defaultValue.text
        description = config.description ?? ""
        tags = config.tags.joined(separator: ", ")
        follows = config.follows ?? ""
        followed = follows
        rows = config.values.map { Row(variation: $0.variation, text: $0.value.text) }
        isNew = false
    }

    /// A draft of a config that is not in the store yet: the type's empty value as its default.
    init(new name: String, type: ConfigType) {
        self.name = name
        self.type = type
        defaultText =
            switch type {
            case .bool: "false"
            case .int: "0"
            case .double: "0.0"
            case .string: ""
            case .json: "{}"
            }
        description = ""
        tags = ""
        follows = ""
        followed = ""
        rows = []
        isNew = true
    }

    /// The draft a form sent for the config `name`.
    init(_ form: ConfigForm, name: String, type: ConfigType) {
        self.name = name
        self.type = type
        // An unchecked switch sends nothing: false.
        defaultText = type == .bool ? (form.defaultValue == "true" ? "true" : "false") : form.defaultValue ?? ""
        description = form.description ?? ""
        tags = form.tags ?? ""
        follows = form.follows ?? ""
        followed = form.followed ?? ""
        let variations = form.variations ?? []
        let texts = form.values ?? []
        rows = variations.indices.map { Row(variation: variations[$0], text: $0 < texts.count ? texts[$0] : "") }
        isNew = form.isNew ?? false
    }

    /// The typed config, or every problem of the draft: a value not of the type, a tag that
    /// can't be one, a description the store can't keep. Whether the followed feature and its
    /// variations exist is the store's to say, as for the API and the command line.
    func config(beside features: [Feature]) throws(ConfigsRefused) -> Config {
        var issues: [ConfigIssue] = []
        func issue(_ pointer: JSONPointer, _ message: String, fix: String) {
            issues.append(
                ConfigIssue(.error, config: name, pointer: pointer, location: nil, message: message, fix: fix))
        }
        func value(_ text: String, at pointer: JSONPointer) -> ConfigValue? {
            do {
                return try ConfigValue(text: Self.normalized(text, as: type), as: type)
            } catch {
                issue(pointer, error.message, fix: error.fix)
                return nil
            }
        }
        if name.isEmpty || name.utf8.contains(0) {
            issue(
                .root.appending("name"), "a config needs a name without the character U+0000",
                fix: "give the key apps look the value up by, such as mainViewTitle")
        }
        let defaultValue = value(defaultText, at: .root.appending("default"))
        if description.utf8.contains(0) {
            issue(
                .root.appending("description"),
                "the description holds the character U+0000, which the store cannot keep",
                fix: "remove it")
        }
        var tagList: [String] = []
        for (index, tag) in Self.tags(tags).enumerated() {
            guard ConfigsDecoder.isValidTag(tag) else {
                issue(
                    .root.appending("tags").appending(index), "\"\(tag)\" is not a tag",
                    fix: "a tag is 1 to 64 characters, without control characters; separate tags with commas")
                continue
            }
            if !tagList.contains(tag) { tagList.append(tag) }
        }
        var variants: [Config.Variant] = []
        if !follows.isEmpty {
            // Rows drawn for another feature than the one now chosen: keep what the new one has too.
            let kept: Set<String>? =
                follows == followed
                ? nil
                : Set(
                    features.first { Feature.nameKey($0.name) == Feature.nameKey(follows) }?.configVariations ?? [])
            for row in rows where !row.text.isEmpty && kept.map({ $0.contains(row.variation) }) ?? true {
                guard !variants.contains(where: { $0.variation == row.variation }) else { continue }
                if let rowValue = value(row.text, at: .root.appending("values").appending(row.variation)) {
                    variants.append(Config.Variant(variation: row.variation, value: rowValue))
                }
            }
        }
        guard let defaultValue, issues.isEmpty else { throw ConfigsRefused(issues) }
        return Config(
            name: name, type: type, defaultValue: defaultValue, description: description.isEmpty ? nil : description,
            tags: tagList, follows: follows.isEmpty ? nil : follows, values: variants)
    }

    /// Tags written comma-separated, each without the spaces around it; empty ones dropped.
    static func tags(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// Text as a browser sends it, for `ConfigValue(text:as:)`: numbers without the spaces
    /// around them; a string's line breaks as `\n` (a textarea sends every line break as CRLF).
    private static func normalized(_ text: String, as type: ConfigType) -> String {
        switch type {
        case .int, .double: text.trimmingCharacters(in: .whitespaces)
        case .string: text.replacingOccurrences(of: "\r\n", with: "\n")
        case .bool, .json: text
        }
    }
}

/// The config editor's form: the typed value inputs, and the fields beside them.
struct ConfigForm: DashboardForm {
    var csrf: String
    /// The revision the page showed: saving is refused if another came first.
    var revision: Int
    var type: String
    var isNew: Bool?
    /// Absent for an unchecked switch.
    var defaultValue: String?
    var description: String?
    var tags: String?
    var follows: String?
    var followed: String?
    /// `variations[]` and `values[]`: one pair per row, in order.
    var variations: [String]?
    var values: [String]?
    /// The Force box: save even though the app's declared type would skip the value.
    var force: Bool?
    /// `preview` plans the save; `apply` (or none) saves.
    var action: String?
    /// The config a preview was made for (`ConfigPlanView.fingerprint`): saving another is refused.
    var planned: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case csrf, revision, type, description, tags, follows, followed, variations, values, force, action, planned,
            reason
        case isNew = "new"
        case defaultValue = "default"
    }
}
