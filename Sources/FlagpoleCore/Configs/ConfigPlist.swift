/// Renders configs as an XML property list: the override file SwiftFeatureConfigs reads,
/// `<SubclassName>.plist` in the app's bundle (`NSDictionary(contentsOf:)`), whose values win over
/// those the app loads from a server.
///
/// The layout is Apple's writer's, as in the library's own `FeaturesOverride.plist`: the XML
/// declaration and the plist DOCTYPE, a root `<dict>`, one tab per level, an empty dictionary or
/// array as `<dict/>` or `<array/>`. Unlike Apple's writer, keys keep the order they are given in.
public enum ConfigPlist {
    /// The property list of `entries`: a `<dict>` holding each key and its value, in order.
    ///
    /// Every value has a form, and nothing is refused:
    /// - `bool`: `<true/>` or `<false/>`; `int`: `<integer>`; `string`: `<string>`.
    /// - `double`: `<real>` holding Swift's shortest text that reads back as the same double
    ///   (`2.0`, `0.1`, `1e+300`, `-0.0`), or `nan`, `+infinity`, `-infinity` as Apple writes them.
    /// - `json`: a nested `<dict>`, its arrays as `<array>`, its numbers as `<integer>` when whole
    ///   and within ±(2^53 − 1) (`ConfigValue.intRange`), else as `<real>`.
    /// - A JSON `null` has no property-list form: a member or array element that is `null` is
    ///   left out, so such an array comes out shorter.
    ///
    /// Text is escaped for XML: `&`, `<` and `>` as entities; a carriage return as `&#xd;`, which
    /// every reader keeps (XML readers turn a raw one into a line feed); the other control
    /// characters but tab and line feed as `&#x…;` references, which Apple's reader decodes
    /// although XML 1.0 has no form for them, so a strict XML reader (Python's plistlib) refuses a
    /// file that holds one. A key given twice is written twice; readers keep the last.
    public static func render(_ entries: [(key: String, value: ConfigValue)]) -> [UInt8] {
        var output: [UInt8] = []
        output.append(contentsOf: header.utf8)
        write(.dictionary(entries.map { ($0.key, Element($0.value)) }), level: 0, into: &output)
        output.append(contentsOf: "</plist>\n".utf8)
        return output
    }

    /// What Apple's writer puts before the root object.
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    /// A property-list value: what a config value becomes before it is written.
    private indirect enum Element {
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case array([Element])
        case dictionary([(key: String, value: Element)])

        init(_ value: ConfigValue) {
            switch value {
            case .bool(let flag): self = .bool(flag)
            case .int(let number): self = .integer(number)
            case .double(let number): self = .real(number)
            case .string(let text): self = .string(text)
            case .json(let object): self = Self.dictionary(of: object)
            }
        }

        /// The element of a JSON value; `nil` for `null`, which has none.
        init?(_ value: JSONValue) {
            switch value {
            case .null: return nil
            case .bool(let flag): self = .bool(flag)
            case .number(let number):
                // JSON numbers carry no type: a whole one an app can read exactly is an integer.
                let isExactInteger =
                    number.rounded(.towardZero) == number && number >= Double(ConfigValue.intRange.lowerBound)
                    && number <= Double(ConfigValue.intRange.upperBound)
                self = isExactInteger ? .integer(Int64(number)) : .real(number)
            case .string(let text): self = .string(text)
            case .array(let elements): self = .array(elements.compactMap(Element.init))
            case .object(let object): self = Self.dictionary(of: object)
            }
        }

        private static func dictionary(of object: JSONObject) -> Element {
            .dictionary(object.members.compactMap { member in Element(member.value).map { (member.key, $0) } })
        }
    }

    private static func write(_ element: Element, level: Int, into output: inout [UInt8]) {
        output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: level))
        switch element {
        case .bool(let flag):
            output.append(contentsOf: (flag ? "<true/>\n" : "<false/>\n").utf8)
        case .integer(let number):
            output.append(contentsOf: "<integer>\(number)</integer>\n".utf8)
        case .real(let number):
            output.append(contentsOf: "<real>\(text(of: number))</real>\n".utf8)
        case .string(let text):
            output.append(contentsOf: "<string>".utf8)
            appendEscaped(text, into: &output)
            output.append(contentsOf: "</string>\n".utf8)
        case .array(let elements):
            guard !elements.isEmpty else {
                output.append(contentsOf: "<array/>\n".utf8)
                return
            }
            output.append(contentsOf: "<array>\n".utf8)
            for element in elements { write(element, level: level + 1, into: &output) }
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: level))
            output.append(contentsOf: "</array>\n".utf8)
        case .dictionary(let members):
            guard !members.isEmpty else {
                output.append(contentsOf: "<dict/>\n".utf8)
                return
            }
            output.append(contentsOf: "<dict>\n".utf8)
            for member in members {
                output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: level + 1))
                output.append(contentsOf: "<key>".utf8)
                appendEscaped(member.key, into: &output)
                output.append(contentsOf: "</key>\n".utf8)
                write(member.value, level: level + 1, into: &output)
            }
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: level))
            output.append(contentsOf: "</dict>\n".utf8)
        }
    }

    /// A double as `<real>` holds it. `description` is the shortest text that reads back as the
    /// same double, sign of zero included; the words for the others are those Apple's reader takes.
    static func text(of number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-infinity" : "+infinity" }
        return number.description
    }

    /// Appends `text` as XML character data (see `render(_:)` for what is escaped, and why).
    static func appendEscaped(_ text: String, into output: inout [UInt8]) {
        // Everything escaped is ASCII, so the bytes of other characters pass through untouched.
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\t"), UInt8(ascii: "\n"): output.append(byte)
            case ..<0x20: output.append(contentsOf: "&#x\(String(byte, radix: 16));".utf8)
            default: output.append(byte)
            }
        }
    }
}
