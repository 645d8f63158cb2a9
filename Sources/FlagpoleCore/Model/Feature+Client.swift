/// How the client reads a feature (FORMAT.md §2–§5). Everything here is derived from
/// the keys as written; nothing is stored.
extension Feature {
    /// The meaning of the `type` object, when it is one the client accepts.
    public var declaredType: FeatureType? {
        type.flatMap(FeatureType.init)
    }

    /// How many `test-variations` were written (`nil` and `[]` both count 0).
    public var declaredVariationCount: Int {
        testVariations?.count ?? 0
    }

    /// The variation names the client stores: the defaults `Enabled`/`Disabled` without
    /// variations, `X` and a synthetic `!X` for one, otherwise the names as written with
    /// the lowercase spellings `enabled`/`on`/`disabled`/`off` normalised.
    public var effectiveVariations: [String] {
        guard let testVariations, !testVariations.isEmpty else { return ["Enabled", "Disabled"] }
        if testVariations.count == 1 {
            return [Self.normalizedVariation(testVariations[0]), "!" + testVariations[0]]
        }
        return testVariations.map(Self.normalizedVariation)
    }

    /// The kind the app sees.
    public var kind: FeatureKind {
        let count = declaredVariationCount
        // With exactly two variations the client ignores `type` and `unlocked`.
        if count == 2 {
            let names = effectiveVariations.map { $0.lowercased() }
            let isOnOff = names.first != names.last && names.allSatisfy { $0 == "enabled" || $0 == "disabled" }
            return isOnOff ? .onOffABTest : .abTest
        }
        if unlocked != nil { return .unlockFlag }
        let base: FeatureKind =
            switch declaredType {
            case .featureFlag: .flag
            case .featureTest(.ab): .abTest
            case .featureTest(.featureFlagAB): .onOffABTest
            case .featureTest(.mvt): .mvtTest
            case nil: count >= 3 ? .mvtTest : .flag
            }
        return base == .flag && development == true ? .developmentFlag : base
    }

    /// Whether the feature is enabled: as written, else true for two or more variations.
    public var isEnabled: Bool {
        enabled ?? (declaredVariationCount >= 2)
    }

    /// Whether every device gets the same point (1 when enabled, 99 when not) instead of a
    /// random one: the client does this when no test variations are written.
    public var hasFixedPoint: Bool {
        declaredVariationCount == 0
    }

    /// How the client reads `test-biases` (FORMAT.md §4).
    public var biasReading: BiasReading {
        guard let testBiases else { return .absent }
        let expected = effectiveVariations.count
        guard testBiases.count == expected else { return .countMismatch(expected: expected) }
        let sum = Self.clampedRunningSum(testBiases)
        return sum == 100 ? .accepted : .sumShort(sum: sum)
    }

    /// The biases the client buckets with: the written ones (each clamped to 0…100) when
    /// it keeps them, else an equal split.
    public var effectiveBiases: [Double] {
        let count = effectiveVariations.count
        if case .accepted = biasReading, let testBiases {
            return testBiases.map(Self.clampedPercentage)
        }
        return Array(repeating: 100.0 / Double(count), count: count)
    }

    /// The share of users in each effective variation, in order, summing to 100.
    public var effectiveShares: [Double] {
        VariationRanges(names: effectiveVariations, biases: effectiveBiases).ranges.map(\.width)
    }

    /// The client's `Percentage`: values below 0 become 0, above 100 become 100.
    public static func clampedPercentage(_ value: Double) -> Double {
        min(max(value, 0), 100)
    }

    /// The client's sum of biases: each clamped, then the running total clamped, in IEEE doubles.
    public static func clampedRunningSum(_ biases: [Double]) -> Double {
        biases.reduce(0) { clampedPercentage($0 + clampedPercentage($1)) }
    }

    /// A variation name as the client stores it: only the lowercase spellings are normalised.
    public static func normalizedVariation(_ name: String) -> String {
        switch name {
        case "enabled", "on": "Enabled"
        case "disabled", "off": "Disabled"
        default: name
        }
    }
}

/// What the client makes of a feature's `test-biases`.
public enum BiasReading: Hashable, Sendable {
    /// No biases written: an equal split.
    case absent
    /// Kept as written (each value clamped to 0…100).
    case accepted
    /// Ignored for an equal split: the count differs from the variations'.
    case countMismatch(expected: Int)
    /// Ignored for an equal split: the clamped running sum falls short of 100.
    case sumShort(sum: Double)
}
