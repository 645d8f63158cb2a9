import FlagpoleCore
import FlagpoleTestSupport
import Foundation

/// features.json files made from the real fixtures: one fixture's features with their states
/// and biases shuffled, grown with renamed copies of every fixture's features to a given size,
/// plus the test a harness changes and assigns users to.
public struct ImportFiles {
    /// The test every file has, so bias changes and assignments always find it.
    public static let rollout = "Crash Rollout"

    public let fixtures: [FeaturesDocument]

    /// The real fixtures the app accepts (one has a comment, which it refuses).
    public init() {
        let directory = URL(fileURLWithPath: CLI.fixture(""))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        fixtures = names.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                return nil
            }
            return DocumentDecoder.decode(Array(data)).document
        }
    }

    /// A file of `count` features (at least the chosen fixture's, plus the rollout test) whose
    /// rollout test has `biases` and `tag` as its description, so no two files are the same.
    public func make(tag: String, count: Int, biases: [Double], using random: inout SeededGenerator) -> [UInt8] {
        var document = fixtures.randomElement(using: &random)!
        document.features = document.features.map { Self.shuffled($0, using: &random) }
        let pool = fixtures.flatMap(\.features)
        var copy = 0
        while document.features.count + 1 < count {
            copy += 1
            var feature = Self.shuffled(pool[copy % pool.count], using: &random)
            feature.name += " #\(copy)"
            document.features.append(feature)
        }
        document.features.insert(
            Feature(
                name: Self.rollout, description: tag, enabled: true,
                testVariations: ["Control", "Treatment"], testBiases: biases),
            at: Int.random(in: 0...document.features.count, using: &random))
        return document.rendered()
    }

    /// Biases for the rollout test: a random split of 100 in whole percent.
    public static func biases(using random: inout SeededGenerator) -> [Double] {
        let first = Double(Int.random(in: 0...100, using: &random))
        return [first, 100 - first]
    }

    private static func shuffled(_ feature: Feature, using random: inout SeededGenerator) -> Feature {
        var feature = feature
        if Int.random(in: 0..<4, using: &random) == 0 { feature.enabled = !(feature.enabled ?? true) }
        if let biases = feature.testBiases, biases.count >= 2, Bool.random(using: &random) {
            var rest = 100
            feature.testBiases = biases.indices.map { index in
                let share = index == biases.count - 1 ? rest : Int.random(in: 0...rest, using: &random)
                rest -= share
                return Double(share)
            }
        }
        return feature
    }
}
