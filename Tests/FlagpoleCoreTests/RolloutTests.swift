import FlagpoleCore
import Testing

/// Finishing a test: `Feature.rolledOut(to:)` gives every user the winning variation.
@Suite("Roll-out of a test")
struct RolloutTests {
    /// Points on and around every bound a test below may have, and the extremes.
    static let points: [Double] = {
        var points = stride(from: 0.0, to: 100, by: 0.5).map { $0 }
        for bound in [10.0, 20, 30, 50, 70, 80, 90, 100.0 / 3, 200.0 / 3] {
            points += [bound.nextDown, bound, bound.nextUp]
        }
        return points + [100.nextDown]
    }()

    /// An on/off A/B test with every key a bare flag must lose.
    static func onOff(variations: [String] = ["Enabled", "Disabled"], enabled: Bool? = false) -> Feature {
        Feature(
            name: "f", description: "d", section: "s", development: true, enabled: enabled, unlocked: true,
            type: ["feature-test": .string("ab")], testVariations: variations, testBiases: [20, 80],
            labels: ["on", nil],
            unknownKeys: ["x-extra": .number(1)])
    }

    struct OnOff: Sendable, CustomTestStringConvertible {
        var feature: Feature
        var winner: String?
        var isEnabled: Bool
        var label: String

        var testDescription: String { label }
    }

    static let onOffCases: [OnOff] = [
        OnOff(feature: onOff(), winner: nil, isEnabled: true, label: "Enabled wins by default"),
        OnOff(feature: onOff(), winner: "Enabled", isEnabled: true, label: "Enabled named"),
        OnOff(feature: onOff(), winner: "ENABLED", isEnabled: true, label: "Enabled named in capitals"),
        OnOff(feature: onOff(), winner: "disabled", isEnabled: false, label: "Disabled named in lowercase"),
        OnOff(
            feature: onOff(enabled: true), winner: "Disabled", isEnabled: false, label: "an enabled test, Disabled wins"
        ),
        OnOff(
            feature: onOff(variations: ["Disabled", "Enabled"]), winner: nil, isEnabled: true,
            label: "Disabled first, Enabled by default"),
        OnOff(
            feature: onOff(variations: ["on", "off"]), winner: nil, isEnabled: true, label: "on/off spellings, default"),
        OnOff(
            feature: onOff(variations: ["on", "off"]), winner: "disabled", isEnabled: false,
            label: "on/off spellings, Disabled"),
        OnOff(
            feature: onOff(variations: ["ENABLED", "DISABLED"]), winner: nil, isEnabled: true,
            label: "capitalised variations, default"),
        OnOff(
            feature: onOff(variations: ["enabled", "Disabled"]), winner: "Enabled", isEnabled: true,
            label: "a normalised lowercase variation"),
        OnOff(
            feature: onOff(variations: ["ENABLED", "DISABLED"]), winner: "disabled", isEnabled: false,
            label: "capitalised variations, Disabled"),
    ]

