import FlagpoleCore
import Testing

/// FORMAT.md §5–§7: what replacing the store's document with a file does to devices (W250–W252).
@Suite("Import review (W250–W252)")
struct ImportReviewTests {
    static func review(_ text: String, replacing current: [Feature]) -> (diagnostics: [Diagnostic], marks: [Position]) {
        let (decoded, marks) = TestSupport.decodeMarked(text)
        #expect(decoded.isValid, "\(decoded.diagnostics)")
        return (ImportReview.review(decoded, replacing: FeaturesDocument(features: current)), marks)
    }

    // MARK: W250

    @Test("A feature of the store that is absent from the file is W250, with no place in the file")
    func featureAbsent() throws {
        let (diagnostics, _) = Self.review(
            #"{"features": [{"name": "Keep"}]}"#,
            replacing: [Feature(name: "Old", enabled: true), Feature(name: "Keep")])
        let diagnostic = try #require(diagnostics.only)
        #expect(diagnostic.code == .featureAbsent)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.feature == "Old")
        #expect(diagnostic.pointer.description == "/features")
        #expect(diagnostic.location == nil)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
        #expect(diagnostic.fix.contains("\"enabled\": false"))
    }

    @Test("An empty file makes every feature of the store W250")
    func emptyFile() {
        let (diagnostics, _) = Self.review("[]", replacing: [Feature(name: "a"), Feature(name: "b")])
        #expect(diagnostics.map(\.code) == [.featureAbsent, .featureAbsent])
        #expect(Set(diagnostics.compactMap(\.feature)) == ["a", "b"])
        #expect(diagnostics.allSatisfy { $0.pointer == .root })
    }

