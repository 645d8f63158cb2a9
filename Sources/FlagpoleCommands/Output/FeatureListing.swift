import FlagpoleCore

/// Features as `feature list` and `demo` show them: kind, state, variations with the biases
/// the app actually uses, and labels.
struct FeatureListing {
    let document: FeaturesDocument

    var text: String {
        guard !document.features.isEmpty else { return "No features." }
        return document.features.map { feature in
            var heading = "\(feature.name)  ·  \(feature.kind)  ·  \(feature.isEnabled ? "enabled" : "disabled")"
            if let section = feature.section { heading += "  ·  section \(section)" }
            if let unlocked = feature.unlocked { heading += "  ·  unlocked by default: \(unlocked)" }
            guard feature.kind.isTest || feature.declaredVariationCount > 0 else { return heading }
            let labels = feature.labels ?? []
            let names = feature.effectiveVariations
            let width = names.map(\.count).max() ?? 0
            let rows = zip(names, feature.effectiveShares).enumerated().map { index, pair in
                let label = labels.indices.contains(index) ? labels[index].map { "  \($0)" } ?? "" : ""
                let share = Percent.number(pair.1)
                return
                    "    \(pair.0.padding(toLength: width, withPad: " ", startingAt: 0))  \(share.leftPadded(6)) %\(label)"
            }
            return ([heading] + rows).joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
