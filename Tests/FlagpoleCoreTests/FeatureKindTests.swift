import FlagpoleCore
import Testing

/// FORMAT.md §3: the kind of a feature, its stored variations and its enabled default.
@Suite("Kinds (FORMAT §3)")
struct FeatureKindTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var members: String
        var kind: FeatureKind
        var variations: [String]
        var isEnabled: Bool
        var warnings: [DiagnosticCode] = []

        var testDescription: String { members.isEmpty ? "(name only)" : members }
    }

    static let cases: [Case] = [
        // No variations: Enabled/Disabled, disabled by default, a flag.
        Case(members: "", kind: .flag, variations: ["Enabled", "Disabled"], isEnabled: false),
        Case(members: #""test-variations": null"#, kind: .flag, variations: ["Enabled", "Disabled"], isEnabled: false),
        Case(members: #""test-variations": []"#, kind: .flag, variations: ["Enabled", "Disabled"], isEnabled: false),
        Case(members: #""enabled": true"#, kind: .flag, variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(members: #""enabled": false"#, kind: .flag, variations: ["Enabled", "Disabled"], isEnabled: false),
        // One variation: X and a synthetic !X, still a flag, disabled by default.
        Case(
            members: #""test-variations": ["X"]"#, kind: .flag, variations: ["X", "!X"], isEnabled: false,
            warnings: [.singleVariation]),
        Case(
            members: #""test-variations": ["New Checkout"], "enabled": true"#, kind: .flag,
            variations: ["New Checkout", "!New Checkout"], isEnabled: true, warnings: [.singleVariation]),
        // Two variations: the Enabled/Disabled pair in any order or case is an on/off test.
        Case(
            members: #""test-variations": ["Enabled", "Disabled"]"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["Disabled", "Enabled"]"#, kind: .onOffABTest,
            variations: ["Disabled", "Enabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["enabled", "disabled"]"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["disabled", "ENABLED"]"#, kind: .onOffABTest,
            variations: ["Disabled", "ENABLED"], isEnabled: true),
        Case(
            members: #""test-variations": ["eNaBlEd", "DiSaBlEd"]"#, kind: .onOffABTest,
            variations: ["eNaBlEd", "DiSaBlEd"], isEnabled: true),
        Case(
            members: #""test-variations": ["on", "off"]"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["off", "on"]"#, kind: .onOffABTest,
            variations: ["Disabled", "Enabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["enabled", "disabled"], "enabled": false"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: false),
        // Two variations, anything else: an A/B test, enabled by default.
        Case(members: #""test-variations": ["On", "Off"]"#, kind: .abTest, variations: ["On", "Off"], isEnabled: true),
        Case(members: #""test-variations": ["A", "B"]"#, kind: .abTest, variations: ["A", "B"], isEnabled: true),
        Case(
            members: #""test-variations": ["Enabled", "B"]"#, kind: .abTest, variations: ["Enabled", "B"],
            isEnabled: true),
        Case(
            members: #""test-variations": ["Enabled", "Enabled"]"#, kind: .abTest,
            variations: ["Enabled", "Enabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["A", "B"], "enabled": false"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: false),
        // Three or more: MVT, order kept.
        Case(
            members: #""test-variations": ["C", "A", "B"]"#, kind: .mvtTest, variations: ["C", "A", "B"],
            isEnabled: true),
        Case(
            members: #""test-variations": ["Enabled", "Disabled", "Other"]"#, kind: .mvtTest,
            variations: ["Enabled", "Disabled", "Other"], isEnabled: true),
        Case(
            members: #""test-variations": ["A", "B", "C", "D", "E", "F"], "enabled": false"#, kind: .mvtTest,
            variations: ["A", "B", "C", "D", "E", "F"], isEnabled: false),
        // type overrides the kind with 0, 1 or 3+ variations...
        Case(
            members: #""type": {"feature-test": "ab"}"#, kind: .abTest, variations: ["Enabled", "Disabled"],
            isEnabled: false),
        Case(
            members: #""type": {"feature-test": "featureFlagAB"}"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: false),
        Case(
            members: #""type": {"feature-test": "mvt"}"#, kind: .mvtTest, variations: ["Enabled", "Disabled"],
            isEnabled: false),
        Case(
            members: #""type": {"feature-flag": "anything"}"#, kind: .flag, variations: ["Enabled", "Disabled"],
            isEnabled: false),
        Case(
            members: #""type": {"feature-flag": ""}, "enabled": true"#, kind: .flag,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""test-variations": ["X"], "type": {"feature-test": "ab"}"#, kind: .abTest,
            variations: ["X", "!X"], isEnabled: false, warnings: [.singleVariation]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "type": {"feature-flag": "flag"}"#, kind: .flag,
            variations: ["A", "B", "C"], isEnabled: true),
        Case(
            members: #""test-variations": ["A", "B", "C"], "type": {"feature-test": "ab"}"#, kind: .abTest,
            variations: ["A", "B", "C"], isEnabled: true),
        Case(
            members: #""test-variations": ["A", "B", "C"], "type": {"feature-test": "featureFlagAB"}"#,
            kind: .onOffABTest,
            variations: ["A", "B", "C"], isEnabled: true),
        // ...and is ignored with exactly two (W231).
        Case(
            members: #""test-variations": ["A", "B"], "type": {"feature-flag": "flag"}"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true, warnings: [.typeIgnored]),
        Case(
            members: #""test-variations": ["A", "B"], "type": {"feature-test": "mvt"}"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true, warnings: [.typeIgnored]),
        Case(
            members: #""test-variations": ["Enabled", "Disabled"], "type": {"feature-test": "ab"}"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true, warnings: [.typeIgnored]),
        Case(
            members: #""test-variations": ["A", "B"], "type": {"feature-test": "featureFlagAB"}"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true, warnings: [.typeIgnored]),
        // unlocked makes an unlock flag, except with exactly two variations (W232).
        Case(members: #""unlocked": false"#, kind: .unlockFlag, variations: ["Enabled", "Disabled"], isEnabled: false),
        Case(
            members: #""unlocked": true, "enabled": true"#, kind: .unlockFlag,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""unlocked": true, "test-variations": ["X"]"#, kind: .unlockFlag,
            variations: ["X", "!X"], isEnabled: false, warnings: [.singleVariation]),
        Case(
            members: #""unlocked": false, "test-variations": ["A", "B", "C"]"#, kind: .unlockFlag,
            variations: ["A", "B", "C"], isEnabled: true),
        Case(
            members: #""unlocked": true, "test-variations": ["A", "B"]"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true, warnings: [.unlockedIgnored]),
        Case(
            members: #""unlocked": false, "test-variations": ["enabled", "disabled"]"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true, warnings: [.unlockedIgnored]),
        Case(
            members: #""unlocked": true, "type": {"feature-test": "ab"}, "test-variations": ["A", "B"]"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true, warnings: [.typeIgnored, .unlockedIgnored]),
        // development: true on a flag makes a development flag; tests stay tests.
        Case(
            members: #""development": true"#, kind: .developmentFlag, variations: ["Enabled", "Disabled"],
            isEnabled: false),
        Case(
            members: #""development": true, "enabled": true"#, kind: .developmentFlag,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""development": false, "enabled": true"#, kind: .flag, variations: ["Enabled", "Disabled"],
            isEnabled: true),
        Case(
            members: #""development": true, "test-variations": ["X"]"#, kind: .developmentFlag,
            variations: ["X", "!X"], isEnabled: false, warnings: [.singleVariation]),
        Case(
            members: #""development": true, "test-variations": ["A", "B", "C"], "type": {"feature-flag": "f"}"#,
            kind: .developmentFlag, variations: ["A", "B", "C"], isEnabled: true),
        Case(
            members: #""development": true, "test-variations": ["Enabled", "Disabled"]"#, kind: .onOffABTest,
            variations: ["Enabled", "Disabled"], isEnabled: true),
        Case(
            members: #""development": true, "test-variations": ["A", "B"]"#, kind: .abTest,
            variations: ["A", "B"], isEnabled: true),
        Case(
            members: #""development": true, "test-variations": ["A", "B", "C"]"#, kind: .mvtTest,
            variations: ["A", "B", "C"], isEnabled: true),
    ]

    @Test("Kind, stored variations and enabled default follow the table", arguments: cases)
    func kind(of testCase: Case) throws {
        let decoded = TestSupport.decode(TestSupport.document(feature: testCase.members))
        #expect(decoded.isValid)
        let feature = try #require(decoded.document?.features.only)
        #expect(feature.kind == testCase.kind)
        #expect(feature.effectiveVariations == testCase.variations)
        #expect(feature.isEnabled == testCase.isEnabled)
        #expect(decoded.diagnostics.map(\.code).sorted() == testCase.warnings.sorted())
    }

    @Test("Only test kinds split users", arguments: FeatureKind.allCases)
    func isTest(kind: FeatureKind) {
        let tests: Set<FeatureKind> = [.abTest, .onOffABTest, .mvtTest]
        #expect(kind.isTest == tests.contains(kind))
    }

    // MARK: Variation names

    @Test(
        "Only the exact lowercase spellings are normalised",
        arguments: [
            ("enabled", "Enabled"), ("on", "Enabled"), ("disabled", "Disabled"), ("off", "Disabled"),
            ("Enabled", "Enabled"), ("Disabled", "Disabled"),
            ("On", "On"), ("ON", "ON"), ("Off", "Off"), ("OFF", "OFF"), ("ENABLED", "ENABLED"),
            ("Disabled ", "Disabled "),
            (" on", " on"), ("true", "true"), ("yes", "yes"), ("", ""),
        ])
    func normalisation(written: String, stored: String) throws {
        #expect(Feature.normalizedVariation(written) == stored)
        let feature = try TestSupport.onlyFeature(
            #""test-variations": ["#
                + #""\#(written)", "Group B", "Group C"]"#)
        #expect(feature.effectiveVariations == [stored, "Group B", "Group C"])
        // The store keeps what was written; the normalisation is the client's reading.
        #expect(feature.testVariations == [written, "Group B", "Group C"])
    }

    @Test("One variation gets a synthetic !X second variation, with W230 at test-variations")
    func syntheticVariation() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {"features": [
                {"name": "Solo", "test-variations": ‸["My Variation"]}
            ]}
            """#)
        let feature = try #require(decoded.document?.features.only)
        #expect(feature.effectiveVariations == ["My Variation", "!My Variation"])
        #expect(feature.testVariations == ["My Variation"])
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .singleVariation)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.feature == "Solo")
        #expect(diagnostic.pointer.description == "/features/0/test-variations")
        #expect(diagnostic.location == marks.first)
        #expect(diagnostic.message.contains("!My Variation"))
    }

    @Test("W231 points at type and W232 at unlocked")
    func ignoredKeyLocations() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {"features": [
                {"name": "T", "type": ‸{"feature-test": "mvt"}, "test-variations": ["A", "B"]},
                {"name": "U", "test-variations": ["A", "B"], "unlocked": ‸false}
            ]}
            """#)
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.map(\.code) == [.typeIgnored, .unlockedIgnored])
        #expect(decoded.diagnostics.map(\.pointer.description) == ["/features/0/type", "/features/1/unlocked"])
        #expect(decoded.diagnostics.map(\.feature) == ["T", "U"])
        #expect(decoded.diagnostics.map(\.location) == marks.map(Optional.some))
        #expect(decoded.diagnostics.allSatisfy { $0.severity == .warning })
    }

    // MARK: E113

    @Test(
        "A type that is not one of the accepted objects is E113",
        arguments: [
            Input(#""type": ‸"ab""#),
            Input(#""type": ‸"feature-flag""#),
            Input(#""type": ‸{}"#),
            Input(#""type": ‸[]"#),
            Input(#""type": ‸1"#),
            Input(#""type": ‸true"#),
            Input(#""type": ‸{"unlock-flag": true}"#),
            Input(#""type": ‸{"unlock-flag": "unlock"}"#),
            Input(#""type": ‸{"featureFlag": "x"}"#),
            Input(#""type": ‸{"feature-flag": 1}"#),
            Input(#""type": ‸{"feature-flag": true}"#),
            Input(#""type": ‸{"feature-flag": null}"#),
            Input(#""type": ‸{"feature-flag": {}}"#),
            Input(#""type": ‸{"feature-test": "bogus"}"#),
            Input(#""type": ‸{"feature-test": "AB"}"#),
            Input(#""type": ‸{"feature-test": "MVT"}"#),
            Input(#""type": ‸{"feature-test": "featureflagab"}"#),
            Input(#""type": ‸{"feature-test": "feature-flag-ab"}"#),
            Input(#""type": ‸{"feature-test": 1}"#),
            Input(#""type": ‸{"feature-test": null}"#),
            Input(#""test-variations": ["A", "B", "C"], "type": ‸{"feature-test": "abc"}"#),
        ])
    func invalidType(input: Input) throws {
        let (clean, marks) = TestSupport.strippingMarkers(TestSupport.document(feature: input.text))
        let bytes = Array(clean.utf8)
        let decoded = DocumentDecoder.decode(bytes)
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .invalidTypeObject)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.feature == "f")
        #expect(diagnostic.pointer.description.hasPrefix("/features/0/type"))
        #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
        if diagnostic.pointer.description == "/features/0/type" {
            #expect(diagnostic.location == marks.first)
        }
        // Wherever the pointer leads, the line and column must be the same place.
        let offset = try TestSupport.offset(of: diagnostic.pointer, in: bytes)
        #expect(diagnostic.location == SourceLocator(bytes).location(of: offset))
    }
}
