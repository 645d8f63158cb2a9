import FlagpoleCore
import FlagpoleTestSupport
import Testing

@Suite("Pinned document templates")
struct PinnedDocumentTemplateTests {
    /// Documents with tests, unlock flags, unknown keys and extras around `features`.
    static var documents: [FeaturesDocument] {
        get throws {
            var documents = [try BucketingTests.pinnedDocument()]
            for name in TestSupport.validRealFixtureNames {
                documents.append(try #require(DocumentDecoder.decode(try TestSupport.realFixture(name)).document))
            }
            documents.append(FeaturesDocument(features: []))
            return documents
        }
    }

    @Test("A filled template is byte for byte the pinned document, for any points and unlock states")
    func filledTemplateIsThePinnedDocument() throws {
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_TEMPLATE_SEED")
        var random = SeededGenerator(seed: seed)
        // Integral points render without a fraction, the smallest with an exponent, others in full.
        let edges = [0, UserPoints.point(hash: 1), 10.nextDown, 50, 99.99999999, 100.nextDown]
        for document in try Self.documents {
            let template = try #require(PinnedDocumentTemplate(document))
            for round in 0..<50 {
                var points: [String: Double] = [:]
                var pointsByIndex: [Int: Double] = [:]
                var unlocks: [String: Bool] = [:]
                var unlocksByIndex: [Int: Bool] = [:]
                for (index, feature) in document.features.enumerated() {
                    if feature.isBucketed {
                        let point = round < edges.count ? edges[round] : Double.random(in: 0..<100, using: &random)
                        points[feature.name] = point
                        pointsByIndex[index] = point
                    }
                    if feature.kind == .unlockFlag, Bool.random(using: &random) {
                        let isUnlocked = Bool.random(using: &random)
                        unlocks[feature.name] = isUnlocked
                        unlocksByIndex[index] = isUnlocked
                    }
                }
                let filled = template.rendered(point: { pointsByIndex[$0]! }, unlocked: { unlocksByIndex[$0] })
                #expect(
                    filled == document.pinned(points: points, unlocks: unlocks).rendered(),
                    "seed \(seed), round \(round)")
            }
            let compact = try #require(PinnedDocumentTemplate(document, style: .compact))
            #expect(
                compact.rendered(point: { _ in 42.5 }, unlocked: { _ in true })
                    == document.pinned(
                        points: Dictionary(
                            document.features.filter(\.isBucketed).map { ($0.name, 42.5) },
                            uniquingKeysWith: { first, _ in first }),
                        unlocks: Dictionary(
                            document.features.map { ($0.name, true) }, uniquingKeysWith: { first, _ in first })
                    ).rendered(.compact))
        }
    }

    @Test("It has a hole for each bucketed test and each unlock flag, in document order")
    func slots() throws {
        let document = try BucketingTests.pinnedDocument()
        let template = try #require(PinnedDocumentTemplate(document))
        let expected = document.features.enumerated().flatMap { index, feature -> [PinnedDocumentTemplate.Slot] in
            if feature.kind == .unlockFlag { return [.unlocked(feature: index, byDefault: feature.unlocked ?? false)] }
            return feature.isBucketed ? [.point(feature: index)] : []
        }
        #expect(template.slots == expected)
        #expect(template.slots.contains(.unlocked(feature: 4, byDefault: true)))
    }

    @Test(
        "A document that writes U+0000 itself, which the store never imports, gets no template rather than a wrong one")
    func documentWithNULHasNoTemplate() {
        // Strings that read like the first hole, like the second, and like a hole without a number.
        for text in ["\u{0}0", "\u{0}1", "\u{0}", "\"\u{0}1"] {
            let document = FeaturesDocument(features: [
                Feature(name: "T", testVariations: ["A", "B"]), Feature(name: text),
            ])
            #expect(PinnedDocumentTemplate(document) == nil, "\(Array(text.utf8))")
        }
        // A U+0000 that can't be taken for a hole does no harm.
        let harmless = FeaturesDocument(features: [
            Feature(name: "T", testVariations: ["A", "B"]), Feature(name: "a\u{0}"),
        ])
        let template = PinnedDocumentTemplate(harmless)
        #expect(
            template?.rendered(point: { _ in 5 }, unlocked: { _ in nil })
                == harmless.pinned(points: ["T": 5], unlocks: [:]).rendered())
    }
}
