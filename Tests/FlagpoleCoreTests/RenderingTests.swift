import FlagpoleCore
import Foundation
import Testing

/// FORMAT.md §7, export: stable key order, strict UTF-8, `/` not escaped, integral numbers
/// without a fraction, extras in place, never a null `features`, byte-stable round trips.
@Suite("Rendering (FORMAT §7)")
struct RenderingTests {
    /// Every known key written out of order, with unknown keys around them.
    static let scrambled = #"""
        {"features": [{"labels": ["l1", null], "x-extra": 1, "test-biases": [50.0, 5e1], "type": {"feature-test": "ab"},
        "test-variations": ["A", "B"], "unlocked": false, "enabled": true, "development": false, "section": "S",
        "description": "D\/E", "name": "N", "y-extra": {"k": []}, "a-extra": null}]}
        """#

    static func render(_ text: String, _ style: JSONWriter.Style = .pretty) throws -> String {
        let decoded = TestSupport.decode(text)
        #expect(decoded.isValid, "\(decoded.diagnostics)")
        let document = try #require(decoded.document)
        return String(decoding: document.rendered(style), as: UTF8.self)
    }

    @Test("Pretty output: 4 spaces, known keys in the stable order, then unknown keys in theirs")
    func prettyKeyOrder() throws {
        let expected = """
            {
                "features": [
                    {
                        "name": "N",
                        "description": "D/E",
                        "section": "S",
                        "development": false,
                        "enabled": true,
                        "unlocked": false,
                        "type": {
                            "feature-test": "ab"
                        },
                        "test-variations": ["A", "B"],
                        "test-biases": [50, 50],
                        "labels": ["l1", null],
                        "x-extra": 1,
                        "y-extra": {
                            "k": []
                        },
                        "a-extra": null
                    }
                ]
            }

            """
        #expect(try Self.render(Self.scrambled) == expected)
        // The default style is this one.
        let document = try #require(TestSupport.decode(Self.scrambled).document)
        #expect(document.rendered() == Array(expected.utf8))
    }

    @Test("Compact output has no whitespace at all")
    func compact() throws {
        let expected =
            #"{"features":[{"name":"N","description":"D/E","section":"S","development":false,"enabled":true,"#
            + #""unlocked":false,"type":{"feature-test":"ab"},"test-variations":["A","B"],"test-biases":[50,50],"#
            + #""labels":["l1",null],"x-extra":1,"y-extra":{"k":[]},"a-extra":null}]}"#
        #expect(try Self.render(Self.scrambled, .compact) == expected)
    }

    @Test("The indentation is configurable")
    func twoSpaces() throws {
        let expected = """
            {
              "features": [
                {
                  "name": "a",
                  "test-variations": ["A", "B"]
                }
              ]
            }

            """
        #expect(
            try Self.render(#"{"features":[{"test-variations":["A","B"],"name":"a"}]}"#, .pretty(indent: 2)) == expected
        )
    }

    @Test("Top-level keys stay in place around features")
    func extrasInPlace() throws {
        let expected = """
            {
                "a": 1,
                "features": [],
                "b": {
                    "c": [true, null],
                    "d": "x"
                }
            }

