import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

/// A short, seeded fuzzing run over the real files (`Scripts/fuzz` runs libFuzzer for longer).
///
/// Every input, however damaged, must decode without crashing; a refusal must carry an error
/// whose line and column lie inside the input; an accepted file must render, read back as the
/// same document, and render to the same bytes again. `FLAGPOLE_FUZZ_SEED` and
/// `FLAGPOLE_FUZZ_ITERATIONS` replay a failure or run longer.
@Suite("Mutation fuzzing")
struct MutationFuzzTests {
    static let seed = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_260_522
    static let iterations = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 400

    /// The real files, and small hand-written documents that reach the shapes they lack.
    static func seeds() throws -> [[UInt8]] {
        let real = try TestSupport.realFixtureNames.map(TestSupport.realFixture)
        let written = [
            #"[{"name": "cache shape", "test-variations": ["A", "B", "C"], "test-biases": [20, 30, 50], "test-variation-assignment": 12.5}]"#,
            #"{"version": 2, "features": [{"name": "u", "unlocked": false, "type": {"feature-flag": "x"}, "labels": ["l", null], "x-note": {"a": [1, -0.5e-3]}}], "tail": null}"#,
            #"{"features": [{"name": "t", "type": {"feature-test": "mvt"}, "test-variations": ["on"], "test-biases": [60, 60], "development": true}]}"#,
        ]
        return real + written.map { Array($0.utf8) }
    }

    @Test("Damaged and mutated real files never crash, are refused at a real position, or round-trip")
    func mutatedFilesKeepTheDecodingProperties() throws {
        var mutator = DocumentMutator(seeds: try Self.seeds(), random: SeededGenerator(seed: Self.seed))
        var accepted = 0
        var codes: Set<DiagnosticCode> = []
        for iteration in 0..<Self.iterations {
            let (bytes, steps) = mutator.next()
            let (decoded, problems) = DecodeProperties.check(bytes)
            if !problems.isEmpty {
                Issue.record(
                    """
                    FLAGPOLE_FUZZ_SEED=\(Self.seed), iteration \(iteration): \(problems.joined(separator: "; "))
                    steps: \(steps.joined(separator: " | "))
                    input (base64): \(Data(bytes).base64EncodedString())
                    """)
                return
            }
            if decoded.document != nil { accepted += 1 }
            codes.formUnion(decoded.diagnostics.map(\.code))
        }
        // The generator must reach both sides and most of the validator, or the run proves little.
        #expect(accepted > Self.iterations / 10, "\(accepted) of \(Self.iterations) inputs accepted")
        #expect(
            Self.iterations - accepted > Self.iterations / 10,
            "\(Self.iterations - accepted) of \(Self.iterations) inputs refused")
        #expect(codes.count >= 12, "codes seen: \(codes.sorted())")
    }

    @Test("The properties hold for every prefix and every single-byte deletion of a real file")
    func everyCutAndDeletion() throws {
        let bytes = try TestSupport.realFixture("issue-pr7-nicolasanjoran.json")
        for length in 0...bytes.count {
            let prefix = Array(bytes[..<length])
            #expect(DecodeProperties.problems(of: prefix).isEmpty, "prefix of \(length) bytes")
        }
        for index in bytes.indices {
            var damaged = bytes
            damaged.remove(at: index)
            #expect(DecodeProperties.problems(of: damaged).isEmpty, "byte \(index) deleted")
        }
    }
}

/// What must hold of any input (the same checks as Scripts/fuzz.d's libFuzzer harness).
enum DecodeProperties {
    /// The properties `bytes` breaks; empty when it keeps them all.
    static func problems(of bytes: [UInt8]) -> [String] {
        check(bytes).problems
    }

    /// `bytes` decoded, and the properties it breaks.
    static func check(_ bytes: [UInt8]) -> (decoded: DecodedDocument, problems: [String]) {
        var problems: [String] = []
        let decoded = DocumentDecoder.decode(bytes)
        let lines = LineWidths(bytes)
        for diagnostic in decoded.diagnostics {
            if diagnostic.message.isEmpty || diagnostic.fix.isEmpty {
                problems.append("no message or fix: \(diagnostic)")
            }
            if let location = diagnostic.location {
                if !lines.contains(location) { problems.append("\(location) is outside the input: \(diagnostic)") }
            } else if diagnostic.severity == .error {
                problems.append("an error without a position: \(diagnostic)")
            }
        }
        guard let document = decoded.document else {
            if !decoded.diagnostics.hasErrors { problems.append("refused without an error") }
            return (decoded, problems)
        }
        if decoded.diagnostics.hasErrors { problems.append("a document despite errors") }
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
    func contains(_ location: FlagpoleCore.SourceLocation) -> Bool {
        widths.indices.contains(location.line - 1) && (1...widths[location.line - 1] + 1).contains(location.column)
    }
}
