/// A strict RFC 8259 parser that keeps the byte offset of every value.
///
/// Strict where the client is strict, and stricter where clients disagree: comments,
/// trailing commas, `NaN`, `Infinity`, invalid UTF-8, unpaired surrogates, numbers
/// a double cannot hold and duplicate keys are all refused, each with its position.
/// None of the allowed dependencies parses JSON with positions, hence this type.
public enum JSONParser {
    /// The deepest nesting accepted; deeper input is refused rather than risking the stack.
    public static let maximumDepth = 512

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// How much deeper than `maximumDepth` what the store wrote may be: a value checked alone
    /// is kept a few levels down (a config's rule's value is six), and must read back.
    public static let storedDepthAllowance = 16

    /// Parses a whole document; a UTF-8 byte-order mark is skipped, as the client does. Nesting
    /// deeper than `maximumDepth` is refused.
    ///
    /// - throws: `JSONSyntaxError` at the first character that is not strict JSON.
    public static func parse(
        _ bytes: [UInt8], maximumDepth: Int = maximumDepth
    ) throws(JSONSyntaxError) -> JSONNode {
        let result: Result<JSONNode, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer, maximumDepth: maximumDepth)
            do throws(JSONSyntaxError) {
                return .success(try scanner.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension JSONParser {
    /// Whether `text`, a number written in decimal, names a number other than zero that reads as
    /// `value` zero: one too small for a double. The parser reads it as 0, as the FeatureFlags
    /// client does; a config refuses it (`ConfigsDecoder`).
    static func underflows(_ text: some Collection<UInt8>, to value: Double) -> Bool {
        guard value == 0 else { return false }
        let mantissa = text.prefix { !"eEpP".utf8.contains($0) }
        return mantissa.contains { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }
    }

    /// Every number of `node` (parsed from `source`) with where it is and how it is written, for
    /// the checks of what a number's text says that its value lost (`ConfigValue.numberProblems`).
    static func numbers(
        in node: JSONNode, at pointer: JSONPointer, source: [UInt8]
    ) -> [(pointer: JSONPointer, offset: Int, written: String, value: Double)] {
        switch node.content {
        case .number(let value):
            guard node.offset < source.count else { return [] }
            let lexeme = source[node.offset...].prefix { "+-.0123456789eE".utf8.contains($0) }
            return [(pointer, node.offset, String(decoding: lexeme, as: UTF8.self), value)]
        case .array(let elements):
            return elements.enumerated().flatMap { numbers(in: $1, at: pointer.appending($0), source: source) }
        case .object(let members):
            return members.flatMap { numbers(in: $0.node, at: pointer.appending($0.key), source: source) }
        case .null, .bool, .string:
            return []
        }
    }
}

private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    let maximumDepth: Int

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONNode {
        if bytes.starts(with: JSONParser.byteOrderMark) { index = 3 }
        skipWhitespace()
        guard index < bytes.count else {
            throw JSONSyntaxError(
                offset: index, message: "the file is empty",
                fix: "write a JSON object such as {\"features\": []}")
        }
        let root = try parseValue(expecting: "a JSON object or array")
        skipWhitespace()
        if index < bytes.count {
            throw unexpected(
                at: index, expecting: "the end of the file",
                fix: "delete everything after the document's closing bracket")
        }
        return root
    }

    // MARK: Values

    mutating func parseValue(expecting expected: String) throws(JSONSyntaxError) -> JSONNode {
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try parseObject()
        case UInt8(ascii: "["):
            return try parseArray()
        case UInt8(ascii: "\""):
            return JSONNode(content: .string(try parseString()), offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(content: .number(try parseNumber()), offset: start)
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return JSONNode(content: .bool(true), offset: start)
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return JSONNode(content: .bool(false), offset: start)
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return JSONNode(content: .null, offset: start)
        default:
            throw unexpected(at: index, expecting: expected)
        }
    }

    mutating func enterContainer(_ name: String) throws(JSONSyntaxError) {
        depth += 1
        guard depth <= maximumDepth else {
            throw JSONSyntaxError(
                offset: index,
                message: "\(name) nested deeper than \(maximumDepth) levels",
                fix: "flatten the structure; no features.json needs this depth")
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONNode {
        let start = index
        try enterContainer("array")
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return JSONNode(content: .array(elements), offset: start)
        }
        while true {
            try requireMore(closing: "array", openedAt: start)
            elements.append(try parseValue(expecting: "a value"))
            skipWhitespace()
            try requireMore(closing: "array", openedAt: start)
            switch bytes[index] {
            case UInt8(ascii: ","):
                let comma = index
                index += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") { throw trailingComma(at: comma, before: "]") }
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return JSONNode(content: .array(elements), offset: start)
            default:
                throw unexpected(at: index, expecting: "',' or ']' after an array element")
            }
        }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONNode {
        let start = index
        try enterContainer("object")
        index += 1
        var members: [JSONNode.Member] = []
        var keys: Set<String> = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return JSONNode(content: .object(members), offset: start)
        }
        while true {
            try requireMore(closing: "object", openedAt: start)
            let keyOffset = index
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw unexpected(at: index, expecting: "a key in double quotes")
            }
            let key = try parseString()
            if !keys.insert(key).inserted {
                let first = members.first { $0.key == key }!.keyOffset
                throw JSONSyntaxError(
                    offset: keyOffset,
                    message: "duplicate key \"\(key)\" in one object; readers disagree on which one wins",
                    fix: "keep only one \"\(key)\" (the other is at \(SourceLocator(Array(bytes)).location(of: first)))"
                )
            }
            skipWhitespace()
            try requireMore(closing: "object", openedAt: start)
            guard bytes[index] == UInt8(ascii: ":") else {
                throw unexpected(at: index, expecting: "':' after the key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            try requireMore(closing: "object", openedAt: start)
            let node = try parseValue(expecting: "a value for \"\(key)\"")
            members.append(JSONNode.Member(key: key, keyOffset: keyOffset, node: node))
            skipWhitespace()
            try requireMore(closing: "object", openedAt: start)
            switch bytes[index] {
            case UInt8(ascii: ","):
                let comma = index
                index += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") { throw trailingComma(at: comma, before: "}") }
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return JSONNode(content: .object(members), offset: start)
            default:
                throw unexpected(at: index, expecting: "',' or '}' after the value of \"\(key)\"")
            }
        }
    }

    mutating func parseLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count,
            UnsafeBufferPointer(rebasing: bytes[index..<index + expected.count]).elementsEqual(expected)
        else {
            throw JSONSyntaxError(
                offset: index, message: "invalid literal; did you mean \(literal)?",
                fix: "write true, false or null in lowercase, or quote the text as a string")
        }
        index += expected.count
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        var isSmallInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard let first = peek() else {
            throw JSONSyntaxError(offset: index, message: "the file ends inside a number", fix: "complete the number")
        }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) {
                throw JSONSyntaxError(
                    offset: start, message: "numbers must not have leading zeros",
                    fix: "remove the leading zeros")
            }
        } else if isDigit(first) {
            while let next = peek(), isDigit(next) { index += 1 }
        } else if first == UInt8(ascii: "I") {
            throw notANumber(at: start)
        } else {
            throw unexpected(at: index, expecting: "a digit after '-'")
        }
        if peek() == UInt8(ascii: ".") {
            isSmallInteger = false
            index += 1
            guard let next = peek(), isDigit(next) else {
                throw unexpected(at: index, expecting: "a digit after the decimal point")
            }
            while let next = peek(), isDigit(next) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isSmallInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let next = peek(), isDigit(next) else {
                throw unexpected(at: index, expecting: "a digit in the exponent")
            }
            while let next = peek(), isDigit(next) { index += 1 }
        }
        let lexeme = UnsafeBufferPointer(rebasing: bytes[start..<index])
        // Up to 15 digits an integer is exact as a double: skip the string round trip.
        if isSmallInteger && lexeme.count <= 15 {
            var value = 0
            for byte in lexeme where byte != UInt8(ascii: "-") { value = value * 10 + Int(byte - UInt8(ascii: "0")) }
            return Double(lexeme.first == UInt8(ascii: "-") ? -value : value)
        }
        guard let value = Double(String(decoding: lexeme, as: UTF8.self)), value.isFinite else {
            throw JSONSyntaxError(
                offset: start,
                message: "the number \(String(decoding: lexeme, as: UTF8.self)) is too large for a double",
                fix: "write a number between -1.7e308 and 1.7e308")
        }
        return value
    }

    // MARK: Strings

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let quote = index
        index += 1
        let start = index
        var hasEscapes = false
        var isASCII = true
        while true {
            guard index < bytes.count else {
                throw JSONSyntaxError(
                    offset: quote, message: "this string is never closed",
                    fix: "add the closing double quote")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                index += 2
                continue
            }
            if byte < 0x20 {
                throw JSONSyntaxError(
                    offset: index, message: "a control character (0x\(hex(byte))) inside a string",
                    fix: byte == 0x0A ? "write a line break as \\n" : "escape it as \\u00\(hex(byte))")
            }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        let content = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        if !isASCII { try validateUTF8(content, startingAt: start) }
        guard hasEscapes else { return String(decoding: content, as: UTF8.self) }
        return try unescape(content, startingAt: start)
    }

    func unescape(_ content: UnsafeBufferPointer<UInt8>, startingAt start: Int) throws(JSONSyntaxError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(content.count)
        var position = 0
        while position < content.count {
            let byte = content[position]
            guard byte == UInt8(ascii: "\\") else {
                output.append(byte)
                position += 1
                continue
            }
            let escapeOffset = start + position
            guard position + 1 < content.count else {
                throw JSONSyntaxError(
                    offset: escapeOffset, message: "incomplete escape sequence", fix: "write \\\\ for a backslash")
            }
            let escaped = content[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hexQuad(content, at: position, escapeOffset: escapeOffset)
                position += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard position + 6 <= content.count,
                        content[position] == UInt8(ascii: "\\"), content[position + 1] == UInt8(ascii: "u"),
                        case let low = try hexQuad(content, at: position + 2, escapeOffset: start + position),
                        (0xDC00...0xDFFF).contains(low)
                    else {
                        throw unpairedSurrogate(scalar, at: escapeOffset)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw unpairedSurrogate(scalar, at: escapeOffset)
                }
                output.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(scalar)!)!)
            default:
                throw JSONSyntaxError(
                    offset: escapeOffset, message: "invalid escape sequence \\\(Character(Unicode.Scalar(escaped)))",
                    fix: "use one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, or write \\\\ for a backslash")
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    func hexQuad(
        _ content: UnsafeBufferPointer<UInt8>, at position: Int, escapeOffset: Int
    ) throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= content.count else {
            throw JSONSyntaxError(
                offset: escapeOffset, message: "\\u needs four hex digits", fix: "write \\u followed by four hex digits"
            )
        }
        var value: UInt32 = 0
        for byte in content[position..<position + 4] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                throw JSONSyntaxError(
                    offset: escapeOffset, message: "\\u needs four hex digits",
                    fix: "write \\u followed by four hex digits")
            }
            value = value * 16 + UInt32(digit)
        }
        return value
    }

    func unpairedSurrogate(_ scalar: UInt32, at offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(
            offset: offset,
            message:
                "\\u\(String(scalar, radix: 16, uppercase: true)) is half of a UTF-16 surrogate pair with no other half",
            fix: "write the character itself, or both halves of the pair")
    }

    /// Refuses invalid UTF-8 at the exact byte, using the standard library's own decoder.
    func validateUTF8(_ content: UnsafeBufferPointer<UInt8>, startingAt start: Int) throws(JSONSyntaxError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = content.makeIterator()
        var consumed = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): consumed += encoded.count
            case .emptyInput: return
            case .error:
                throw invalidUTF8(at: start + consumed)
            }
        }
    }

    // MARK: Errors

    func unexpected(at offset: Int, expecting expected: String, fix: String? = nil) -> JSONSyntaxError {
        guard offset < bytes.count else {
            return JSONSyntaxError(
                offset: bytes.count, message: "the file ends where \(expected) was expected",
                fix: "complete the document; it may have been cut off")
        }
        let byte = bytes[offset]
        let next = offset + 1 < bytes.count ? bytes[offset + 1] : 0
        switch byte {
        case UInt8(ascii: "/") where next == UInt8(ascii: "/") || next == UInt8(ascii: "*"):
            return JSONSyntaxError(
                offset: offset, message: "comments are not allowed in JSON; the app rejects the whole file",
                fix: "delete the comment; keep notes in an unknown key such as \"_comment\"")
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            return notANumber(at: offset)
        case UInt8(ascii: "'"):
            return JSONSyntaxError(
                offset: offset, message: "strings must be in double quotes, not single quotes",
                fix: "replace the single quotes with double quotes")
        case UInt8(ascii: ","):
            return JSONSyntaxError(
                offset: offset, message: "unexpected ',' where \(expected) was expected",
                fix: "remove the extra comma")
        case 0x80...:
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = bytes[offset...].makeIterator()
            if case .valid(let encoded) = parser.parseScalar(from: &iterator) {
                let character = String(decoding: encoded, as: UTF8.self)
                return JSONSyntaxError(
                    offset: offset, message: "unexpected character '\(character)' where \(expected) was expected",
                    fix: fix ?? "put text inside double quotes")
            }
            return invalidUTF8(at: offset)
        case ..<0x20:
            return JSONSyntaxError(
                offset: offset, message: "unexpected control character 0x\(hex(byte)) where \(expected) was expected",
                fix: fix ?? "remove the control character")
        default:
            let character = Character(Unicode.Scalar(byte))
            return JSONSyntaxError(
                offset: offset, message: "unexpected '\(character)' where \(expected) was expected",
                fix: fix
                    ?? (byte.isLetter
                        ? "put keys and text inside double quotes" : "check the JSON syntax around this point"))
        }
    }

    func notANumber(at offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset, message: "NaN and Infinity are not JSON numbers", fix: "write a finite number")
    }

    func invalidUTF8(at offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(
            offset: offset, message: "invalid UTF-8 (byte 0x\(hex(bytes[offset])))",
            fix: "save the file as UTF-8")
    }

    func trailingComma(at offset: Int, before closer: Character) -> JSONSyntaxError {
        JSONSyntaxError(
            offset: offset, message: "trailing comma before '\(closer)'; older clients reject the whole file",
            fix: "remove the comma after the last element")
    }

    mutating func requireMore(closing container: String, openedAt start: Int) throws(JSONSyntaxError) {
        guard index >= bytes.count else { return }
        throw JSONSyntaxError(
            offset: bytes.count,
            message:
                "the file ends inside the \(container) opened at \(SourceLocator(Array(bytes)).location(of: start))",
            fix: "close the \(container) with '\(container == "array" ? "]" : "}")'")
    }

    // MARK: Bytes

    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}

extension UInt8 {
    fileprivate var isLetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}
