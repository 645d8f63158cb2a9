import Foundation

/// SplitMix64: a random sequence fixed by its seed, so a failing run of the fuzzing, property
/// and crash tests can be replayed from the seed it prints. Shared by every test target.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed of this run: `$name` when set (to replay a failure), else a fresh one.
    public static func seed(fromEnvironment name: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[name], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64.max)
    }
}
