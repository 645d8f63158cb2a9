import FlagpoleCore

/// One input of the typed config editor, by the config's type: a switch for a `bool`, a whole
/// number field for an `int`, a decimal one for a `double`, a text field for a `string`, and a
/// textarea for `json` that `dashboard.js` parses as it is typed.
///
/// A variation's value may also be blank (no value: the default applies). A switch has no third
/// state, so a `bool` variation is a select of the default, true or false.
struct ValueInput: Sendable {
    var id: String
    var name: String
    var label: String
    var text: String
    var isBool: Bool
    var isInt: Bool
    var isDouble: Bool
    var isString: Bool
    var isJSON: Bool
    var isOn: Bool
    var isOptional: Bool
    /// A string with a line break, which a one-line field would lose.
    var isMultiline: Bool
    var choices: [Choice]
    /// A row of the values per variation: its variation goes with it as a hidden field.
    var isRow: Bool
    var variation: String
    var note: String?
    /// What is wrong with the value, beside it.
    var issue: String?
    var isInvalid: Bool

    /// The default's input.
    static func defaultValue(_ text: String, of type: ConfigType, issue: String?) -> ValueInput {
        ValueInput(
            id: "default", name: "default", label: type == .bool ? "Default: on is true" : "Default", text: text,
            type: type, isOptional: false, isRow: false, variation: "", issue: issue)
    }

    /// The input of row `index`, the value for `variation` (`text` empty: none).
    static func row(
        _ index: Int, variation: String, text: String, of type: ConfigType, note: String?, issue: String?
    ) -> ValueInput {
        var input = ValueInput(
            id: "value-\(index)", name: "values[]", label: variation, text: text, type: type, isOptional: true,
            isRow: true, variation: variation, issue: issue)
        input.note = note
        return input
    }

    private init(
        id: String, name: String, label: String, text: String, type: ConfigType, isOptional: Bool, isRow: Bool,
        variation: String, issue: String?
    ) {
        self.id = id
        self.name = name
        self.label = label
        self.text = text
        isBool = type == .bool
        isInt = type == .int
        isDouble = type == .double
        isString = type == .string
        isJSON = type == .json
        isOn = text == "true"
        self.isOptional = isOptional
        isMultiline = type == .string && text.contains(where: \.isNewline)
        choices =
            type == .bool && isOptional
            ? [
                Choice(name: "(the default)", value: "", isSelected: text.isEmpty),
                Choice(name: "true", value: "true", isSelected: text == "true"),
                Choice(name: "false", value: "false", isSelected: text == "false"),
            ] : []
        self.isRow = isRow
        self.variation = variation
        self.issue = issue
        isInvalid = issue != nil
    }
}
