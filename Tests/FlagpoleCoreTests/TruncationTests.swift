import FlagpoleCore
import Testing

/// A file cut off anywhere (an interrupted upload, a full disk) must be refused as E100,
/// never crash the parser.
@Suite("Truncated files")
struct TruncationTests {
    static let sample = """
        {"v": [-1.5e+3, 12.25E-2, 0, true, false, null], "features": [{"name": "caf\\u00e9 ☕", \
        "test-variations": ["A", "B"], "test-biases": [50.5, 49.5], "labels": ["l\\n", null]}]}
        """

    @Test(
        "Every prefix of a document short of its closing bracket is E100",
        arguments: ["sample", "rwbutler-HEAD-Features.json"])
    func everyPrefixIsRefused(name: String) throws {
        let bytes = name == "sample" ? Array(Self.sample.utf8) : try TestSupport.realFixture(name)
        #expect(DocumentDecoder.decode(bytes).isValid)
        let end = try #require(bytes.lastIndex(of: UInt8(ascii: "}")))
        for length in 0...end {
            let decoded = DocumentDecoder.decode(Array(bytes[0..<length]))
            #expect(decoded.diagnostics.map(\.code) == [.notStrictJSON], "prefix of \(length) bytes")
        }
    }

    @Test(
        "A number cut off after its point or exponent says where the file ends",
        arguments: ["[1.", "[1e", "[-1.5e+", "12.25E-"])
    func cutNumbers(text: String) {
        let diagnostics = DocumentDecoder.decode(Array(text.utf8)).diagnostics
        #expect(diagnostics.map(\.code) == [.notStrictJSON])
        #expect(diagnostics.first?.location == SourceLocation(line: 1, column: text.count + 1))
    }
}

/// SQLite text ends at U+0000: the store refuses such strings instead of cutting them short.
@Suite("NUL characters")
struct NULCharacterTests {
    @Test(
        "U+0000 in a stored string is E114 at that string",
        arguments: [
            (#"{"features": [{"name": "a\u0000b"}]}"#, "/features/0/name", 24),
            (#"{"features": [{"name": "a", "description": "x\u0000"}]}"#, "/features/0/description", 44),
            (
                #"{"features": [{"name": "a", "test-variations": ["x", "\u0000"]}]}"#, "/features/0/test-variations/1",
                54
            ),
            (#"{"features": [{"name": "a", "labels": [null, "l\u0000"]}]}"#, "/features/0/labels/1", 46),
            (#"{"k\u0000": 1, "features": []}"#, "/k\u{0}", 2),
        ])
    func refused(text: String, pointer: String, column: Int) {
        let diagnostics = DocumentDecoder.decode(Array(text.utf8)).diagnostics
        #expect(diagnostics.map(\.code) == [.nulCharacter])
        #expect(diagnostics.first?.pointer.description == pointer)
        #expect(diagnostics.first?.location == SourceLocation(line: 1, column: column))
    }

    @Test("U+0000 inside unknown keys' values is kept: the store writes them as JSON")
    func keptInUnknownValues() throws {
        let decoded = DocumentDecoder.decode(Array(#"{"features": [{"name": "a", "note": "x\u0000y"}]}"#.utf8))
        let feature = try #require(decoded.document?.features.first)
        #expect(feature.unknownKeys["note"] == .string("x\u{0}y"))
        #expect(String(decoding: decoded.document!.rendered(.compact), as: UTF8.self).contains(#""x\u0000y""#))
    }
}
