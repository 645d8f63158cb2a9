import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

@testable import FlagpoleStore

/// A seeded run of generated files imported one after another into a real SQLite file: a
/// refused file changes nothing, an accepted one is stored exactly (its tables read back as
/// the document, its export is its rendering) and re-importing the export changes nothing.
///
/// The decoding properties themselves are fuzzed in FlagpoleCoreTests' `MutationFuzzTests`;
/// here the files are built to reach the database: odd names and values that do decode.
@Suite("Import fuzzing")
struct ImportFuzzSoakTests {
    static let seed = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_260_522
    static let imports = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_IMPORTS"].flatMap { Int($0) } ?? 40

    @Test("Generated files import exactly or change nothing, into a SQLite file")
    func generatedImports() async throws {
        // Given a store on a file, with a revision in acme and one in globex
        let store = try await FeatureStore.makeOnFileWithTenants()
        try await store.importText(#"{"features": [{"name": "a"}]}"#)
        try await store.importText(#"{"features": [{"name": "other tenant"}]}"#, into: .globexProduction)
        let globex = try await store.fingerprint(of: .globexProduction)
        var generator = FileGenerator(random: SeededGenerator(seed: Self.seed))
        var outcomes = (accepted: 0, refused: 0)

        for step in 0..<Self.imports {
            let bytes = generator.next()
            let context =
                "FLAGPOLE_FUZZ_SEED=\(Self.seed), import \(step): \(String(decoding: bytes.prefix(300), as: UTF8.self))"
            let before = try await store.fingerprint()
            let decoded = DocumentDecoder.decode(bytes)

            // When it is imported
            let result: Result<ImportOutcome, any Error>
            do {
                result = .success(
                    try await store.catalog.importDocument(
                        bytes, into: .acmeProduction, options: ImportOptions(actor: "fuzz")))
            } catch {
                result = .failure(error)
            }

            // Then a file the app would reject is refused and changes nothing
            guard let document = decoded.document else {
                outcomes.refused += 1
                guard case .failure(DocumentError.importRefused(_, let diagnostics, false)) = result else {
                    Issue.record("expected a refusal, got \(result); \(context)")
                    return
                }
                #expect(diagnostics.hasErrors, "\(context)")
                #expect(try await store.fingerprint() == before, "a refused import changed the database; \(context)")
                continue
            }
            // And an accepted one is stored as decoded, exported as rendered, and re-imports to itself
            outcomes.accepted += 1
            guard case .success = result else {
                Issue.record("a valid file failed to import: \(result); \(context)")
                return
            }
            #expect(try await store.catalog.snapshot(of: .acmeProduction).document == document, "\(context)")
            let exported = try await store.catalog.revision(of: .acmeProduction).document
            #expect(exported == document.rendered(), "\(context)")
            let again = try await store.catalog.importDocument(
                exported, into: .acmeProduction, options: ImportOptions(actor: "fuzz"))
            guard case .unchanged = again.status else {
                Issue.record("re-importing the export made \(again.status); \(context)")
                return
            }
        }
        #expect(try await store.fingerprint(of: .globexProduction) == globex)
        #expect(outcomes.accepted > Self.imports / 4 && outcomes.refused > Self.imports / 10, "\(outcomes)")
    }
}

/// Files of a few features drawn from small pools of names and values chosen to stress the
/// store: names that differ only by Unicode normalisation or case, `/` and `~` in keys,
/// `-0`, the largest doubles, long strings, NUL in unknown values, deep unknown
/// values; now and then a wrong type or a cut-off file, which must be refused.
struct FileGenerator {
    var random: SeededGenerator

    static let names = [
        "a", "A", "b", "\u{E9}", "e\u{301}", "🚀", "", " ", "x/y~z", "name with \"quotes\"",
        String(repeating: "n", count: 1_000),
    ]
    static let variations = ["A", "a", "B", "Control", "enabled", "Disabled", "on", "off", "\u{E9}", "e\u{301}", "x"]
    static let numbers: [Double] = [
        0, -0.0, 10, 33.3, 33.4, 50, 90, 100, 101, -5, 1e308, .leastNonzeroMagnitude, 1e-7, 0x1p63,
    ]
    static let texts = [
        "", "text", "multi\nline\ttext", "\u{2028}", "🚀 rocket", "\u{FEFF}", String(repeating: "long ", count: 400),
    ]

    mutating func next() -> [UInt8] {
        var features: [JSONValue] = []
        for _ in 0..<int(0...5) { features.append(.object(feature())) }
        var root = JSONObject()
        if chance(0.3) { root.append("version", .number(pick(Self.numbers))) }
        root.append("features", .array(features))
        if chance(0.3) {
            root.append(pick(["x/y", "~", "meta"]), chance(0.5) ? .string("x\u{0}y") : nested(depth: int(1...300)))
        }
        let value: JSONValue = chance(0.15) ? .array(features) : .object(root)
        var bytes = JSONWriter(style: chance(0.5) ? .pretty : .compact).bytes(of: value)
        if chance(0.08) { bytes.removeSubrange(int(0...bytes.count - 1)...) }
        return bytes
    }

    mutating func feature() -> JSONObject {
        var feature = JSONObject()
        feature.append("name", chance(0.03) ? .number(1) : .string(pick(Self.names)))
        if chance(0.3) { feature.append("description", .string(pick(Self.texts))) }
        if chance(0.2) { feature.append("section", .string(pick(Self.texts))) }
        if chance(0.5) { feature.append("enabled", chance(0.03) ? .string("true") : .bool(chance(0.5))) }
        if chance(0.1) { feature.append("development", .bool(true)) }
        if chance(0.1) { feature.append("unlocked", chance(0.5) ? .bool(false) : .null) }
        if chance(0.1) {
            feature.append(
                "type", .object([pick(["feature-flag", "feature-test"]): .string(pick(["ab", "mvt", "flag"]))]))
        }
        if chance(0.5) {
            let count = int(0...4)
            feature.append("test-variations", .array((0..<count).map { _ in .string(pick(Self.variations)) }))
            if chance(0.7) {
                feature.append(
                    "test-biases",
                    .array((0..<(chance(0.8) ? count : int(0...4))).map { _ in .number(pick(Self.numbers)) }))
            }
            if chance(0.3) {
                feature.append(
                    "labels", .array((0..<count).map { _ in chance(0.3) ? .null : .string(pick(Self.texts)) }))
            }
        }
        if chance(0.1) { feature.append(Feature.assignmentKey, .number(pick(Self.numbers))) }
        if chance(0.2) {
            feature.append(
                pick(["x-note", "a/b", "~0"]), chance(0.5) ? .string("nul \u{0} inside") : nested(depth: int(1...50)))
        }
        return feature
    }

    func nested(depth: Int) -> JSONValue {
        (0..<depth).reduce(JSONValue.number(-0.0)) { inner, level in
            level.isMultiple(of: 2) ? .array([inner]) : .object(["k": inner])
        }
    }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func pick<C: Collection>(_ collection: C) -> C.Element { collection.randomElement(using: &random)! }
}