    @Test("Absence compares names exactly")
    func absenceIsCaseSensitive() {
        let (diagnostics, _) = Self.review(
            #"{"features": [{"name": "feature"}]}"#, replacing: [Feature(name: "Feature")])
        #expect(diagnostics.map(\.code) == [.featureAbsent])
        #expect(diagnostics.map(\.feature) == ["Feature"])
    }

    // MARK: W251

    @Test(
        "A plain flag that becomes a test under the same name is W251 at test-variations",
        arguments: [
            (Feature(name: "F"), #""test-variations": ‸["A", "B"]"#),
            (Feature(name: "F", enabled: true), #""test-variations": ‸["Enabled", "Disabled"]"#),
            (
                Feature(name: "F", enabled: false, testVariations: []),
                #""test-variations": ‸["A", "B", "C"], "enabled": true"#
            ),
            (Feature(name: "F", development: true, enabled: true), #""test-variations": ‸["on", "off"]"#),
        ])
    func flagBecameTest(previous: Feature, members: String) throws {
        let (diagnostics, marks) = Self.review(
            #"{"features": [{"name": "F", "# + members + "}]}", replacing: [previous])
        let diagnostic = try #require(diagnostics.only)
        #expect(diagnostic.code == .flagBecameTest)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.feature == "F")
        #expect(diagnostic.pointer.description == "/features/0/test-variations")
        #expect(diagnostic.location == marks.first)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
    }

    @Test(
        "Changes that keep a flag a flag, or a test a test, are not W251",
        arguments: [
            (Feature(name: "F"), #""enabled": true"#),
            (Feature(name: "F", enabled: true), #""enabled": false, "description": "off now""#),
            (Feature(name: "F", testVariations: ["A", "B"]), #""test-variations": ["A", "B"], "enabled": false"#),
            (
                Feature(name: "F", testVariations: ["A", "B"]),
                #""test-variations": ["A", "B", "C"], "test-biases": [50, 30, 20]"#
            ),
            (Feature(name: "F", testVariations: ["A", "B"], testBiases: [50, 50]), ""),
        ])
    func notFlagBecameTest(previous: Feature, members: String) {
        let separator = members.isEmpty ? "" : ", "
        let (diagnostics, _) = Self.review(
            #"{"features": [{"name": "F""# + separator + members + "}]}", replacing: [previous])
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.code))")
    }

    // MARK: W252

    @Test("Re-ordered variations are W252 at test-variations")
    func reordered() throws {
        let (diagnostics, marks) = Self.review(
            #"""
            {"features": [
                {"name": "new one", "test-variations": ["A", "B"]},
                {"name": "T", "test-variations": ‸["B", "A"], "test-biases": [50, 50]}
            ]}
            """#, replacing: [Feature(name: "T", testVariations: ["A", "B"], testBiases: [50, 50])])
        let diagnostic = try #require(diagnostics.only)
        #expect(diagnostic.code == .needlessMoves)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.feature == "T")
        #expect(diagnostic.pointer.description == "/features/1/test-variations")
        #expect(diagnostic.location == marks.first)
    }

    @Test("A middle group change that moves more users than needed is W252 at test-biases")
    func middleGroup() throws {
        let (diagnostics, marks) = Self.review(
            #"""
            {"features": [
                {"name": "M", "test-variations": ["A", "B", "C"], "test-biases": ‸[30, 20, 50]}
            ]}
            """#, replacing: [Feature(name: "M", testVariations: ["A", "B", "C"], testBiases: [20, 20, 60])])
        let diagnostic = try #require(diagnostics.only)
        #expect(diagnostic.code == .needlessMoves)
        #expect(diagnostic.pointer.description == "/features/0/test-biases")
        #expect(diagnostic.location == marks.first)
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
    }

    @Test(
        "Bias changes that move only what they must are not W252",
        arguments: [
            (
                Feature(name: "T", testVariations: ["A", "B"], testBiases: [10, 90]),
                #""test-variations": ["A", "B"], "test-biases": [20, 80]"#
            ),
            (
                Feature(name: "T", testVariations: ["A", "B"], testBiases: [80, 20]),
                #""test-variations": ["A", "B"], "test-biases": [70, 30]"#
            ),
            (
                Feature(name: "T", testVariations: ["A", "B", "C"], testBiases: [40, 30, 30]),
                #""test-variations": ["A", "B", "C"], "test-biases": [40, 20, 40]"#
            ),
            (
                Feature(name: "T", testVariations: ["A", "B", "C"], testBiases: [30, 30, 40]),
                #""test-variations": ["A", "B", "C"], "test-biases": [40, 20, 40]"#
            ),
            // The client ignores [50, 49]: the split stays equal, nobody moves.
            (
                Feature(name: "T", testVariations: ["A", "B"], testBiases: [50, 50]),
                #""test-variations": ["A", "B"], "test-biases": [50, 49]"#
            ),
            // The client normalises enabled/disabled and compares names case-insensitively.
            (
                Feature(name: "T", testVariations: ["enabled", "disabled"]),
                #""test-variations": ["Enabled", "Disabled"]"#
            ),
            (
                Feature(name: "T", testVariations: ["Group A", "Group B"]),
                #""test-variations": ["group a", "GROUP B"]"#
            ),
        ])
    func noNeedlessMoves(previous: Feature, members: String) {
        let (diagnostics, _) = Self.review(#"{"features": [{"name": "T", "# + members + "}]}", replacing: [previous])
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.code))")
    }

    // MARK: Together

    @Test("All review warnings of one import are reported together")
    func together() {
        let (diagnostics, _) = Self.review(
            #"""
            {"features": [
                {"name": "flag", "test-variations": ["A", "B"]},
                {"name": "order", "test-variations": ["B", "A"]},
                {"name": "fresh", "test-variations": ["A", "B"]}
            ]}
            """#,
            replacing: [
                Feature(name: "flag", enabled: true),
                Feature(name: "order", testVariations: ["A", "B"]),
                Feature(name: "gone"),
            ])
        #expect(TestSupport.codes(diagnostics) == ["W250", "W251", "W252"])
        #expect(Set(diagnostics.compactMap(\.feature)) == ["flag", "order", "gone"])
    }

    @Test("The same document twice, or a file the client refuses, gives no review warning")
    func nothingToReview() throws {
        let text =
            #"{"features": [{"name": "a", "test-variations": ["A", "B"], "test-biases": [30, 70]}, {"name": "b"}]}"#
        let current = try #require(TestSupport.decode(text).document)
        #expect(ImportReview.review(TestSupport.decode(text), replacing: current).isEmpty)
        let invalid = TestSupport.decode(#"{"features": [{"name": "a", "enabled": 1}]}"#)
        #expect(ImportReview.review(invalid, replacing: current).isEmpty)
    }
}
