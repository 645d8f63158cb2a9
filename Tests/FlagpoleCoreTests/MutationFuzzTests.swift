import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

/// A short, seeded fuzzing run over the real files (`Scripts/fuzz` runs libFuzzer for longer).
///
/// Every input, however damaged, must keep `DecodeProperties` (Tests/Support), the property the
/// libFuzzer harness checks too. `FLAGPOLE_FUZZ_SEED` and
/// `FLAGPOLE_FUZZ_ITERATIONS` replay a failure or run longer.
@Suite("Mutation fuzzing")
struct MutationFuzzTests {
    static let seed = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_260_522
    static let iterations = ProcessInfo.processInfo.environment["FLAGPOLE_FUZZ_ITERATIONS"].flatMap { Int($0) } ?? 400

    /// The real files, and small hand-written documents that reach the shapes they lack.
    static func seeds() throws -> [[UInt8]] {
        let real = try TestSupport.realFixtureNames.map(TestSupport.realFixture)
        let written = [
            #"[{"name": "cache shape", "test-variations": ["A", "B", "C"], "test-biases": [20, 30, 50], "test-variation-assignment": 12.5}]"#,
            #"{"version": 2, "features": [{"name": "u", "unlocked": false, "type": {"feature-flag": "x"}, "labels": ["l", null], "x-note": {"a": [1, -0.5e-3]}}], "tail": null}"#,
            #"{"features": [{"name": "t", "type": {"feature-test": "mvt"}, "test-variations": ["on"], "test-biases": [60, 60], "development": true}]}"#,
        ]
        return real + written.map { Array($0.utf8) }
    }

    @Test("Damaged and mutated real files never crash, are refused at a real position, or round-trip")
    func mutatedFilesKeepTheDecodingProperties() throws {
        var mutator = DocumentMutator(seeds: try Self.seeds(), random: SeededGenerator(seed: Self.seed))
        var accepted = 0
        var codes: Set<DiagnosticCode> = []
        for iteration in 0..<Self.iterations {
            let (bytes, steps) = mutator.next()
            let (decoded, problems) = DecodeProperties.check(bytes)
            if !problems.isEmpty {
                Issue.record(
                    """
                    FLAGPOLE_FUZZ_SEED=\(Self.seed), iteration \(iteration): \(problems.joined(separator: "; "))
                    steps: \(steps.joined(separator: " | "))
                    input (base64): \(Data(bytes).base64EncodedString())
                    """)
                return
            }
            if decoded.document != nil { accepted += 1 }
            codes.formUnion(decoded.diagnostics.map(\.code))
        }
        // The generator must reach both sides and most of the validator, or the run proves little.
        #expect(accepted > Self.iterations / 10, "\(accepted) of \(Self.iterations) inputs accepted")
        #expect(
            Self.iterations - accepted > Self.iterations / 10,
            "\(Self.iterations - accepted) of \(Self.iterations) inputs refused")
        #expect(codes.count >= 12, "codes seen: \(codes.sorted())")
    }

    @Test("The properties hold for every prefix and every single-byte deletion of a real file")
    func everyCutAndDeletion() throws {
        let bytes = try TestSupport.realFixture("issue-pr7-nicolasanjoran.json")
        for length in 0...bytes.count {
            let prefix = Array(bytes[..<length])
            #expect(DecodeProperties.problems(of: prefix).isEmpty, "prefix of \(length) bytes")
        }
        for index in bytes.indices {
            var damaged = bytes
            damaged.remove(at: index)
            #expect(DecodeProperties.problems(of: damaged).isEmpty, "byte \(index) deleted")
        }
    }
}
