import FlagpoleCore
import Testing

/// FORMAT.md §8: the real features.json files of Tests/Fixtures/real.
@Suite("Real fixtures (FORMAT §8)")
struct RealFixtureTests {
    @Test("The fixture folder holds the eight real files, one of them with a comment")
    func fixturesPresent() {
        let names = TestSupport.realFixtureNames
        #expect(names.count == 8, "\(TestSupport.realFixturesDirectory.path): \(names)")
        #expect(names.contains(TestSupport.commentedFixtureName))
        #expect(TestSupport.validRealFixtureNames.count == 7)
    }

    @Test(
        "Every real file decodes with no diagnostic, renders and re-decodes to the same document",
        arguments: TestSupport.validRealFixtureNames)
    func roundTrip(name: String) throws {
        let bytes = try TestSupport.realFixture(name)
        let decoded = DocumentDecoder.decode(bytes)
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics)")
        let document = try #require(decoded.document)
        #expect(!document.features.isEmpty)
        for style in [JSONWriter.Style.pretty, .compact] {
            let rendered = document.rendered(style)
            let again = DocumentDecoder.decode(rendered)
            #expect(again.diagnostics.isEmpty)
            #expect(again.document == document)
            #expect(again.document?.rendered(style) == rendered)
        }
    }

    @Test("The commented file is refused at the comment, line 7 column 9")
    func commentedFixture() throws {
        let decoded = DocumentDecoder.decode(try TestSupport.realFixture(TestSupport.commentedFixtureName))
        #expect(decoded.document == nil)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .notStrictJSON)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.location == Position(line: 7, column: 9))
        #expect(diagnostic.message.lowercased().contains("comment"))
        #expect(!diagnostic.fix.isEmpty)
    }

    @Test("The kinds of rwbutler's example file are the ones its names say")
    func exampleKinds() throws {
        let document = try #require(
            DocumentDecoder.decode(try TestSupport.realFixture("rwbutler-HEAD-Features.json")).document)
        let kinds = document.features.map { ($0.name, $0.kind) }
        #expect(
            kinds.map(\.0) == [
                "Example Feature Flag", "Example Development Flag", "Example Unlock Flag", "Example A/B Test",
                "Example Feature On/Off A/B Test", "Example MVT Test",
            ])
        #expect(kinds.map(\.1) == [.flag, .developmentFlag, .unlockFlag, .abTest, .onOffABTest, .mvtTest])
        let onOff = try #require(document.feature(named: "Example Feature On/Off A/B Test"))
        #expect(onOff.effectiveVariations == ["Enabled", "Disabled"])
        #expect(onOff.effectiveBiases == [80, 20])
        let mvt = try #require(document.feature(named: "Example MVT Test"))
        #expect(mvt.effectiveShares == [70, 20, 10])
        #expect(mvt.labels?.count == 3)
        #expect(document.features.allSatisfy { $0.isEnabled })
    }

    @Test("The issue's file is an on/off test with the Enabled group at 10 %")
    func issueFile() throws {
        let document = try #require(
            DocumentDecoder.decode(try TestSupport.realFixture("issue-pr7-nicolasanjoran.json")).document)
        let feature = try #require(document.features.only)
        #expect(feature.kind == .onOffABTest)
        #expect(feature.effectiveVariations == ["Disabled", "Enabled"])
        let ranges = VariationRanges(of: feature).ranges
        #expect(ranges.map(\.name) == ["Disabled", "Enabled"])
        #expect(ranges.map(\.lower) == [0, 90])
        #expect(ranges.map(\.upper) == [90, 100])
    }

    @Test("The six-variation MVT of vantientu1703's file keeps its biases")
    func sixVariations() throws {
        let document = try #require(
            DocumentDecoder.decode(try TestSupport.realFixture("vantientu1703-master-Features.json")).document)
        let mvt = try #require(document.feature(named: "Example MVT Test"))
        #expect(mvt.kind == .mvtTest)
        #expect(mvt.biasReading == .accepted)
        #expect(mvt.effectiveShares == [40, 10, 10, 10, 10, 20])
        #expect(document.feature(named: "Example Unlock Flag")?.kind == .unlockFlag)
    }
}
