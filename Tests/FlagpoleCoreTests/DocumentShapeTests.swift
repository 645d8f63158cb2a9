import FlagpoleCore
import Testing

/// FORMAT.md §1: which top-level shapes the client accepts, and strict JSON (E100–E102).
@Suite("Document shapes (FORMAT §1)")
struct DocumentShapeTests {
    // MARK: Accepted shapes

    @Test("An object with features keeps the other top-level keys in order and where features sat")
    func objectWithExtras() throws {
        let decoded = TestSupport.decode(
            #"""
            {"version": 3, "features": [{"name": "a"}], "meta": {"owner": "ios", "tags": ["x", null]}}
            """#)
        #expect(decoded.diagnostics.isEmpty)
        let document = try #require(decoded.document)
        #expect(document.features.map(\.name) == ["a"])
        #expect(document.extras.keys == ["version", "meta"])
        #expect(document.extras["version"] == .number(3))
        #expect(document.extras["meta"] == .object(["owner": .string("ios"), "tags": .array([.string("x"), .null])]))
        #expect(document.featuresPosition == 1)
        #expect(decoded.featuresPointer.description == "/features")
    }

    @Test(
        "featuresPosition is the index of features among the top-level keys",
        arguments: [
            (#"{"features": [], "a": 1}"#, 0, ["a"]),
            (#"{"a": 1, "features": [], "b": 2}"#, 1, ["a", "b"]),
            (#"{"a": 1, "b": 2, "features": []}"#, 2, ["a", "b"]),
            (#"{"features": []}"#, 0, []),
        ])
    func featuresPosition(text: String, position: Int, extras: [String]) throws {
        let document = try #require(TestSupport.decode(text).document)
        #expect(document.featuresPosition == position)
        #expect(document.extras.keys == extras)
    }

    @Test("A bare array, the shape of the client's cache, is accepted")
    func bareArray() throws {
        let decoded = TestSupport.decode(#"[{"name": "a"}, {"name": "b", "enabled": true}]"#)
        #expect(decoded.diagnostics.isEmpty)
        let document = try #require(decoded.document)
        #expect(document.features.map(\.name) == ["a", "b"])
        #expect(document.extras.isEmpty)
        #expect(decoded.featuresPointer == .root)
    }

    @Test(
        "Empty features are accepted and empty",
        arguments: [
            Input(#"{"features": []}"#), Input("[]"), Input(" \n\t{ \"features\" : [ ] }\r\n\n"),
        ])
    func emptyFeatures(input: Input) throws {
        let decoded = TestSupport.decode(input.text)
        #expect(decoded.diagnostics.isEmpty)
        #expect(decoded.isValid)
        let document = try #require(decoded.document)
        #expect(document.features.isEmpty)
    }

    @Test("A UTF-8 byte-order mark is accepted")
    func byteOrderMark() throws {
        for text in [#"{"features": [{"name": "a"}]}"#, #"[{"name": "a"}]"#] {
            let decoded = DocumentDecoder.decode([0xEF, 0xBB, 0xBF] + Array(text.utf8))
            #expect(decoded.diagnostics.isEmpty, "\(text)")
            #expect(decoded.document?.features.map(\.name) == ["a"], "\(text)")
        }
    }

    @Test("Columns on the first line do not count the byte-order mark")
    func byteOrderMarkColumns() throws {
        // {"features": [] then the comma: the comma is the 16th character after the mark.
        let decoded = DocumentDecoder.decode([0xEF, 0xBB, 0xBF] + Array(#"{"features": [],}"#.utf8))
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.location == Position(line: 1, column: 16))

        let wrong = DocumentDecoder.decode([0xEF, 0xBB, 0xBF] + Array(#"{"features": 1}"#.utf8))
        let e102 = try #require(wrong.diagnostics.only)
        #expect(e102.code == .featuresNotAnArray)
        #expect(e102.location == Position(line: 1, column: 14))
    }

    @Test("Any feature failing to decode rejects the whole document")
    func oneBadFeatureRejectsAll() {
        let decoded = TestSupport.decode(
            #"{"features": [{"name": "a"}, {"name": "b", "enabled": "yes"}, {"name": "c"}]}"#)
        #expect(decoded.document == nil)
        #expect(!decoded.isValid)
        #expect(decoded.diagnostics.map(\.code) == [.wrongType])
    }

    // MARK: E101, E102

    @Test(
        "A top level that is neither an object with features nor an array is E101",
        arguments: [
            Input(#"‸{"feature": []}"#),
            Input(#"‸{"Features": []}"#),
            Input(#"‸{"FEATURES": [], "other": 1}"#),
            Input("‸{}"),
            Input(#"‸"features""#),
            Input("‸42"),
            Input("‸null"),
            Input("‸true"),
            Input("\n  ‸{\"feature\": []}"),
        ])
    func notAFeaturesDocument(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(input.text)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notAFeaturesDocument)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.pointer == .root)
        #expect(diagnostic.feature == nil)
        #expect(diagnostic.location == marks.first)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
    }

    @Test(
        "features that is not an array is E102 (an object is rejected, the rest crash the app)",
        arguments: [
            Input(#"{"features": ‸{}}"#),
            Input(#"{"features": ‸{"name": "a"}}"#),
            Input(#"{"features": ‸null}"#),
            Input(#"{"features": ‸"[]"}"#),
            Input(#"{"features": ‸""}"#),
            Input(#"{"features": ‸0}"#),
            Input(#"{"features": ‸1.5}"#),
            Input(#"{"features": ‸true}"#),
            Input(#"{"features": ‸false}"#),
            Input("{\n    \"version\": 2,\n    \"features\": ‸null\n}"),
        ])
    func featuresNotAnArray(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(input.text)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .featuresNotAnArray)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.pointer.description == "/features")
        #expect(diagnostic.location == marks.first)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
    }

    // MARK: E100

    @Test(
        "Anything that is not strict JSON is E100 at the offending character",
        arguments: [
            // Comments.
            Input("{\"features\": [] ‸// note\n}"),
            Input("{\n    \"features\": [\n        ‸/* none yet */\n    ]\n}"),
            Input("{\r\n    \"features\": [\r\n        ‸// CRLF line endings\r\n    ]\r\n}"),
            // Trailing commas, where they are.
            Input(#"{"features": []‸,}"#),
            Input(#"{"features": [{"name": "a"}‸,]}"#),
            Input("{\n    \"features\": [\n        {\"name\": \"a\", \"enabled\": true‸,}\n    ]\n}"),
            Input(#"{"features": [{"name": "a", "test-variations": ["A", "B"‸,]}]}"#),
            // NaN and Infinity.
            Input(#"{"features": [{"name": "a", "test-variations": ["A", "B"], "test-biases": [‸NaN, 50]}]}"#),
            Input(#"{"features": [{"name": "a", "test-variations": ["A", "B"], "test-biases": [50, ‸Infinity]}]}"#),
            Input(#"{"features": [], "x": ‸-Infinity}"#),
            // Trailing text.
            Input(#"{"features": []} ‸x"#),
            Input(#"{"features": []}‸}"#),
            Input("{\"features\": []}\n‸{\"features\": []}"),
            Input("[]\n\n   ‸,"),
            // Duplicate keys: the second one is reported.
            Input(#"{"features": [], ‸"features": []}"#),
            Input(#"{"features": [{"name": "a", ‸"name": "b"}]}"#),
            Input(#"{"features": [{"name": "a", "enabled": true, ‸"enabled": false}]}"#),
            // Leading zeros.
            Input(#"{"features": [], "v": ‸00}"#),
            Input(#"{"features": [{"name": "a", "test-variations": ["A", "B"], "test-biases": [‸050, 50]}]}"#),
            // Lone surrogate escapes: the escape is reported.
            Input(#"{"features": [{"name": "‸\ud83d"}]}"#),
            Input(#"{"features": [{"name": "‸\udc00"}]}"#),
            Input(#"{"features": [{"name": "x‸\ud83d\u0041"}]}"#),
            Input(#"{"features": [{"name": "ok", "description": "é‸\ud800 end"}]}"#),
            // Other syntax.
            Input(#"{‸'features': []}"#),
            Input(#"{‸features: []}"#),
            Input(#"{"features": [{"name": "a", "enabled": ‸True}]}"#),
            Input(#"{"features": [{"name": "a"} ‸{"name": "b"}]}"#),
            Input(#"{"features": [{"name": "‸\x"}]}"#),
            Input("{\"features\": [{\"name\": \"a‸\nb\"}]}"),
            Input(#"{"features": [‸"#),
            Input("‸"),
            // Columns count characters, not bytes: é is one column.
            Input(#"{"features": [], "café": ‸tru}"#),
            Input("{\"features\": [],\n \"ünïcödé\": \"ü\", ‸,\n}"),
        ])
    func notStrictJSON(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(input.text)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.location == marks.first)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
    }

    @Test("Escaped surrogate pairs and escaped slashes are valid JSON")
    func validEscapes() throws {
        let feature = try TestSupport.onlyFeature(#""description": "\ud83d\ude00 a\/b \u00e9 \"q\" \\ \n""#)
        #expect(feature.description == "😀 a/b é \"q\" \\ \n")
    }

    /// Template: `{"features": [{"name": "é` + bad bytes + `"}]}`; `{"features": [{"name": "é`
    /// is 25 characters, so the first bad byte is in column 26.
    @Test(
        "Invalid UTF-8 inside a string is E100 at the bad byte",
        arguments: [
            [UInt8]([0xFF]),
            [0xFE, 0x41],
            [0xC3],  // a lead byte followed by the closing quote
            [0x80],  // a lone continuation byte
            [0xC0, 0xAF],  // an overlong '/'
            [0xED, 0xA0, 0x80],  // a UTF-16 surrogate encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        ])
    func invalidUTF8InString(bad: [UInt8]) throws {
        let bytes = Array(#"{"features": [{"name": "é"#.utf8) + bad + Array(#""}]}"#.utf8)
        let decoded = DocumentDecoder.decode(bytes)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.location == Position(line: 1, column: 26))
    }

    @Test("Invalid UTF-8 outside strings is E100 where it is")
    func invalidUTF8OutsideStrings() throws {
        let afterDocument = DocumentDecoder.decode(Array(#"{"features": []}"#.utf8) + [0xFF])
        #expect(afterDocument.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(afterDocument.diagnostics.first?.location == Position(line: 1, column: 17))

        let inKey = DocumentDecoder.decode(Array(#"{"features": [], ""#.utf8) + [0xFE] + Array(#"": 1}"#.utf8))
        #expect(inKey.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(inKey.diagnostics.first?.location == Position(line: 1, column: 19))

        let asValue = DocumentDecoder.decode(Array("{\"features\":\n  ".utf8) + [0xC3, 0xA9] + Array("}".utf8))
        #expect(asValue.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(asValue.diagnostics.first?.location == Position(line: 2, column: 3))
    }

    @Test("Valid non-ASCII text is kept as written")
    func validUTF8() throws {
        let feature = try TestSupport.onlyFeature(#""description": "Fonctionnalité 日本語 🚀""#)
        #expect(feature.description == "Fonctionnalité 日本語 🚀")
    }

    // MARK: Depth

    @Test(
        "Very deep nesting is refused as E100 without crashing",
        arguments: [
            Input(String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)),
            Input(
                #"{"features": [{"name": "a", "deep": "# + String(repeating: "[", count: 1000)
                    + String(repeating: "]", count: 1000) + "}]}"),
            Input(String(repeating: #"{"a": "#, count: 1000) + "1" + String(repeating: "}", count: 1000)),
            Input(String(repeating: "[", count: 100_000)),
        ])
    func deepNesting(input: Input) {
        let decoded = TestSupport.decode(input.text)
        #expect(decoded.document == nil)
        #expect(decoded.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(decoded.diagnostics.first?.location?.line == 1)
    }

    @Test("Moderate nesting in an unknown key is kept")
    func moderateNesting() throws {
        let depth = 50
        let deep = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        let feature = try TestSupport.onlyFeature(#""deep": "# + deep)
        var expected = JSONValue.number(1)
        for _ in 0..<depth { expected = .array([expected]) }
        #expect(feature.unknownKeys["deep"] == expected)
    }
}

extension Array {
    /// The only element, or `nil` when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
