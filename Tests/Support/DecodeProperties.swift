import FlagpoleCore

/// What must hold of any input to the decoder, however damaged: the property that the seeded
/// `MutationFuzzTests` and the libFuzzer harness of `Scripts/fuzz` both check, stated once here.
///
/// Decoding terminates; every diagnostic has a message and a fix; every diagnostic with a place
/// lies inside the input, and only warnings have none; a refused input has an error; an accepted
/// one has none, renders (pretty and compact), reads back as the same document, and renders to
/// the same bytes again.
public enum DecodeProperties {
    /// The properties `bytes` breaks; empty when it keeps them all.
    public static func problems(of bytes: [UInt8]) -> [String] {
        check(bytes).problems
    }

    /// `bytes` decoded, and the properties it breaks.
    public static func check(_ bytes: [UInt8]) -> (decoded: DecodedDocument, problems: [String]) {
        var problems: [String] = []
        let decoded = DocumentDecoder.decode(bytes)
        let lines = LineWidths(bytes)
        for diagnostic in decoded.diagnostics {
            if diagnostic.message.isEmpty || diagnostic.fix.isEmpty {
                problems.append("no message or fix: \(diagnostic)")
            }
            if let location = diagnostic.location {
                if !lines.contains(location) {
                    problems.append("\(location) is outside the input (\(lines.widths.count) lines): \(diagnostic)")
                }
            } else if diagnostic.severity == .error {
                problems.append("an error without a position: \(diagnostic)")
            }
        }
        guard let document = decoded.document else {
            if !decoded.diagnostics.hasErrors { problems.append("refused without an error: \(decoded.diagnostics)") }
            return (decoded, problems)
        }
        if decoded.diagnostics.hasErrors { problems.append("a document despite errors: \(decoded.diagnostics)") }
        for style in [JSONWriter.Style.pretty, .compact] {
            let rendered = document.rendered(style)
            let again = DocumentDecoder.decode(rendered)
            if again.diagnostics.hasErrors {
                problems.append("the \(style) rendering is refused: \(again.diagnostics.errors)")
            }
            if again.document != document { problems.append("the \(style) rendering reads back as another document") }
            if again.document?.rendered(style) != rendered {
                problems.append("rendering twice (\(style)) gives other bytes")
            }
        }
        return (decoded, problems)
    }
}

/// How many characters each line holds, counted as `SourceLocator` counts columns.
public struct LineWidths: Sendable {
    /// The characters of each line, the first line first.
    public private(set) var widths: [Int] = [0]

    /// The widths of the lines of `bytes` (UTF-8).
    public init(_ bytes: [UInt8]) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                widths.append(0)
            } else if byte & 0xC0 != 0x80 {
                widths[widths.count - 1] += 1
            }
        }
    }

    /// Whether `location` names a character of the input or the end of one of its lines.
    public func contains(_ location: SourceLocation) -> Bool {
        widths.indices.contains(location.line - 1) && (1...widths[location.line - 1] + 1).contains(location.column)
    }
}
