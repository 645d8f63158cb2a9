/// Finishing a test: every user gets the winning variation.
extension Feature {
    /// The feature once its test is rolled out to `winner` (compared case-insensitively).
    ///
    /// An on/off A/B test becomes a plain flag, enabled for everyone when `Enabled` wins (the
    /// default) and disabled when `Disabled` does. Any other test keeps its variations, so the
    /// app's `isTestVariation` checks still compile to the same answers, and the winner gets
    /// bias 100, the others 0. A disabled test is enabled.
    ///
    /// - throws: `CoreError.notATest`, `CoreError.winnerRequired`, `CoreError.unknownVariation`.
    public func rolledOut(to winner: String?) throws(CoreError) -> Feature {
        guard kind.isTest else { throw CoreError.notATest(feature: name, kind: kind) }
        let variations = effectiveVariations
        guard let winner = winner ?? (kind == .onOffABTest ? "Enabled" : nil) else {
            throw CoreError.winnerRequired(feature: name, variations: variations)
        }
        guard let winnerIndex = variations.firstIndex(where: { $0.lowercased() == winner.lowercased() }) else {
            throw CoreError.unknownVariation(feature: name, variation: winner, variations: variations)
        }
        var result = self
        if kind == .onOffABTest {
            // Every key that would make the bare flag something else goes with the variations.
            result.type = nil
            result.unlocked = nil
            result.development = nil
            result.testVariations = nil
            result.testBiases = nil
            result.labels = nil
            result.enabled = variations[winnerIndex].lowercased() == "enabled"
            return result
        }
        result.testBiases = variations.indices.map { $0 == winnerIndex ? 100 : 0 }
        if !isEnabled { result.enabled = true }
        return result
    }
}
