/// Writes JSON the way exports must look: strict UTF-8, `/` not escaped, integral
/// numbers without a fraction, other numbers in their shortest round-trip form.
public struct JSONWriter: Sendable {
    /// The layout of the output.
    public enum Style: Sendable {
        /// Indented by `indent` spaces, arrays of scalars kept on one line, a final newline.
        case pretty(indent: Int)
        /// No whitespace at all.
        case compact

        /// Four-space indentation, the layout of hand-written features.json files.
        public static let pretty = Style.pretty(indent: 4)
    }

    /// The layout of what it writes.
    public var style: Style

    /// Creates a writer of `style`, pretty by default.
    public init(style: Style = .pretty) {
        self.style = style
    }

    /// The UTF-8 bytes of `value`.
    public func bytes(of value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, level: 0, into: &output)
        if case .pretty = style { output.append(UInt8(ascii: "\n")) }
        return output
    }

    /// The text of `value`.
    public func string(of value: JSONValue) -> String {
        String(decoding: bytes(of: value), as: UTF8.self)
    }

    /// A number as it is written: `50`, `33.3`, `1e-05`; integral values below 2^63 in plain
    /// digits, larger ones in the shortest exponent form (`1e+20`).
    public static func format(_ number: Double) -> String {
        if number.rounded(.towardZero) == number, abs(number) < 0x1p63 {
            return String(Int64(number))
        }
        return number.description
    }

    private func write(_ value: JSONValue, level: Int, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: Self.format(number).utf8)
        case .string(let text): Self.writeString(text, into: &output)
        case .array(let elements): writeArray(elements, level: level, into: &output)
        case .object(let object): writeObject(object, level: level, into: &output)
        }
    }

    private func writeArray(_ elements: [JSONValue], level: Int, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        defer { output.append(UInt8(ascii: "]")) }
        guard !elements.isEmpty else { return }
        guard case .pretty(let indent) = style, !elements.allSatisfy(\.isScalar) else {
            // Compact output, or a pretty array of scalars kept on one line: [50, 50].
            let separator: [UInt8] = if case .pretty = style { Array(", ".utf8) } else { [UInt8(ascii: ",")] }
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(contentsOf: separator) }
                write(element, level: level + 1, into: &output)
            }
            return
        }
        for (position, element) in elements.enumerated() {
            output.append(contentsOf: position == 0 ? [UInt8(ascii: "\n")] : [UInt8(ascii: ","), UInt8(ascii: "\n")])
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * (level + 1)))
            write(element, level: level + 1, into: &output)
        }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
    }

    private func writeObject(_ object: JSONObject, level: Int, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        defer { output.append(UInt8(ascii: "}")) }
        guard !object.isEmpty else { return }
        for (position, member) in object.members.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            if case .pretty(let indent) = style {
                output.append(UInt8(ascii: "\n"))
                output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * (level + 1)))
            }
            Self.writeString(member.key, into: &output)
            output.append(UInt8(ascii: ":"))
            if case .pretty = style { output.append(UInt8(ascii: " ")) }
            write(member.value, level: level + 1, into: &output)
        }
        if case .pretty(let indent) = style {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
        }
    }

    public static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole, rather than byte by byte (an export, or an
        // import's revision and audit rows, writes tens of thousands of them).
        let isCopied =
            text.utf8.withContiguousStorageIfAvailable { bytes in
                guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
                else { return false }
                output.append(contentsOf: bytes)
                return true
            } ?? false
        if isCopied {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case ..<0x20:
                let digits = Array(String(byte, radix: 16, uppercase: true).utf8)
                output.append(contentsOf: "\\u00".utf8)
                if digits.count == 1 { output.append(UInt8(ascii: "0")) }
                output.append(contentsOf: digits)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
