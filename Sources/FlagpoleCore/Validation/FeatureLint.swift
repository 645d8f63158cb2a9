/// The warnings of one valid feature: what the client accepts but silently changes
/// (W200–W232, FORMAT.md §7).
enum FeatureLint {
    static func check(_ feature: Feature, node: JSONNode, at pointer: JSONPointer, pending: inout PendingDiagnostics) {
        // Looked up once per key: a feature may hold many keys and get a warning per bias.
        var members: [String: JSONNode?] = [:]
        func member(_ key: String) -> JSONNode? {
            if let known = members[key] { return known }
            let found = node.member(key)?.node
            members[key] = found
            return found
        }
        func warn(_ code: DiagnosticCode, key: String, element: Int? = nil, _ message: String, fix: String) {
            var target = pointer.appending(key)
            var offset = member(key)?.offset ?? node.offset
            if let element, case .array(let elements)? = member(key)?.content {
                target = target.appending(element)
                offset = elements[element].offset
            }
            pending.add(code, feature: feature.name, at: target, offset: offset, message, fix: fix)
        }

        let count = feature.declaredVariationCount
        if count == 1, let only = feature.testVariations?.first {
            warn(
                .singleVariation, key: "test-variations",
                "one test variation: the app adds a second one, \"!\(only)\", and splits users between them",
                fix: "list both variations, or remove \"test-variations\" for a plain flag")
        }
        if count == 2 && feature.type != nil {
            warn(
                .typeIgnored, key: "type",
                "\"type\" is ignored with exactly two test variations; the variations make this \(feature.kind.withArticle)",
                fix: "remove \"type\"")
        }
        if count == 2 && feature.unlocked != nil {
            warn(
                .unlockedIgnored, key: "unlocked",
                "\"unlocked\" is ignored with exactly two test variations; this stays \(feature.kind.withArticle)",
                fix: "remove \"unlocked\", or remove \"test-variations\" to make an unlock flag")
        }
        checkBiases(of: feature, warn: warn)
        if let labels = feature.labels, labels.count != feature.effectiveVariations.count {
            let variations = feature.effectiveVariations.count
            warn(
                .labelCountMismatch, key: "labels",
                "\"labels\" has \(labels.count) label\(labels.count == 1 ? "" : "s") for \(variations) variations; \(labels.count < variations ? "the last variations have no label" : "the extra labels are never used")",
                fix: "give exactly one label per variation, in order (null for none)")
        }
    }

    private static func checkBiases(
        of feature: Feature,
        warn: (DiagnosticCode, String, Int?, String, String) -> Void
    ) {
        guard let biases = feature.testBiases else { return }
        if feature.hasFixedPoint && !feature.kind.isTest {
            warn(
                .biasesOnPlainFlag, "test-biases", nil,
                "\"test-biases\" on a flag without test variations have no effect: every device gets point 1 when enabled, 99 when not",
                "remove \"test-biases\", or add \"test-variations\" to make a test")
            return
        }
        for (index, bias) in biases.enumerated() where bias < 0 || bias > 100 {
            warn(
                .biasClamped, "test-biases", index,
                "bias \(JSONWriter.format(bias)) is \(bias < 0 ? "below 0" : "above 100"); the app reads it as \(bias < 0 ? "0" : "100")",
                "use a value between 0 and 100")
        }
        let variations = feature.effectiveVariations
        let split = "splits users equally (\(Percent.format(100.0 / Double(variations.count))) each)"
        switch feature.biasReading {
        case .absent, .accepted:
            break
        case .countMismatch(let expected):
            let synthetic =
                feature.declaredVariationCount == 1
                ? " (\"\(variations[0])\" and the synthetic \"\(variations[1])\")" : ""
            warn(
                .biasCountMismatch, "test-biases", nil,
                "\"test-biases\" has \(biases.count) value\(biases.count == 1 ? "" : "s") for \(expected) variations\(synthetic); the app ignores them and \(split)",
                "give exactly one bias per variation, in order")
        case .sumShort(let sum):
            // Rounded for reading, unless rounding would show the very 100 it falls short of.
            let shown =
                Percent.number(sum, digits: 6) == "100" ? JSONWriter.format(sum) : Percent.number(sum, digits: 6)
            warn(
                .biasSumShort, "test-biases", nil,
                "\"test-biases\" add up to \(shown), short of 100; the app ignores them and \(split)",
                "make the biases add up to exactly 100")
        }
        let total = biases.map(Feature.clampedPercentage).reduce(0, +)
        if case .accepted = feature.biasReading, total > 100 + 1e-9 {
            let shares = zip(variations, feature.effectiveShares)
                .map { "\"\($0)\" \(Percent.format($1))" }
                .joined(separator: ", ")
            warn(
                .biasSumOver, "test-biases", nil,
                "\"test-biases\" add up to \(Percent.number(total, digits: 6)), over 100; the app keeps them as written, so the groups get \(shares)",
                "make the biases add up to exactly 100")
        }
    }
}