    @Test("An on/off A/B test becomes a plain flag, enabled when Enabled wins", arguments: onOffCases)
    func onOffTest(testCase: OnOff) throws {
        #expect(testCase.feature.kind == .onOffABTest)
        let rolled = try testCase.feature.rolledOut(to: testCase.winner)
        let base = testCase.feature
        #expect(
            rolled
                == Feature(
                    name: base.name, description: base.description, section: base.section, enabled: testCase.isEnabled,
                    unknownKeys: base.unknownKeys))
        #expect(rolled.kind == .flag)
        #expect(!rolled.isBucketed)
        let group = testCase.isEnabled ? "Enabled" : "Disabled"
        #expect(Self.points.allSatisfy { rolled.variation(at: $0) == group })
    }

    @Test("An on/off test declared by its type alone becomes a plain flag")
    func onOffByType() throws {
        let feature = Feature(name: "f", type: ["feature-test": .string("featureFlagAB")])
        #expect(feature.kind == .onOffABTest)
        #expect(try feature.rolledOut(to: nil) == Feature(name: "f", enabled: true))
        #expect(try feature.rolledOut(to: "Disabled") == Feature(name: "f", enabled: false))
    }

    struct Winner: Sendable, CustomTestStringConvertible {
        var feature: Feature
        var winner: String
        var biases: [Double]
        /// The variation every user lands in, as the client stores its name.
        var variation: String
        var label: String

        var testDescription: String { label }
    }

    static let mvt = Feature(
        name: "m", description: "d", testVariations: ["A", "B", "C"], testBiases: [20, 30, 50],
        labels: ["a", nil, "c"],
        unknownKeys: ["x-extra": .bool(true)])

    static let winners: [Winner] = [
        Winner(feature: mvt, winner: "B", biases: [0, 100, 0], variation: "B", label: "an MVT's middle winner"),
        Winner(
            feature: mvt, winner: "b", biases: [0, 100, 0], variation: "B", label: "the winner matched ignoring case"),
        Winner(feature: mvt, winner: "A", biases: [100, 0, 0], variation: "A", label: "an MVT's first winner"),
        Winner(feature: mvt, winner: "c", biases: [0, 0, 100], variation: "C", label: "an MVT's last winner"),
        Winner(
            feature: Feature(name: "m", testVariations: ["A", "B", "C"], testBiases: [10, 10]), winner: "C",
            biases: [0, 0, 100], variation: "C", label: "biases the client ignored are replaced"),
        Winner(
            feature: Feature(name: "m", testVariations: ["A", "B", "C"], testBiases: [50, 50, 50]), winner: "C",
            biases: [0, 0, 100], variation: "C", label: "an unreachable group can win"),
        Winner(
            feature: Feature(name: "m", enabled: false, testVariations: ["A", "B", "C"]), winner: "B",
            biases: [0, 100, 0], variation: "B", label: "a disabled MVT is enabled"),
        Winner(
            feature: Feature(name: "t", testVariations: ["A", "B"], testBiases: [10, 90]), winner: "A",
            biases: [100, 0], variation: "A", label: "an A/B test"),
        Winner(
            feature: Feature(name: "t", enabled: false, testVariations: ["A", "B"]), winner: "b",
            biases: [0, 100], variation: "B", label: "a disabled A/B test is enabled"),
        Winner(
            feature: Feature(name: "t", type: ["feature-test": .string("ab")], testVariations: ["X"]), winner: "!x",
            biases: [0, 100], variation: "!X", label: "the synthetic variation of a one-variation test"),
        Winner(
            feature: Feature(name: "t", testVariations: ["off", "Maybe", "on"]), winner: "Enabled",
            biases: [0, 0, 100], variation: "Enabled", label: "normalised names in an MVT"),
        Winner(
            feature: Feature(name: "t", testVariations: ["A", "B", "a"]), winner: "a",
            biases: [100, 0, 0], variation: "A", label: "names equal ignoring case: the first wins"),
        Winner(
            feature: Feature(name: "t", testVariations: (0..<17).map { "V\($0)" }), winner: "v16",
            biases: Array(repeating: 0, count: 16) + [100], variation: "V16", label: "the last of 17"),
    ]

    @Test("Any other test keeps its variations; the winner gets 100, the others 0", arguments: winners)
    func winner(testCase: Winner) throws {
        let base = testCase.feature
        let rolled = try base.rolledOut(to: testCase.winner)
        #expect(rolled.testBiases == testCase.biases)
        #expect(rolled.biasReading == .accepted)
        #expect(rolled.isEnabled)
        #expect(rolled.kind == base.kind)
        // Everything else is as written, so the app's variation checks still compile to the same answers.
        var expected = base
        expected.testBiases = testCase.biases
        expected.enabled = rolled.enabled
        #expect(rolled == expected)
        #expect(rolled.enabled == (base.isEnabled ? base.enabled : true))
        let strays = Self.points.filter { rolled.variation(at: $0) != testCase.variation }
        #expect(strays.isEmpty, "\(strays.prefix(5))")
    }

    @Test("A rolled-out MVT keeps its labels, description and unknown keys")
    func keepsTheRest() throws {
        let rolled = try Self.mvt.rolledOut(to: "B")
        #expect(rolled.testVariations == ["A", "B", "C"])
        #expect(rolled.labels == ["a", nil, "c"])
        #expect(rolled.description == "d")
        #expect(rolled.unknownKeys == ["x-extra": .bool(true)])
        #expect(rolled.enabled == nil)
    }

    @Test(
        "A rolled-out feature exports and re-imports without warnings",
        arguments: [
            (onOff(), String?.none), (onOff(), "Disabled"), (mvt, "C"),
            (Feature(name: "t", enabled: false, testVariations: ["A", "B"], testBiases: [50, 49]), "B"),
        ])
    func roundTrip(feature: Feature, winner: String?) throws {
        let rolled = try feature.rolledOut(to: winner)
        let decoded = DocumentDecoder.decode(FeaturesDocument(features: [rolled]).rendered())
        #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics)")
        #expect(decoded.document?.features == [rolled])
    }

    @Test("Rolling out a rolled-out test changes nothing")
    func idempotent() throws {
        let once = try Self.mvt.rolledOut(to: "C")
        #expect(try once.rolledOut(to: "C") == once)
        let flag = try Self.onOff().rolledOut(to: nil)
        #expect(throws: CoreError.notATest(feature: "f", kind: .flag)) { try flag.rolledOut(to: nil) }
    }

    // MARK: Errors

    @Test(
        "Only tests roll out",
        arguments: [
            (Feature(name: "f", enabled: true), FeatureKind.flag),
            (Feature(name: "f"), .flag),
            (Feature(name: "f", testVariations: ["X"]), .flag),
            (Feature(name: "f", development: true), .developmentFlag),
            (Feature(name: "f", unlocked: false), .unlockFlag),
            (Feature(name: "f", type: ["feature-flag": .string("x")], testVariations: ["A", "B", "C"]), .flag),
        ])
    func notATest(feature: Feature, kind: FeatureKind) {
        #expect(throws: CoreError.notATest(feature: "f", kind: kind)) { try feature.rolledOut(to: "Enabled") }
        #expect(throws: CoreError.notATest(feature: "f", kind: kind)) { try feature.rolledOut(to: nil) }
    }

    @Test(
        "A test other than on/off needs a named winner",
        arguments: [
            (Feature(name: "t", testVariations: ["A", "B"]), ["A", "B"]),
            (Feature(name: "t", testVariations: ["A", "B", "C"]), ["A", "B", "C"]),
            (Feature(name: "t", type: ["feature-test": .string("ab")], testVariations: ["X"]), ["X", "!X"]),
            (Feature(name: "t", testVariations: ["on", "B"]), ["Enabled", "B"]),
        ])
    func winnerRequired(feature: Feature, variations: [String]) {
        #expect(throws: CoreError.winnerRequired(feature: "t", variations: variations)) {
            try feature.rolledOut(to: nil)
        }
    }

    @Test(
        "The winner must be one of the variations",
        arguments: [
            (Feature(name: "t", testVariations: ["A", "B", "C"]), "D"),
            (Feature(name: "t", testVariations: ["A", "B", "C"]), ""),
            (Feature(name: "t", testVariations: ["A", "B", "C"]), " A"),
            (Feature(name: "t", testVariations: ["Enabled", "Disabled"]), "Maybe"),
            (Feature(name: "t", type: ["feature-test": .string("ab")], testVariations: ["X"]), "X!"),
        ])
    func unknownVariation(feature: Feature, winner: String) {
        let variations = feature.effectiveVariations
        #expect(throws: CoreError.unknownVariation(feature: "t", variation: winner, variations: variations)) {
            try feature.rolledOut(to: winner)
        }
    }

    @Test("The errors name the feature and its variations")
    func errorMessages() {
        let required = CoreError.winnerRequired(feature: "t", variations: ["A", "B"]).description
        #expect(required.contains("\"t\"") && required.contains("\"A\", \"B\""))
        let unknown = CoreError.unknownVariation(feature: "t", variation: "D", variations: ["A", "B"]).description
        #expect(unknown.contains("\"D\"") && unknown.contains("\"A\", \"B\""))
        let notATest = CoreError.notATest(feature: "f", kind: .flag).description
        #expect(notATest.contains("\"f\" is a Feature Flag, not a test"))
        #expect(CoreError.notATest(feature: "f", kind: .abTest).description.contains("is an A/B Test"))
    }
}
