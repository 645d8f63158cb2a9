import FlagpoleCore
import Testing

/// FORMAT.md §7: every diagnostic names its code, severity, feature, pointer, line, column,
/// message and fix, and every problem is reported.
@Suite("Diagnostics (FORMAT §7)")
struct DiagnosticTests {
    @Test("The codes and severities are the table of FORMAT §7, plus the store's own E114")
    func codeTable() {
        // E114 (U+0000 in a stored string) is the store's limit, not a client rule.
        let errors = ["E100", "E101", "E102", "E110", "E111", "E112", "E113", "E114"]
        let warnings = [
            "W200", "W201", "W202", "W203", "W204", "W210", "W220", "W230", "W231", "W232", "W240",
            "W250", "W251", "W252",
        ]
        #expect(Set(DiagnosticCode.allCases.map(\.rawValue)) == Set(errors + warnings))
        for code in DiagnosticCode.allCases {
            #expect(code.severity == (errors.contains(code.rawValue) ? .error : .warning), "\(code)")
        }
    }

    @Test("Every problem of a document is reported with its feature, pointer, line and column")
    func everyProblem() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {
                "features": [
                    {"name": "ok", "enabled": true},
                    {"name": "bad", "enabled": ‸1, "test-biases": [‸"50"]},
                    {"name": "warn", "test-variations": ["A", "B"], "test-biases": ‸[50, ‸-5]},
                    ‸{"name": "ok"},
                    ‸7,
                    {"name": "x", "type": ‸"ab"}
                ]
            }
            """#)
        #expect(decoded.document == nil)
        #expect(!decoded.isValid)
        #expect(decoded.diagnostics.hasErrors)
        // Positions computed by hand: line 4 is `        {"name": "bad", "enabled": 1, ...`.
        #expect(
            marks == [
                Position(line: 4, column: 36), Position(line: 4, column: 55),
                Position(line: 5, column: 72), Position(line: 5, column: 77),
                Position(line: 6, column: 9), Position(line: 7, column: 9), Position(line: 8, column: 31),
            ])
        struct Expected: Hashable {
            var code: String, severity: Severity, feature: String?, pointer: String, line: Int, column: Int
        }
        let expected: Set<Expected> = [
            Expected(
                code: "E112", severity: .error, feature: "bad", pointer: "/features/1/enabled", line: 4, column: 36),
            Expected(
                code: "E112", severity: .error, feature: "bad", pointer: "/features/1/test-biases/0", line: 4,
                column: 55),
            Expected(
                code: "W201", severity: .warning, feature: "warn", pointer: "/features/2/test-biases", line: 5,
                column: 72),
            Expected(
                code: "W203", severity: .warning, feature: "warn", pointer: "/features/2/test-biases/1", line: 5,
                column: 77),
            Expected(code: "W220", severity: .warning, feature: "ok", pointer: "/features/3", line: 6, column: 9),
            Expected(code: "E110", severity: .error, feature: nil, pointer: "/features/4", line: 7, column: 9),
            Expected(code: "E113", severity: .error, feature: "x", pointer: "/features/5/type", line: 8, column: 31),
        ]
        let actual = decoded.diagnostics.map {
            Expected(
                code: $0.code.rawValue, severity: $0.severity, feature: $0.feature, pointer: $0.pointer.description,
                line: $0.location?.line ?? 0, column: $0.location?.column ?? 0)
        }
        #expect(actual.count == expected.count)
        #expect(Set(actual) == expected)
        #expect(decoded.diagnostics.allSatisfy { !$0.message.isEmpty && !$0.fix.isEmpty })
        #expect(decoded.diagnostics.errors.count == 4)
        #expect(decoded.diagnostics.warnings.count == 3)
    }

    @Test("Warnings are reported next to errors")
    func warningsWithErrors() {
        let decoded = TestSupport.decode(
            #"""
            {"features": [{"name": "a", "enabled": "no"}, {"name": "b", "test-variations": ["X"]}]}
            """#)
        #expect(decoded.document == nil)
        #expect(TestSupport.codes(decoded.diagnostics) == ["E112", "W230"])
    }

    @Test("A document with only warnings is valid and decoded")
    func warningsOnly() throws {
        let decoded = TestSupport.decode(#"{"features": [{"name": "b", "test-variations": ["X"]}]}"#)
        #expect(decoded.isValid)
        #expect(!decoded.diagnostics.hasErrors)
        #expect(decoded.diagnostics.warnings.count == 1)
        #expect(decoded.document?.features.map(\.name) == ["b"])
    }

    static let corpus: [Input] = [
        Input(
            #"""
            {"features": [
              {"name": "a", "enabled": "yes", "development": 1, "unlocked": "no", "description": 3, "section": false},
              {"name": "b", "test-variations": ["A", null, 3], "test-biases": ["x", 1], "labels": [true]},
              {"name": "c", "type": {}}, {"name": "d", "type": "ab"}, {"name": "e", "type": {"unlock-flag": true}},
              {"name": "f", "type": {"feature-test": "nope"}}, {"name": "g", "type": {"feature-flag": 2}},
              {"enabled": true}, {"name": null}, {"name": 42}, 17, null, [],
              {"name": "h", "test-variation-assignment": "x"}
            ]}
            """#),
        Input(
            #"""
            {
                "before": {"x": [1, 2]},
                "features": [
                    {"name": "s", "test-variations": ["A", "B"], "test-biases": [50, 49]},
                    {"name": "m", "test-variations": ["A", "B", "C"], "test-biases": [50, 50]},
                    {"name": "o", "test-variations": ["A", "B", "C"], "test-biases": [50, 50, 50]},
                    {"name": "k", "test-variations": ["A", "B"], "test-biases": [-1, 101]},
                    {"name": "p", "test-biases": [50, 50]},
                    {"name": "l", "test-variations": ["A", "B"], "labels": ["x"]},
                    {"name": "s"},
                    {"name": "one", "test-variations": ["X"]},
                    {"name": "t", "test-variations": ["A", "B"], "type": {"feature-test": "mvt"}, "unlocked": true},
                    {"name": "w", "test-variation-assignment": 12}
                ]
            }
            """#),
        Input(#"[{"name": "a/b~c", "enabled": 1}, {"name": "ü", "test-variations": ["X"]}, 5]"#),
        Input(#"{"features": {"name": "a"}}"#),
        Input(#"{"features": null}"#),
        Input(#"{"other": []}"#),
        Input(#"["#),
    ]

    @Test("The line and column of a diagnostic are where its pointer leads", arguments: corpus)
    func locationMatchesPointer(input: Input) throws {
        let bytes = Array(input.text.utf8)
        let decoded = DocumentDecoder.decode(bytes)
        #expect(!decoded.diagnostics.isEmpty)
        let locator = SourceLocator(bytes)
        for diagnostic in decoded.diagnostics {
            #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty, "\(diagnostic.code)")
            let location = try #require(diagnostic.location, "\(diagnostic.code) has no location")
            if diagnostic.code == .notStrictJSON {
                #expect(diagnostic.pointer == .root)
                continue
            }
            let offset = try TestSupport.offset(of: diagnostic.pointer, in: bytes)
            #expect(location == locator.location(of: offset), "\(diagnostic.code) \(diagnostic.pointer)")
        }
    }

    @Test("The corpus reports every problem, not just the first")
    func corpusCounts() {
        let first = TestSupport.decode(Self.corpus[0].text)
        #expect(
            TestSupport.codes(first.diagnostics) == [
                "E110", "E110", "E110",
                "E111", "E111", "E111",
                "E112", "E112", "E112", "E112", "E112",  // a: five wrong keys
                "E112", "E112", "E112", "E112",  // b: null and 3, "x" and true
                "E112",  // h: the assignment as a string
                "E113", "E113", "E113", "E113", "E113",
            ])
        let second = TestSupport.decode(Self.corpus[1].text)
        #expect(second.isValid)
        #expect(
            TestSupport.codes(second.diagnostics) == [
                "W200", "W201", "W202", "W203", "W203", "W204", "W210", "W220", "W230", "W231", "W232", "W240",
            ])
        #expect(second.document?.features.map(\.name) == ["s", "m", "o", "k", "p", "l", "one", "t", "w"])
    }

    @Test("Diagnostics for a name with / and ~ escape the pointer only, not the feature")
    func pointerEscaping() throws {
        let decoded = TestSupport.decode(#"[{"name": "a/b~c", "enabled": 1}]"#)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.feature == "a/b~c")
        #expect(diagnostic.pointer.description == "/0/enabled")
    }

    @Test("JSON pointers follow RFC 6901")
    func jsonPointer() {
        #expect(JSONPointer.root.description == "")
        #expect(
            JSONPointer.root.appending("features").appending(2).appending("test-biases").appending(1).description
                == "/features/2/test-biases/1")
        #expect(JSONPointer.root.appending("a/b").appending("m~n").appending("").description == "/a~1b/m~0n/")
        #expect(JSONPointer.root.appending("~1").description == "/~01")
    }

    @Test("The JSON shape of a diagnostic has every field")
    func jsonShape() throws {
        let (decoded, _) = TestSupport.decodeMarked("{\"features\": [\n  {\"name\": \"n\", \"enabled\": \"yes\"}\n]}")
        let diagnostic = try #require(decoded.diagnostics.only)
        guard case .object(let object) = diagnostic.jsonValue else {
            Issue.record("not an object: \(diagnostic.jsonValue)")
            return
        }
        #expect(Set(object.keys) == ["severity", "code", "message", "feature", "pointer", "line", "column", "fix"])
        #expect(object["severity"] == .string("error"))
        #expect(object["code"] == .string("E112"))
        #expect(object["feature"] == .string("n"))
        #expect(object["pointer"] == .string("/features/0/enabled"))
        #expect(object["line"] == .number(2))
        #expect(object["column"] == .number(28))
        #expect(object["message"] == .string(diagnostic.message))
        #expect(object["fix"] == .string(diagnostic.fix))
    }

    @Test("Source locations count lines from 1 and columns in characters")
    func sourceLocator() {
        let bytes = Array("ab\ncé\n\nx".utf8)
        let locator = SourceLocator(bytes)
        #expect(locator.location(of: 0) == Position(line: 1, column: 1))
        #expect(locator.location(of: 2) == Position(line: 1, column: 3))
        #expect(locator.location(of: 3) == Position(line: 2, column: 1))
        #expect(locator.location(of: 6) == Position(line: 2, column: 3))  // after the two bytes of é
        #expect(locator.location(of: 7) == Position(line: 3, column: 1))
        #expect(locator.location(of: 8) == Position(line: 4, column: 1))
        #expect(locator.location(of: 9) == Position(line: 4, column: 2))  // the end of the file
        #expect(Position(line: 3, column: 7).description == "3:7")
    }
}
