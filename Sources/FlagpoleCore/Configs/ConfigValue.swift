/// The type of a config, as apps declare it: SwiftFeatureConfigs' `Bool`, `Int`, `Double` (and
/// `Float`), `String`, and a JSON object for OpenFeature's object flags.
public enum ConfigType: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case bool
    case int
    case double
    case string
    case json

    public var description: String { rawValue }

    /// The phrase error messages use: "a boolean", "an integer".
    public var withArticle: String {
        switch self {
        case .bool: "a boolean (true or false)"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .json: "a JSON object"
        }
    }
}

/// A config's value, always of the config's type.
///
/// The type decides how the value is written everywhere it leaves the store: an `int` as a JSON
/// integer, a `double` always with a decimal point or an exponent (`2.0`: a JSON `2` reads as an
/// integer, and an app's `as? Double` or an OpenFeature float flag may refuse it).
public enum ConfigValue: Hashable, Sendable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case json(JSONObject)

    /// The integers every client reads exactly: a JSON number is a double in JavaScript and in
    /// many JSON decoders, so an `int` stays within ±(2^53 − 1).
    public static let intRange: ClosedRange<Int64> = -9_007_199_254_740_991...9_007_199_254_740_991

    public var type: ConfigType {
        switch self {
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .json: .json
        }
    }

    /// The value as JSON. An `int` is an integral number (exactly representable: see `intRange`);
    /// a `double` loses its decimal point here, so write it with `writeJSON(into:)`.
    public var jsonValue: JSONValue {
        switch self {
        case .bool(let value): .bool(value)
        case .int(let value): .number(Double(value))
        case .double(let value): .number(value)
        case .string(let value): .string(value)
        case .json(let object): .object(object)
        }
    }

    /// Reads a JSON value as a value of `type`, or says what is wrong with it.
    public init(_ value: JSONValue, as type: ConfigType) throws(ConfigValueProblem) {
        switch (type, value) {
        case (.bool, .bool(let flag)): self = .bool(flag)
        case (.int, .number(let number)):
            guard number.rounded(.towardZero) == number else {
                throw ConfigValueProblem(
                    message: "expected an integer, found \(value.summary)",
                    fix: "write a whole number, or make the config a double")
            }
            guard number >= Double(Self.intRange.lowerBound), number <= Double(Self.intRange.upperBound) else {
                throw ConfigValueProblem(
                    message: "\(value.summary) is outside the integers every client reads exactly (±(2^53 − 1))",
                    fix: "use a smaller number, or a string if it is an identifier")
            }
            self = .int(Int64(number))
        case (.double, .number(let number)): self = .double(number)
        case (.string, .string(let text)):
            guard !text.utf8.contains(0) else {
                throw ConfigValueProblem(
                    message: "the string holds the character U+0000, which the store cannot keep",
                    fix: "remove the \\u0000 from the string")
            }
            self = .string(text)
        case (.json, .object(let object)): self = .json(object)
        default:
            throw ConfigValueProblem(
                message: "expected \(type.withArticle), found \(value.summary)",
                fix: Self.fix(for: value, as: type))
        }
    }

    /// Reads a value written as text on a command line or in SwiftFeatureConfigs' declaration
    /// file: `true`, `15`, `12.4`, any text for a string, a JSON object for `json`.
    public init(text: String, as type: ConfigType) throws(ConfigValueProblem) {
        switch type {
        case .bool:
            switch text {
            case "true": self = .bool(true)
            case "false": self = .bool(false)
            default:
                throw ConfigValueProblem(
                    message: "expected true or false, found \"\(text)\"", fix: "write true or false, in lowercase")
            }
        case .int:
            guard let number = Int64(text), Self.intRange.contains(number) else {
                throw ConfigValueProblem(
                    message: "expected an integer between -9007199254740991 and 9007199254740991, found \"\(text)\"",
                    fix: "write a whole number in decimal digits, such as 15")
            }
            self = .int(number)
        case .double:
            guard let number = Double(text), number.isFinite, !text.contains(where: \.isWhitespace) else {
                throw ConfigValueProblem(
                    message: "expected a number, found \"\(text)\"", fix: "write a number such as 12.4 or 1e-3")
            }
            guard !JSONParser.underflows(Array(text.utf8), to: number) else { throw Self.underflowProblem(text) }
            self = .double(number)
        case .string:
            try self.init(.string(text), as: .string)
        case .json:
            let bytes = Array(text.utf8)
            let parsed: JSONNode
            do {
                parsed = try JSONParser.parse(bytes)
            } catch {
                throw ConfigValueProblem(message: "the JSON value does not parse: \(error.message)", fix: error.fix)
            }
            if let first = Self.numberProblems(in: parsed, as: .json, source: bytes).first { throw first.problem }
            try self.init(parsed.value, as: .json)
        }
        if let first = problemsForApps.first { throw first.problem }
    }

    /// What a stock app cannot take in this value, each with where it is inside the value
    /// (`.root`: the value itself). A value of the right type can still hurt an app:
    /// - a JSON `null` in a `json` value: SwiftFeatureConfigs' `persist()` hands the whole
    ///   dictionary to `UserDefaults`, which refuses `NSNull`, an exception that ends the app on
    ///   iOS (a fatal error on Linux); a property list has no form for it either;
    /// - a C0 control character other than tab, line feed and carriage return in a string (or a
    ///   key of a `json` value): XML 1.0 has no form for it, so the override plist that holds it is
    ///   refused whole by strict readers (Python's `plistlib`).
    /// - a `json` value nested deeper than `maximumJSONDepth`: `persist()` copies every level
    ///   into `UserDefaults` (55 s at 300 levels on Linux), and every reader recurses through it.
    public var problemsForApps: [(pointer: JSONPointer, problem: ConfigValueProblem)] {
        switch self {
        case .bool, .int, .double: []
        case .string(let text): Self.controlProblem(in: text).map { [(.root, $0)] } ?? []
        case .json(let object):
            Self.problemsForApps(in: .object(object), at: .root)
                + (Self.depth(of: .object(object)) > Self.maximumJSONDepth ? [(.root, Self.depthProblem)] : [])
        }
    }

    /// The deepest nesting of objects and arrays a `json` value may have: a config is settings,
    /// not a data set, and a few levels is what one needs (the parser's own bound, 512, is
    /// there to protect its stack, not apps).
    public static let maximumJSONDepth = 32

    /// Why a value nested deeper than `maximumJSONDepth` is refused.
    public static let depthProblem = ConfigValueProblem(
        message:
            "the value is nested deeper than \(maximumJSONDepth) levels of objects and arrays, more than an app should persist: SwiftFeatureConfigs' persist() copies every level into UserDefaults",
        fix: "flatten it to \(maximumJSONDepth) levels or fewer")

    /// How many objects and arrays deep `value` is: 0 for a scalar, 1 for `{}`.
    static func depth(of value: JSONValue) -> Int {
        switch value {
        case .null, .bool, .number, .string: 0
        case .array(let elements): 1 + (elements.lazy.map(depth).max() ?? 0)
        case .object(let object): 1 + (object.members.lazy.map { depth(of: $0.value) }.max() ?? 0)
        }
    }

    private static func problemsForApps(
        in value: JSONValue, at pointer: JSONPointer
    ) -> [(pointer: JSONPointer, problem: ConfigValueProblem)] {
        switch value {
        case .null:
            return [(pointer, nullProblem)]
        case .bool, .number:
            return []
        case .string(let text):
            return controlProblem(in: text).map { [(pointer, $0)] } ?? []
        case .array(let elements):
            return elements.enumerated().flatMap { problemsForApps(in: $1, at: pointer.appending($0)) }
        case .object(let object):
            return object.members.flatMap { member in
                (controlProblem(in: member.key).map { [(pointer.appending(member.key), $0)] } ?? [])
                    + problemsForApps(in: member.value, at: pointer.appending(member.key))
            }
        }
    }

    /// What the text of a value of `type` says that reading it lost, each with where it is in
    /// the value and in `source` (which `node` was parsed from): a number other than zero that
    /// reads as zero (`1e-400`), and in a `json` value an integer beyond ±(2^53 − 1), which reads
    /// as a neighbour (`9007199254740993` as `…992`) or another form (`99999999999999999999` as
    /// `1e+20`). Flagpole never changes a number silently: each is refused with its reason.
    public static func numberProblems(
        in node: JSONNode, as type: ConfigType, source: [UInt8]
    ) -> [(pointer: JSONPointer, offset: Int, problem: ConfigValueProblem)] {
        JSONParser.numbers(in: node, at: .root, source: source).compactMap { number in
            if JSONParser.underflows(number.written.utf8, to: number.value) {
                return (number.pointer, number.offset, underflowProblem(number.written))
            }
            let isInteger = !number.written.contains { ".eE".contains($0) }
            if type == .json, isInteger, abs(number.value) > Double(intRange.upperBound) {
                return (
                    number.pointer, number.offset,
                    ConfigValueProblem(
                        message:
                            "\(number.written) is beyond the integers every client reads exactly (±(2^53 − 1)): it would be stored and served as \(JSONWriter(style: .compact).string(of: .number(number.value)))",
                        fix:
                            "write it as a string if it is an identifier, or with an exponent (1e20) if it is a quantity"
                    )
                )
            }
            return nil
        }
    }

    /// Why a number written as something other than zero that reads as zero (`1e-400`) is refused.
    static func underflowProblem(_ number: String) -> ConfigValueProblem {
        ConfigValueProblem(
            message: "\(number) is too small for a double: it would be stored and served as 0",
            fix: "write 0, or a number of magnitude 5e-324 or more")
    }

    /// Why a JSON `null` is refused.
    public static let nullProblem = ConfigValueProblem(
        message:
            "a JSON null, which crashes apps that persist their configs: SwiftFeatureConfigs' persist() hands the dictionary to UserDefaults, which refuses NSNull",
        fix: "leave the member out, or give it a value")

    /// Whether `text` holds a character XML 1.0 cannot carry: a C0 control other than tab, line
    /// feed and carriage return, or the noncharacters U+FFFE and U+FFFF.
    static func controlProblem(in text: String) -> ConfigValueProblem? {
        // U+0000 is refused on its own: the store cannot keep it.
        guard
            let scalar = text.unicodeScalars.first(where: {
                ($0.value > 0 && $0.value < 0x20 && !allowedControls.contains($0)) || $0.value == 0xFFFE
                    || $0.value == 0xFFFF
            })
        else { return nil }
        return ConfigValueProblem(
            message:
                "the text holds the character U+\(hex4(scalar.value)), which the override plist cannot carry: strict XML readers refuse the whole file",
            fix: "remove it; tab, line feed and carriage return are the only control characters a config can hold")
    }

    /// `7` as `0007`, as Unicode writes code points.
    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static let allowedControls: Set<Unicode.Scalar> = ["\t", "\n", "\r"]

    /// The value as a command line writes it: the inverse of `init(text:as:)`.
    public var text: String {
        switch self {
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .double(let value): Self.format(value)
        case .string(let value): value
        case .json(let object): JSONWriter(style: .compact).string(of: .object(object))
        }
    }

    /// Appends the value's JSON to `output`, a `double` always with a decimal point or exponent.
    public func writeJSON(into output: inout [UInt8], style: JSONWriter.Style = .compact) {
        switch self {
        case .double(let value): output.append(contentsOf: Self.format(value).utf8)
        case .json(let object):
            var bytes = JSONWriter(style: style).bytes(of: .object(object))
            if case .pretty = style { bytes.removeLast() }
            output.append(contentsOf: bytes)
        default: output.append(contentsOf: JSONWriter(style: .compact).bytes(of: jsonValue))
        }
    }

    /// A double as JSON writes it, never without a decimal point or exponent: `2.0`, `12.4`, `1e+20`.
    public static func format(_ value: Double) -> String {
        let text = JSONWriter.format(value)
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
    }

    private static func fix(for value: JSONValue, as type: ConfigType) -> String {
        switch (type, value) {
        case (.int, .string(let text)) where Int64(text) != nil:
            "write the number without quotes: \(text); apps skip a quoted number for an Int without a word"
        case (.double, .string(let text)) where Double(text) != nil:
            "write the number without quotes: \(text)"
        case (.bool, .string(let text)) where text == "true" || text == "false":
            "write \(text) without quotes"
        default:
            "write \(type.withArticle), or change the config's type"
        }
    }
}

/// Why a value is not one of a config's type.
public struct ConfigValueProblem: Error, Hashable, Sendable {
    public var message: String
    public var fix: String
}
