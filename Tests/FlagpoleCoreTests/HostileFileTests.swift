import FlagpoleCore
import Foundation
import Testing

/// Files written to hurt: each is a clear error (what, where, how to fix) or a correct reading,
/// in time and memory bounded by its size, never a crash.
@Suite("Hostile files")
struct HostileFileTests {
    // MARK: Size

    @Test("A file over the size limit is refused as E100 before parsing, naming its size and the limit")
    func overTheSizeLimit() throws {
        let bytes = [UInt8](repeating: UInt8(ascii: " "), count: DocumentDecoder.maximumInputSize + 1)
        let decoded = DocumentDecoder.decode(bytes)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.message.contains("\(DocumentDecoder.maximumInputSize + 1) bytes"))
        #expect(diagnostic.message.contains("64 MiB"))
        #expect(!diagnostic.fix.isEmpty)
    }

    // MARK: Numbers

    @Test(
        "Numbers no double holds are refused at the number",
        arguments: [
            "1e400", "-1e400", "1" + String(repeating: "0", count: 1_000), "1.7976931348623159e308",
        ])
    func numbersTooLarge(number: String) throws {
        let text = #"{"features": [{"name": "a", "x": "# + number + "}]}"
        let diagnostic = try #require(TestSupport.decode(text).diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.location == Position(line: 1, column: 34))
        #expect(diagnostic.message.contains("too large for a double"))
    }

    @Test(
        "Numbers at the edges of doubles are read as the client reads them and written back stably",
        arguments: [
            ("-0", 0.0, "0"),
            ("1e-400", 0.0, "0"),
            ("4.9e-324", .leastNonzeroMagnitude, "5e-324"),
            ("9223372036854775807", 0x1p63, "9.223372036854776e+18"),
            ("-9223372036854775809", -0x1p63, "-9.223372036854776e+18"),
            ("18446744073709551616", 0x1p64, "1.8446744073709552e+19"),
            ("9007199254740993", 9_007_199_254_740_992, "9007199254740992"),
            ("1.7976931348623157e308", .greatestFiniteMagnitude, "1.7976931348623157e+308"),
        ])
    func edgeNumbers(number: String, value: Double, written: String) throws {
        let feature = try TestSupport.onlyFeature(#""x": "# + number)
        #expect(feature.unknownKeys["x"] == .number(value))
        let document = FeaturesDocument(features: [feature])
        #expect(String(decoding: document.rendered(.compact), as: UTF8.self).contains(#""x":"# + written + "}"))
        #expect(DocumentDecoder.decode(document.rendered()).document == document)
    }

    @Test(
        "Biases far out of range are clamped with a warning, never an error or a crash",
        arguments: [
            "[1e308, -1e308]", "[-0, 100]", "[1e-400, 100]", "[100, 5e-324]", "[0.1e3, 1.7976931348623157e308]",
        ])
    func hugeBiases(biases: String) throws {
        let decoded = TestSupport.decode(
            TestSupport.document(feature: #""test-variations": ["A", "B"], "test-biases": "# + biases))
        #expect(decoded.isValid, "\(decoded.diagnostics)")
        let feature = try #require(decoded.document?.features.only)
        #expect(feature.effectiveBiases.allSatisfy { $0 >= 0 && $0 <= 100 })
        #expect(abs(feature.effectiveShares.reduce(0, +) - 100) < 1e-9)
        #expect(feature.effectiveShares.allSatisfy { $0 >= 0 && $0 <= 100 })
    }

    // MARK: Text

    @Test(
        "Invalid UTF-8 is refused at the offending byte, in a string or between tokens",
        arguments: [
            [0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0x80], [0x80],
        ] as [[UInt8]])
    func invalidUTF8(bad: [UInt8]) throws {
        // Between tokens the bad byte is the 23rd character; in the string, after "a, the 25th.
        for (prefix, suffix, column) in [
            (#"{"features": [{"name":"#, "}]}", 23), (#"{"features": [{"name":"a"#, "\"}]}", 25),
        ] {
            let bytes = Array(prefix.utf8) + bad + Array(suffix.utf8)
            let diagnostic = try #require(DocumentDecoder.decode(bytes).diagnostics.only)
            #expect(diagnostic.code == .notStrictJSON)
            #expect(diagnostic.message.contains("invalid UTF-8"), "\(diagnostic.message)")
            #expect(diagnostic.location == Position(line: 1, column: column))
        }
    }

    @Test("A byte-order mark is accepted, and positions after it do not count it")
    func byteOrderMark() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let valid = DocumentDecoder.decode(mark + Array(#"{"features": [{"name": "a"}]}"#.utf8))
        #expect(valid.isValid)
        let invalid = DocumentDecoder.decode(mark + Array(#"{"features": [{"name": 1}]}"#.utf8))
        #expect(invalid.diagnostics.map(\.code) == [.missingName])
        #expect(invalid.diagnostics.first?.location == Position(line: 1, column: 24))
        // A second mark is not whitespace.
        let twice = DocumentDecoder.decode(mark + mark + Array("[]".utf8))
        #expect(twice.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(twice.diagnostics.first?.location == Position(line: 1, column: 1))
    }

    @Test("A raw NUL byte is refused where it stands: in a string, or between tokens")
    func rawNULBytes() throws {
        let inString = DocumentDecoder.decode(Array(#"{"features": [{"name": "a"#.utf8) + [0] + Array(#""}]}"#.utf8))
        #expect(inString.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(inString.diagnostics.first?.location == Position(line: 1, column: 26))
        #expect(inString.diagnostics.first?.message.contains("control character") == true)
        let between = DocumentDecoder.decode(Array(#"{"features": []}"#.utf8) + [0])
        #expect(between.diagnostics.map(\.code) == [.notStrictJSON])
        #expect(between.diagnostics.first?.location == Position(line: 1, column: 17))
    }

    @Test(
        "Lone or reversed surrogates in \\u escapes are refused at the escape",
        arguments: [
            #""\uD800""#, #""\uDC00""#, #""\uD800\u0041""#, #""\uDC00\uD800""#, #""\uD800\n""#, #""\uD83D""#,
        ])
    func loneSurrogates(string: String) throws {
        let diagnostic = try #require(TestSupport.decode(#"{"features": [{"name": "# + string + "}]}").diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.location == Position(line: 1, column: 25))
        #expect(diagnostic.message.contains("surrogate"))
    }

    @Test("A valid surrogate pair is the character it encodes")
    func surrogatePair() throws {
        let feature = try TestSupport.onlyFeature(#""description": "\uD83D\uDE80""#)
        #expect(feature.description == "🚀")
    }

    @Test("A 1 MB name, a 1 MB key and a 1 MB value are read, rendered and read back whole")
    func megabyteStrings() throws {
        let long = String(repeating: "é", count: 500_000)
        let text = #"{"features": [{"name": ""# + long + #"", ""# + long + #"": ""# + long + #""}]}"#
        let feature = try #require(TestSupport.decode(text).document?.features.only)
        #expect(feature.name == long)
        #expect(feature.unknownKeys[long] == .string(long))
        let document = FeaturesDocument(features: [feature])
        #expect(DocumentDecoder.decode(document.rendered()).document == document)
    }

    // MARK: Duplicates

    @Test("A duplicate key is refused at the second one, naming where the first is")
    func duplicateKeys() throws {
        let text = "{\"features\": [{\"name\": \"a\",\n  \"enabled\": true,\n  \"enabled\": false}]}"
        let diagnostic = try #require(TestSupport.decode(text).diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.location == Position(line: 3, column: 3))
        #expect(diagnostic.fix.contains("2:3"))
    }

    @Test("Duplicate feature names keep the first and warn at each other one, also among thousands")
    func duplicateNames() throws {
        let features = (0..<5_000).map { #"{"name": "same", "enabled": \#($0 == 0)}"# }.joined(separator: ",")
        let decoded = TestSupport.decode(#"{"features": ["# + features + "]}")
        let document = try #require(decoded.document)
        #expect(document.features.map(\.enabled) == [true])
        #expect(decoded.diagnostics.allSatisfy { $0.code == .duplicateName })
        // Listed up to the cap, the rest counted in one more at the first left out.
        #expect(decoded.diagnostics.count == 101)
        #expect(decoded.diagnostics.last?.message.contains("4898 more W220") == true)
        #expect(decoded.diagnostics.last?.pointer.description == "/features/101")
    }

    // MARK: Nesting

    @Test("Nesting at the depth limit is read, rendered, compared and read back; one level more is refused")
    func nestingAtTheLimit() throws {
        // The document and the features array and the feature are three levels.
        let allowed = JSONParser.maximumDepth - 3
        for (depth, isValid) in [(allowed, true), (allowed + 1, false)] {
            let deep = String(repeating: "[", count: depth) + "-0" + String(repeating: "]", count: depth)
            let decoded = TestSupport.decode(TestSupport.document(feature: #""deep": "# + deep))
            #expect(decoded.isValid == isValid)
            guard let document = decoded.document else { continue }
            let rendered = document.rendered()
            let again = try #require(DocumentDecoder.decode(rendered).document)
            #expect(again == document)
            #expect(again.hashValue == document.hashValue)
            #expect(again.rendered(.compact) == document.rendered(.compact))
        }
    }

    @Test("Arrays where a bias or a name should be are E112 at the element, however deep")
    func deepArraysInBiases() throws {
        let deep = String(repeating: "[", count: 400) + "50" + String(repeating: "]", count: 400)
        let decoded = TestSupport.decode(
            TestSupport.document(feature: #""test-variations": ["A", [["B"]]], "test-biases": ["# + deep + ", 50]"))
        #expect(decoded.diagnostics.map(\.code) == [.wrongType, .wrongType])
        #expect(
            decoded.diagnostics.map(\.pointer.description) == [
                "/features/0/test-variations/1", "/features/0/test-biases/0",
            ])
    }

    // MARK: Many problems

    @Test(
        "Hundreds of thousands of problems in a small file are listed up to a cap per code, then counted",
        arguments: [
            "[" + Array(repeating: "1", count: 200_000).joined(separator: ",") + "]",
            #"[{"name": "t", "test-variations": ["A", "B"], "test-biases": ["#
                + Array(repeating: "101", count: 200_000).joined(separator: ",") + "]}]",
            "[" + Array(repeating: #"{"name": 1, "enabled": "yes"}"#, count: 50_000).joined(separator: ",") + "]",
        ])
    func manyProblemsOnOneLine(text: String) throws {
        let diagnostics = TestSupport.decode(text).diagnostics
        let capped = Set(diagnostics.map(\.code)).filter { code in diagnostics.filter { $0.code == code }.count > 100 }
        #expect(!capped.isEmpty)
        for code in Set(diagnostics.map(\.code)) {
            let listed = diagnostics.filter { $0.code == code }
            #expect(listed.count <= 101)
            #expect(listed.allSatisfy { $0.location?.line == 1 })
            guard capped.contains(code) else { continue }
            // In file order, each at its own column of the one line, then the count of the rest.
            let columns = listed.dropLast().map { $0.location?.column ?? 0 }
            #expect(columns == columns.sorted() && Set(columns).count == columns.count)
            #expect(listed.last?.message.contains("more \(code.rawValue) problems are not listed") == true)
        }
    }

    @Test("A feature with many keys and a warning per bias is linted in one pass over its keys")
    func manyKeysAndManyWarnings() throws {
        let keys = (0..<30_000).map { #""k\#($0)": 0"# }.joined(separator: ", ")
        let biases = Array(repeating: "101", count: 30_000).joined(separator: ", ")
        let decoded = TestSupport.decode(
            TestSupport.document(
                feature: #""test-variations": ["A", "B"], "# + keys + #", "test-biases": ["# + biases + "]"))
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.filter { $0.code == .biasClamped }.count == 101)
    }
}
