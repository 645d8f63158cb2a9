import FlagpoleCore
import Foundation
import Testing

/// docs/FORMAT.md §7 against the code: every `DiagnosticCode` has a section, no section names a
/// code the code lacks, and each section's example still produces its code.
@Suite struct FormatDocumentTests {
    /// `docs/FORMAT.md`, found from this file's own path.
    static let formatDocument: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("docs")
        .appendingPathComponent("FORMAT.md")

    static func loadFormatDocument() throws -> FormatDocument {
        FormatDocument(try String(contentsOf: formatDocument, encoding: .utf8))
    }

    @Test(arguments: DiagnosticCode.allCases)
    func everyCodeIsDocumentedWithAnExampleThatProducesIt(_ code: DiagnosticCode) throws {
        let document = try Self.loadFormatDocument()
        let examples = try #require(document.examples[code.rawValue], "docs/FORMAT.md has no section for \(code)")
        #expect(document.problems(of: code.rawValue, examples: examples) == [])
    }

    @Test func everyDocumentedCodeExists() throws {
        let document = try Self.loadFormatDocument()
        let known = Set(DiagnosticCode.allCases.map(\.rawValue))
        #expect(document.mentionedCodes.subtracting(known) == [])
        #expect(Set(document.examples.keys).subtracting(known) == [])
    }

    /// The checks above can fail: a section whose example is valid, one without an example and one
    /// naming a code that does not exist are all caught.
    @Test func aWrongDocumentIsCaught() {
        let document = FormatDocument(
            """
            ## 7. Diagnostics

            ### W201 — biases fall short of 100

            ```json
            {"features": [{"name": "checkout", "test-variations": ["A", "B"], "test-biases": [50, 50]}]}
            ```

            ### E112 — a known key has the wrong type

            No example.

            ### E199 — made up

            ```json
            {"features": []}
            ```
            """)
        #expect(document.problems(of: "W201", examples: document.examples["W201"] ?? []) != [])
        #expect(document.problems(of: "E112", examples: document.examples["E112"] ?? []) != [])
        #expect(document.mentionedCodes.contains("E199"))
        #expect(DiagnosticCode(rawValue: "E199") == nil)
    }
}

/// The diagnostic sections of a FORMAT.md: `### CODE — title` headings and their ```json blocks.
struct FormatDocument {
    /// The ```json blocks under each `### CODE` heading, in order.
    var examples: [String: [String]] = [:]
    /// Every token shaped like a code (`E100`, `W252`) anywhere in the text.
    var mentionedCodes: Set<String> = []

    init(_ markdown: String) {
        var section: String?
        var block: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var lines = block {
                if line.hasPrefix("```") {
                    if let section { examples[section, default: []].append(lines.joined(separator: "\n")) }
                    block = nil
                } else {
                    lines.append(line)
                    block = lines
                }
                continue
            }
            if line.hasPrefix("```json") {
                block = []
            } else if line.hasPrefix("#") {
                section = line.hasPrefix("### ") ? Self.codes(in: line).first : nil
                if let section { examples[section, default: []] += [] }
            }
            mentionedCodes.formUnion(Self.codes(in: line))
        }
    }

    /// What is wrong with the examples of `code`: one block must produce it through the
    /// decoder; two are a stored document and an imported file, reviewed as an import.
    func problems(of code: String, examples: [String]) -> [String] {
        guard let code = DiagnosticCode(rawValue: code) else { return ["\(code) is not a DiagnosticCode"] }
        let produced: [Diagnostic]
        switch examples.count {
        case 1:
            produced = DocumentDecoder.decode(Array(examples[0].utf8)).diagnostics
        case 2:
            let stored = DocumentDecoder.decode(Array(examples[0].utf8))
            guard let current = stored.document, stored.diagnostics.isEmpty else {
                return ["the stored document of \(code.rawValue) is not clean: \(stored.diagnostics)"]
            }
            let file = DocumentDecoder.decode(Array(examples[1].utf8))
            produced = file.diagnostics + ImportReview.review(file, replacing: current)
        default:
            return ["\(code.rawValue) has \(examples.count) ```json examples; one, or two for an import"]
        }
        var problems: [String] = []
        if !produced.contains(where: { $0.code == code }) {
            problems.append("the example of \(code.rawValue) produces \(produced.map(\.code.rawValue)) instead")
        }
        if code.severity == .warning && produced.hasErrors {
            problems.append("the example of warning \(code.rawValue) has errors too: \(produced.errors)")
        }
        return problems
    }

    /// The code-shaped tokens of `line`: `E` or `W` and three digits, standing alone.
    static func codes(in line: String) -> [String] {
        let characters = Array(line)
        var found: [String] = []
        for start in characters.indices where characters[start] == "E" || characters[start] == "W" {
            let end = start + 4
            guard end <= characters.count, characters[(start + 1)..<end].allSatisfy(\.isASCIIDigit) else { continue }
            let before = start > 0 ? characters[start - 1] : " "
            let after = end < characters.count ? characters[end] : " "
            guard !before.isLetter, !before.isNumber, !after.isLetter, !after.isNumber else { continue }
            found.append(String(characters[start..<end]))
        }
        return found
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
