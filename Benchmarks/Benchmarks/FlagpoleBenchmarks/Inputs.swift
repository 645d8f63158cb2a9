import FlagpoleCore
import FlagpoleStore
import Foundation

/// What the benchmarks work on, from environment variables (set by Scripts/bench) or small defaults.
enum Inputs {
    /// Timed iterations of each benchmark at most (FLAGPOLE_BENCH_RUNS, default 20); each also
    /// stops after 10 s.
    static let runs = integer("FLAGPOLE_BENCH_RUNS", default: 20)
    /// Points computed in one iteration of `points` (FLAGPOLE_BENCH_POINTS, default 1 000 000).
    static let pointsPerIteration = integer("FLAGPOLE_BENCH_POINTS", default: 1_000_000)
    /// Users assigned to the test of the planner's store (FLAGPOLE_BENCH_USERS, default 10 000).
    static let users = integer("FLAGPOLE_BENCH_USERS", default: 10_000)

    /// The features file of parse, validate, render and import: FLAGPOLE_BENCH_FEATURES_FILE
    /// (Scripts/bench's bench.d/generate_features.py output), else a file generated here with
    /// FLAGPOLE_BENCH_FEATURES features (default 1 000).
    static func featuresFile() throws -> [UInt8] {
        if let path = environment["FLAGPOLE_BENCH_FEATURES_FILE"], !path.isEmpty {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        return generatedDocument(features: integer("FLAGPOLE_BENCH_FEATURES", default: 1_000)).rendered()
    }

    /// The features file, decoded; stops the benchmark when the file is not valid.
    static func document(_ bytes: [UInt8]) throws -> FeaturesDocument {
        let decoded = DocumentDecoder.decode(bytes)
        guard let document = decoded.document else {
            throw BenchmarkInputError("the features file has errors: \(decoded.diagnostics.errors.prefix(3))")
        }
        return document
    }

    /// The test the planner's store assigns users to, as bench.d/assignment_features.json has it.
    static let test = Feature(
        name: "bench_checkout_test", enabled: true, testVariations: ["A", "B"], testBiases: [10, 90])

    static let tenant = TenantSlug(rawValue: "bench")
    static let path = EnvironmentPath(tenant: tenant, environment: .production)

    /// A database prepared by Scripts/bench for `history` (FLAGPOLE_BENCH_HISTORY_DB), with the
    /// users to query (FLAGPOLE_BENCH_HISTORY_USERS, one a line); nil: the benchmark builds its own.
    static var historyDatabase: (path: String, users: String)? {
        guard let path = environment["FLAGPOLE_BENCH_HISTORY_DB"], !path.isEmpty,
            let users = environment["FLAGPOLE_BENCH_HISTORY_USERS"], !users.isEmpty
        else { return nil }
        return (path, users)
    }

    /// Where `history` writes how many users it queried and how many events they have, for
    /// Scripts/bench to check against its baseline (FLAGPOLE_BENCH_HISTORY_REPORT).
    static let historyReport = environment["FLAGPOLE_BENCH_HISTORY_REPORT"]

    private static let environment = ProcessInfo.processInfo.environment

    private static func integer(_ name: String, default value: Int) -> Int {
        environment[name].flatMap { Int($0) } ?? value
    }

    /// A deterministic document of `count` features, in the spirit of bench.d/generate_features.py:
    /// mostly plain flags, then development and unlock flags, A/B tests and multivariate tests.
    static func generatedDocument(features count: Int) -> FeaturesDocument {
        var random = SplitMix64(seed: 20_240_601)
        let words = ["new", "compact", "dark", "express", "smart", "guided", "offline", "banner", "sheet", "paywall"]
        let groups = ["Control", "Group A", "Group B", "Group C", "Blue", "Green", "Red"]
        let features = (0..<count).map { index -> Feature in
            let name = "\(words[random.below(words.count)])_\(words[random.below(words.count)])_\(index)"
            var feature = Feature(name: name, description: "Feature \(index) of the generated file")
            switch random.below(100) {
            case 0..<50:
                feature.enabled = random.below(10) < 6
            case 50..<60:
                feature.development = true
                feature.enabled = random.below(2) == 0
            case 60..<70:
                feature.enabled = true
                feature.unlocked = random.below(10) < 3
            default:
                let variations = 2 + random.below(3)
                let split = 100 / variations
                feature.enabled = true
                feature.testVariations = Array(groups.shuffled(using: &random).prefix(variations))
                feature.testBiases =
                    Array(repeating: Double(split), count: variations - 1) + [Double(100 - split * (variations - 1))]
                feature.labels = feature.testVariations!.map { "\(name)-\($0.lowercased())" }
            }
            return feature
        }
        return FeaturesDocument(
            features: features, extras: ["schemaVersion": .number(2), "generatedBy": .string("flagpole Benchmarks")],
            featuresPosition: 1)
    }

    /// A new directory for the benchmark's databases.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

struct BenchmarkInputError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A small seeded generator, so that the generated inputs are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
