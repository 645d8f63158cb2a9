import FlagpoleCore
import Testing

/// FORMAT.md §2: the keys of a feature object, their JSON types and defaults (E110–E113, W240).
@Suite("Feature keys (FORMAT §2)")
struct FeatureKeyTests {
    @Test("Every known key is read as written")
    func everyKey() throws {
        let feature = try TestSupport.onlyFeature(
            #"""
            "description": "D", "section": "S", "development": false, "enabled": true, "unlocked": false,
            "type": {"feature-test": "mvt"}, "test-variations": ["A", "B", "C"], "test-biases": [20, 30.5, 49.5],
            "labels": ["la", null, "lc"]
            """#)
        #expect(feature.name == "f")
        #expect(feature.description == "D")
        #expect(feature.section == "S")
        #expect(feature.development == false)
        #expect(feature.enabled == true)
        #expect(feature.unlocked == false)
        #expect(feature.type == ["feature-test": .string("mvt")])
        #expect(feature.testVariations == ["A", "B", "C"])
        #expect(feature.testBiases == [20, 30.5, 49.5])
        #expect(feature.labels == ["la", nil, "lc"])
        #expect(feature.unknownKeys.isEmpty)
    }

    // MARK: name

    @Test("An empty name is accepted")
    func emptyName() throws {
        let decoded = TestSupport.decode(#"{"features": [{"name": ""}]}"#)
        #expect(decoded.diagnostics.isEmpty)
        #expect(decoded.document?.features.map(\.name) == [""])
    }

    @Test("Names are exact and case-sensitive")
    func caseSensitiveNames() throws {
        let decoded = TestSupport.decode(
            #"{"features": [{"name": "Dark Mode"}, {"name": "dark mode"}, {"name": " Dark Mode"}]}"#)
        #expect(decoded.diagnostics.isEmpty)
        let document = try #require(decoded.document)
        #expect(document.features.count == 3)
        #expect(document.feature(named: "dark mode")?.name == "dark mode")
        #expect(document.feature(named: "DARK MODE") == nil)
    }

    @Test(
        "A name that is missing, null or not a string is E111",
        arguments: [
            Input(#"{"features": [‸{"enabled": true}]}"#),
            Input(#"{"features": [‸{}]}"#),
            Input(#"{"features": [{"name": ‸null, "enabled": true}]}"#),
            Input(#"{"features": [{"name": ‸1}]}"#),
            Input(#"{"features": [{"name": ‸true}]}"#),
            Input(#"{"features": [{"name": ‸["a"]}]}"#),
            Input(#"{"features": [{"name": ‸{"en": "a"}}]}"#),
            Input(#"{"features": [‸{"Name": "a", "NAME": "a", "name ": "a"}]}"#),
        ])
    func missingName(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(input.text)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .missingName)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.pointer.description == "/features/0/name")
        #expect(diagnostic.feature == nil)
        #expect(diagnostic.location == marks.first)
    }

    // MARK: wrong JSON types

    /// The prefix `{"features": [{"name": "f", ` is 28 characters: markers count from there.
    @Test(
        "A known key with the wrong JSON type is E112 at the value or the bad element",
        arguments: [
            // Bools: 1 and "true" are not bools.
            Input(#""development": ‸1"#),
            Input(#""development": ‸"true""#),
            Input(#""enabled": ‸1"#),
            Input(#""enabled": ‸0"#),
            Input(#""enabled": ‸"true""#),
            Input(#""enabled": ‸"false""#),
            Input(#""enabled": ‸[]"#),
            Input(#""unlocked": ‸"false""#),
            Input(#""unlocked": ‸0"#),
            // Strings.
            Input(#""description": ‸1"#),
            Input(#""description": ‸false"#),
            Input(#""section": ‸true"#),
            Input(#""section": ‸["S"]"#),
            // test-variations: an array of strings, no null and no other element.
            Input(#""test-variations": ‸"A""#),
            Input(#""test-variations": ‸{"A": 1}"#),
            Input(#""test-variations": [‸null]"#),
            Input(#""test-variations": ["A", ‸null, "C"]"#),
            Input(#""test-variations": ["A", ‸1]"#),
            Input(#""test-variations": [‸true, ‸["B"]]"#),
            // test-biases: an array of numbers.
            Input(#""test-variations": ["A", "B"], "test-biases": ‸"50,50""#),
            Input(#""test-variations": ["A", "B"], "test-biases": ‸50"#),
            Input(#""test-variations": ["A", "B"], "test-biases": [‸"50", ‸"50"]"#),
            Input(#""test-variations": ["A", "B"], "test-biases": [50, ‸null]"#),
            Input(#""test-variations": ["A", "B"], "test-biases": [‸true, 50]"#),
            // labels: an array of strings or nulls.
            Input(#""labels": ‸"a""#),
            Input(#""labels": [‸1]"#),
            Input(#""labels": ["a", null, ‸2]"#),
            Input(#""labels": [‸false, ‸{}]"#),
            // test-variation-assignment: a number.
            Input(#""test-variation-assignment": ‸"50""#),
            Input(#""test-variation-assignment": ‸true"#),
        ])
    func wrongType(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(TestSupport.document(feature: input.text))
        #expect(decoded.document == nil)
        let errors = decoded.diagnostics.errors
        #expect(errors.count == marks.count)
        #expect(errors.allSatisfy { $0.code == .wrongType && $0.severity == .error })
        #expect(errors.allSatisfy { $0.feature == "f" })
        #expect(errors.map(\.location) == marks.map(Optional.some))
        #expect(errors.allSatisfy { $0.pointer.description.hasPrefix("/features/0/") })
        #expect(errors.allSatisfy { !$0.message.isEmpty && !$0.fix.isEmpty })
    }

    @Test(
        "E112 pointers name the key, and the element of an array",
        arguments: [
            (#""enabled": "true""#, ["/features/0/enabled"]),
            (#""development": 1"#, ["/features/0/development"]),
            (#""test-variations": ["A", null]"#, ["/features/0/test-variations/1"]),
            (#""test-variations": ["A", "B"], "test-biases": ["50", 50]"#, ["/features/0/test-biases/0"]),
            (#""labels": [null, 3, "c", 4]"#, ["/features/0/labels/1", "/features/0/labels/3"]),
            (#""labels": "abc""#, ["/features/0/labels"]),
            (#""test-variation-assignment": "1""#, ["/features/0/test-variation-assignment"]),
        ])
    func wrongTypePointers(members: String, pointers: [String]) {
        let decoded = TestSupport.decode(TestSupport.document(feature: members))
        #expect(decoded.diagnostics.map(\.code) == Array(repeating: .wrongType, count: pointers.count))
        #expect(decoded.diagnostics.map(\.pointer.description) == pointers)
    }

    @Test("The feature name is reported even when it is written after the bad key")
    func nameAfterBadKey() throws {
        let decoded = TestSupport.decode(#"{"features": [{"enabled": "yes", "name": "late"}]}"#)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .wrongType)
        #expect(diagnostic.feature == "late")
    }

    @Test("Every bad key of one feature is reported, not only the first")
    func everyBadKey() {
        let decoded = TestSupport.decode(
            #"""
            {"features": [{"name": 7, "enabled": "x", "test-variations": [null], "type": "ab", "labels": [1]}]}
            """#)
        #expect(TestSupport.codes(decoded.diagnostics) == ["E111", "E112", "E112", "E112", "E113"])
        #expect(decoded.document == nil)
    }

    @Test(
        "A feature that is not an object is E110",
        arguments: [
            Input(#"{"features": [‸"a"]}"#),
            Input(#"{"features": [‸1]}"#),
            Input(#"{"features": [‸null]}"#),
            Input(#"{"features": [‸true]}"#),
            Input(#"{"features": [‸[{"name": "a"}]]}"#),
            Input(#"{"features": [{"name": "a"}, ‸"b", {"name": "c"}, ‸3]}"#),
            Input(#"[‸"a"]"#),
        ])
    func featureNotAnObject(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(input.text)
        #expect(decoded.document == nil)
        #expect(decoded.diagnostics.map(\.code) == Array(repeating: .featureNotAnObject, count: marks.count))
        #expect(decoded.diagnostics.map(\.location) == marks.map(Optional.some))
        #expect(decoded.diagnostics.allSatisfy { $0.severity == .error && $0.feature == nil })
    }

    @Test("E110 pointers index the features array, or the root array")
    func featureNotAnObjectPointers() {
        let object = TestSupport.decode(#"{"features": [{"name": "a"}, "b", {"name": "c"}, 3]}"#)
        #expect(object.diagnostics.map(\.pointer.description) == ["/features/1", "/features/3"])
        let array = TestSupport.decode(#"[{"name": "a"}, null]"#)
        #expect(array.diagnostics.map(\.pointer.description) == ["/1"])
    }

    @Test("Diagnostics of a bare array document point from the root")
    func bareArrayPointers() {
        let decoded = TestSupport.decode(#"[{"name": "a"}, {"enabled": true}, {"name": "c", "enabled": 1}]"#)
        #expect(decoded.diagnostics.map(\.pointer.description) == ["/1/name", "/2/enabled"])
        #expect(decoded.diagnostics.map(\.code) == [.missingName, .wrongType])
    }

    // MARK: null and absent

    @Test("null for any optional key is the same as absent")
    func nullIsAbsent() throws {
        let nulls = TestSupport.decode(
            #"""
            {"features": [{"name": "f", "description": null, "section": null, "development": null, "enabled": null,
            "unlocked": null, "type": null, "test-variations": null, "test-biases": null, "labels": null,
            "test-variation-assignment": null}]}
            """#)
        #expect(nulls.diagnostics.isEmpty)
        let feature = try #require(nulls.document?.features.only)
        let absent = try #require(TestSupport.decode(#"{"features": [{"name": "f"}]}"#).document?.features.only)
        #expect(feature == absent)
        #expect(feature == Feature(name: "f"))
        #expect(feature.kind == .flag)
        #expect(feature.isEnabled == false)
        #expect(feature.effectiveVariations == ["Enabled", "Disabled"])
    }

    @Test("A null unlocked does not make an unlock flag")
    func nullUnlocked() throws {
        let feature = try TestSupport.onlyFeature(#""unlocked": null, "enabled": true"#)
        #expect(feature.kind == .flag)
    }

    // MARK: unknown keys

    @Test("Unknown keys are kept, with their values, in their order")
    func unknownKeys() throws {
        let decoded = TestSupport.decode(
            #"""
            {"features": [{"zeta": 1, "name": "f", "alpha": {"b": [1, 2], "a": null}, "enabled": true, "Name": "x",
            "mid": null, "test_variations": ["A"], "enabled ": "yes"}]}
            """#)
        #expect(decoded.diagnostics.isEmpty)
        let feature = try #require(decoded.document?.features.only)
        #expect(feature.unknownKeys.keys == ["zeta", "alpha", "Name", "mid", "test_variations", "enabled "])
        #expect(feature.unknownKeys["zeta"] == .number(1))
        #expect(feature.unknownKeys["alpha"] == .object(["b": .array([.number(1), .number(2)]), "a": .null]))
        #expect(feature.unknownKeys["mid"] == .null)
        #expect(feature.unknownKeys["test_variations"] == .array([.string("A")]))
        // Look-alike keys are not the known ones.
        #expect(feature.enabled == true)
        #expect(feature.testVariations == nil)
    }

    // MARK: test-variation-assignment

    @Test("test-variation-assignment is dropped with W240 at its value")
    func assignmentDropped() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {"features": [{"name": "f", "test-variations": ["A", "B"], "test-variation-assignment": ‸42.5, "x": 1}]}
            """#)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .assignmentDropped)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.feature == "f")
        #expect(diagnostic.pointer.description == "/features/0/test-variation-assignment")
        #expect(diagnostic.location == marks.first)
        let document = try #require(decoded.document)
        let feature = try #require(document.features.only)
        #expect(feature.unknownKeys.keys == ["x"])
        #expect(feature.jsonObject[Feature.assignmentKey] == nil)
        let rendered = String(decoding: document.rendered(), as: UTF8.self)
        #expect(!rendered.contains("test-variation-assignment"))
        #expect(!rendered.contains("42.5"))
    }
}