            """
        #expect(try Self.render(#"{"a": 1.0, "features": [], "b": {"c": [true, null], "d": "x"}}"#) == expected)
        #expect(try Self.render(#"{"z": [], "y": {}, "features": []}"#, .compact) == #"{"z":[],"y":{},"features":[]}"#)
    }

    @Test("A bare array is exported as an object with features")
    func bareArrayExport() throws {
        #expect(try Self.render(#"[{"name": "a"}]"#, .compact) == #"{"features":[{"name":"a"}]}"#)
        #expect(try Self.render("[]", .compact) == #"{"features":[]}"#)
        #expect(try Self.render("[]") == "{\n    \"features\": []\n}\n")
    }

    @Test("features is always written as an array")
    func featuresNeverNull() {
        let empty = FeaturesDocument(features: [])
        #expect(String(decoding: empty.rendered(.compact), as: UTF8.self) == #"{"features":[]}"#)
        #expect(String(decoding: empty.rendered(), as: UTF8.self) == "{\n    \"features\": []\n}\n")
        let withExtras = FeaturesDocument(features: [], extras: ["version": .number(2)], featuresPosition: 1)
        #expect(String(decoding: withExtras.rendered(.compact), as: UTF8.self) == #"{"version":2,"features":[]}"#)
    }

    @Test("An extra key named features can never make the export carry a second, null features")
    func extrasCannotShadowFeatures() {
        let document = FeaturesDocument(features: [Feature(name: "a")], extras: ["features": .null, "v": .number(1)])
        let rendered = document.rendered(.compact)
        let decoded = DocumentDecoder.decode(rendered)
        #expect(decoded.isValid, "\(String(decoding: rendered, as: UTF8.self))")
        #expect(decoded.document?.features.map(\.name) == ["a"])
    }

    @Test("featuresPosition is clamped to the extras' bounds")
    func featuresPositionClamped() {
        #expect(FeaturesDocument(features: [], extras: ["a": .null], featuresPosition: 5).featuresPosition == 1)
        #expect(FeaturesDocument(features: [], extras: ["a": .null], featuresPosition: -2).featuresPosition == 0)
        let last = FeaturesDocument(features: [], extras: ["a": .null], featuresPosition: 9)
        #expect(String(decoding: last.rendered(.compact), as: UTF8.self) == #"{"a":null,"features":[]}"#)
    }

    // MARK: Strings

    @Test("Slashes are not escaped, non-ASCII is written as UTF-8, only what must be escaped is")
    func strings() throws {
        let rendered = try Self.render(
            #"""
            {"features": [{"name": "a\/b http://x.test/y", "description": "é \u00e9 日本 🚀 \ud83d\ude80 \"q\" \\ \n \t \r \b \f \u0001 \u001f \u007f \u2028"}]}
            """#, .compact)
        let expected =
            #"{"features":[{"name":"a/b http://x.test/y","description":"é é 日本 🚀 🚀 \"q\" \\ \n \t \r \b \f \u0001 \u001F "#
            + "\u{7F} \u{2028}\"}]}"
        #expect(rendered.lowercased() == expected.lowercased())
        #expect(!rendered.contains(#"\/"#))
        // The written form decodes back to the same text.
        let again = try #require(TestSupport.decode(rendered).document?.features.only)
        #expect(again.name == "a/b http://x.test/y")
        #expect(again.description == "é é 日本 🚀 🚀 \"q\" \\ \n \t \r \u{08} \u{0C} \u{01} \u{1F} \u{7F} \u{2028}")
    }

    // MARK: Numbers

    @Test(
        "Integral numbers are written without a fraction",
        arguments: [
            ("50", "50"), ("50.0", "50"), ("5e1", "50"), ("1E2", "100"), ("1.5e3", "1500"), ("0", "0"), ("0.0", "0"),
            ("-3", "-3"), ("-3.0", "-3"), ("123456789", "123456789"), ("12345678901234", "12345678901234"),
            ("100.000", "100"),
        ])
    func integralNumbers(written: String, rendered: String) throws {
        let output = try Self.render(#"{"features": [{"name": "n", "v": "# + written + "}]}", .compact)
        #expect(output == #"{"features":[{"name":"n","v":"# + rendered + "}]}")
    }

    @Test(
        "Other numbers are written in their shortest round-trip form",
        arguments: [
            ("33.3", "33.3"), ("0.1", "0.1"), ("12.5", "12.5"), ("-0.25", "-0.25"), ("99.99", "99.99"),
            ("0.30000000000000004", "0.30000000000000004"), ("33.300", "33.3"), ("3.33e1", "33.3"),
            ("0.1000000000000000055511151231257827", "0.1"),
        ])
    func fractionalNumbers(written: String, rendered: String) throws {
        let output = try Self.render(#"{"features": [{"name": "n", "v": "# + written + "}]}", .compact)
        #expect(output == #"{"features":[{"name":"n","v":"# + rendered + "}]}")
    }

    @Test(
        "Very large and very small numbers round-trip exactly",
        arguments: [
            1e15, 1e20, 1.7976931348623157e308, 1e-7, 2.5e-7, .leastNonzeroMagnitude, -1e300, 123456.789e10, 0.1 + 0.2,
        ])
    func extremeNumbers(value: Double) throws {
        let text = JSONWriter(style: .compact).string(of: .array([.number(value)]))
        let node = try JSONParser.parse(Array(text.utf8))
        #expect(node.value == .array([.number(value)]), "\(text)")
    }

    @Test(
        "Integral numbers are written without a fraction up to 2^53 too",
        arguments: [
            1e15, 1_234_567_890_000_000, 9_007_199_254_740_992, -1e15, 4503599627370496.0,
        ])
    func largeIntegralNumbers(value: Double) throws {
        let text = JSONWriter(style: .compact).string(of: .array([.number(value)]))
        #expect(!text.contains("."), "\(text)")
        let node = try JSONParser.parse(Array(text.utf8))
        #expect(node.value == .array([.number(value)]), "\(text)")
    }

    @Test("Biases keep their values through an export")
    func biasNumbers() throws {
        let document = FeaturesDocument(features: [
            Feature(name: "m", testVariations: ["A", "B", "C"], testBiases: [33.3, 33.3, 33.4]),
            Feature(name: "n", testVariations: ["A", "B"], testBiases: [50, 50]),
        ])
        let text = String(decoding: document.rendered(.compact), as: UTF8.self)
        #expect(
            text == #"{"features":[{"name":"m","test-variations":["A","B","C"],"test-biases":[33.3,33.3,33.4]},"#
                + #"{"name":"n","test-variations":["A","B"],"test-biases":[50,50]}]}"#)
    }

    @Test("A feature is written with only the keys it has")
    func onlyPresentKeys() {
        let feature = Feature(name: "x", enabled: false, labels: [nil, "b"], unknownKeys: ["k": .string("v")])
        #expect(feature.jsonObject.keys == ["name", "enabled", "labels", "k"])
        #expect(feature.jsonObject["labels"] == .array([.null, .string("b")]))
        #expect(Feature(name: "").jsonObject == ["name": .string("")])
    }

    // MARK: Round trips

    static let roundTrips: [Input] = [
        Input(scrambled),
        Input(#"{"features": []}"#),
        Input(#"[]"#),
        Input(#"[{"name": "a"}, {"name": "b", "enabled": true}]"#),
        Input(
            #"""
            {"version": 2, "features": [
              {"name": "", "description": "", "labels": [null], "x": {"nested": [[], {}, [1, "two", null, false]]}},
              {"name": "t", "test-variations": ["enabled", "off", "On"], "test-biases": [33.3, 33.3, 33.4], "enabled": false},
              {"name": "u", "unlocked": true, "type": {"feature-flag": "x"}, "development": true, "zzz": -0.5}
            ], "trailer": "é/ü", "n": 1e-7}
            """#),
        Input(#"{"a": {"features": null}, "features": [{"name": "a/b", "p": "\u0000"}], "b": [1, [2, [3]]]}"#),
    ]

    @Test("render, decode, render is byte-identical and the document is unchanged", arguments: roundTrips)
    func roundTrip(input: Input) throws {
        let original = try #require(TestSupport.decode(input.text).document)
        for style in [JSONWriter.Style.pretty, .compact, .pretty(indent: 2)] {
            let first = original.rendered(style)
            #expect(first == original.rendered(style), "rendering twice gives the same bytes")
            let decoded = DocumentDecoder.decode(first)
            #expect(decoded.isValid, "\(decoded.diagnostics)")
            let again = try #require(decoded.document)
            #expect(again == original)
            #expect(again.rendered(style) == first)
        }
    }

    @Test("Exports are strict JSON that Foundation reads too", arguments: roundTrips)
    func foundationReadsExports(input: Input) throws {
        let document = try #require(TestSupport.decode(input.text).document)
        let object = try JSONSerialization.jsonObject(with: Data(document.rendered()))
        let dictionary = try #require(object as? [String: Any])
        let features = try #require(dictionary["features"] as? [Any])
        #expect(features.count == document.features.count)
    }
}
