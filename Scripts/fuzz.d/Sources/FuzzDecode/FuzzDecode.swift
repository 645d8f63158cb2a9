import FlagpoleCore

/// libFuzzer's callback: decodes one input and checks the properties every input must have.
///
/// The same properties as Tests/FlagpoleCoreTests/MutationFuzzTests.swift, which runs a short
/// seeded version in `swift test`; a broken one stops the fuzzer with the message and libFuzzer
/// saves the input under Scripts/fuzz.d/out/.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    DecodeProperties.check(bytes)
    return 0
}

enum DecodeProperties {
    static func check(_ bytes: [UInt8]) {
        let decoded = DocumentDecoder.decode(bytes)
        let lines = LineWidths(bytes)
        for diagnostic in decoded.diagnostics {
            require(
                !diagnostic.message.isEmpty && !diagnostic.fix.isEmpty,
                "a diagnostic without a message or a fix: \(diagnostic)")
            if let location = diagnostic.location {
                require(
                    lines.contains(location),
                    "\(location) is outside the input (\(lines.widths.count) lines): \(diagnostic)")
            } else {
                require(diagnostic.severity == .warning, "an error without a line and column: \(diagnostic)")
            }
        }
        guard let document = decoded.document else {
            require(decoded.diagnostics.hasErrors, "refused without an error: \(decoded.diagnostics)")
            return
        }
        require(!decoded.diagnostics.hasErrors, "a document despite errors: \(decoded.diagnostics)")
        for style in [JSONWriter.Style.pretty, .compact] {
            let rendered = document.rendered(style)
            let again = DocumentDecoder.decode(rendered)
            require(!again.diagnostics.hasErrors, "its rendering is refused: \(again.diagnostics)")
            require(again.document == document, "the rendering reads back as another document")
            require(again.document?.rendered(style) == rendered, "rendering twice gives other bytes")
        }
    }

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError(message()) }
    }
}

/// How many characters each line holds, counted as `SourceLocator` counts columns.
struct LineWidths {
    var widths: [Int] = [0]

    init(_ bytes: [UInt8]) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                widths.append(0)
            } else if byte & 0xC0 != 0x80 {
                widths[widths.count - 1] += 1
            }
        }
    }

    /// Whether `location` names a character of the input or the end of one of its lines.
    func contains(_ location: SourceLocation) -> Bool {
        widths.indices.contains(location.line - 1) && (1...widths[location.line - 1] + 1).contains(location.column)
    }
}
