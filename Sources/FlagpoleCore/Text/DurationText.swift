/// A length of time written as text, as `flagpole ramp --hold` and the API take it: whole
/// numbers with a unit each, largest first (`24h`, `90m`, `1d12h`, `45s`).
public enum DurationText {
    /// Examples of the accepted forms, for error messages.
    public static let examples = "24h, 30m, 1d12h or 45s"

    private static let units: [(suffix: Character, seconds: Int)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    /// The number of seconds `text` names, or `nil` when it is not a duration in that form (or
    /// overflows).
    public static func seconds(from text: String) -> Int? {
        var total = 0
        var digits = ""
        var lastUnit = -1
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            // Each unit once, largest first: "1h1d" is more likely a typo than a sum.
            guard let unit = units.firstIndex(where: { $0.suffix == character }), unit > lastUnit,
                let count = Int(digits), digits.count <= 9
            else { return nil }
            total += count * units[unit].seconds
            digits = ""
            lastUnit = unit
        }
        return digits.isEmpty && lastUnit >= 0 ? total : nil
    }

    /// `seconds` in the largest units that write it exactly: `1d12h`, `90s`.
    public static func text(seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds
        var text = ""
        for unit in units where rest >= unit.seconds {
            text += "\(rest / unit.seconds)\(unit.suffix)"
            rest %= unit.seconds
        }
        return text
    }
}
