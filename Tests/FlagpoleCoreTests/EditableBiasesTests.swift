import FlagpoleCore
import Testing

/// The biases an editor pre-fills (the dashboard's bias form): at most 4 decimals, and values
/// the client keeps, checked by the validation `flagpole validate` runs (FORMAT.md §4).
@Suite("Editable biases")
struct EditableBiasesTests {
    /// A one-feature document with `count` variations and, when given, `biases` as its `test-biases`.
    static func document(variations count: Int, biases: [String]?) -> String {
        let names = (1...count).map { "\"V\($0)\"" }.joined(separator: ", ")
        let written = biases.map { #", "test-biases": ["# + $0.joined(separator: ", ") + "]" } ?? ""
        return TestSupport.document(feature: #""test-variations": ["# + names + "]" + written)
    }

    /// Writes `feature`'s editable biases back into a document with its variations, validates it
    /// and returns what the validator says, after checking what holds for every split: one value
    /// per variation, at most 4 decimals, kept by the client, and every boundary between
    /// variations within 1.5 units of the last decimal of where it was.
    static func writtenBack(
        _ feature: Feature, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (text: [String], decoded: DecodedDocument) {
        let text = feature.editableBiases
        #expect(text.count == feature.effectiveVariations.count, sourceLocation: sourceLocation)
        for value in text {
            let decimals = value.split(separator: ".").dropFirst().first?.count ?? 0
            #expect(decimals <= 4 && !value.contains("e"), "\(value)", sourceLocation: sourceLocation)
        }
        let decoded = TestSupport.decode(document(variations: feature.effectiveVariations.count, biases: text))
        #expect(decoded.isValid, sourceLocation: sourceLocation)
        let codes = decoded.diagnostics.map(\.code)
        #expect(
            !codes.contains(.biasCountMismatch) && !codes.contains(.biasSumShort), "\(text): \(codes)",
            sourceLocation: sourceLocation)
        let reread = try #require(decoded.document?.features.only, sourceLocation: sourceLocation)
        #expect(reread.biasReading == .accepted, "\(text)", sourceLocation: sourceLocation)
        let before = VariationRanges(of: feature).ranges.map(\.upper)
        let after = VariationRanges(of: reread).ranges.map(\.upper)
        #expect(
            zip(before, after).allSatisfy { abs($0 - $1) <= 0.00015 + 1e-9 }, "\(before) → \(after)",
            sourceLocation: sourceLocation)
        return (text, decoded)
    }

    @Test(
        "An equal split of 2 to 10 variations pre-fills values the validator accepts without a bias warning",
        arguments: 2...10)
    func equalSplit(variations: Int) throws {
        let feature = try #require(
            TestSupport.decode(Self.document(variations: variations, biases: nil)).document?.features.only)
        let (_, decoded) = try Self.writtenBack(feature)
        #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics.map(\.message))")
    }

    @Test("An equal split of up to 100 variations is never ignored by the client (W200, W201)", arguments: 11...100)
    func wideEqualSplit(variations: Int) throws {
        let feature = try #require(
            TestSupport.decode(Self.document(variations: variations, biases: nil)).document?.features.only)
        _ = try Self.writtenBack(feature)
    }

    @Test(
        "Pre-filled equal splits, value for value",
        arguments: [
            (2, ["50", "50"]),
            (3, ["33.3333", "33.3334", "33.3333"]),
            (4, ["25", "25", "25", "25"]),
            (6, ["16.6667", "16.6666", "16.6667", "16.6667", "16.6666", "16.6667"]),
            (8, Array(repeating: "12.5", count: 8)),
            (9, ["11.1111", "11.1111", "11.1111", "11.1111", "11.1112", "11.1112", "11.111", "11.1111", "11.1111"]),
        ])
    func equalSplitValues(variations: Int, text: [String]) throws {
        let feature = try #require(
            TestSupport.decode(Self.document(variations: variations, biases: nil)).document?.features.only)
        #expect(feature.editableBiases == text)
    }

    @Test(
        "Biases the client keeps are pre-filled as written, with the same warnings",
        arguments: [
            ["10", "90"], ["90", "10"], Array(repeating: "12.5", count: 8), ["33.3", "33.3", "33.4"],
            ["70", "20", "10"],
            ["0", "100"], ["60", "60"], ["50", "50", "50"], ["100", "10", "10"],
        ])
    func keptAsWritten(biases: [String]) throws {
        let original = TestSupport.decode(Self.document(variations: biases.count, biases: biases))
        let feature = try #require(original.document?.features.only)
        try #require(feature.biasReading == .accepted)
        let (text, decoded) = try Self.writtenBack(feature)
        #expect(text == biases)
        #expect(decoded.diagnostics.map(\.code) == original.diagnostics.map(\.code))
    }

    @Test(
        "Kept biases with more decimals are rounded so that the client still keeps them",
        arguments: [
            (["33.33334", "33.33333", "33.33333"], ["33.3333", "33.3334", "33.3333"]),
            (["33.33334", "33.33334", "33.33334"], ["33.3333", "33.3334", "33.3333"]),
            (["0.00004", "99.99996"], ["0", "100"]),
            (["12.34567", "87.65433"], ["12.3457", "87.6543"]),
        ])
    func roundedToFourDecimals(biases: [String], text: [String]) throws {
        let feature = try #require(
            TestSupport.decode(Self.document(variations: biases.count, biases: biases)).document?.features.only)
        try #require(feature.biasReading == .accepted)
        #expect(try Self.writtenBack(feature).text == text)
    }
}
