/// The warnings that only a comparison with the store can give (W250–W252): what replacing
/// the current document with a file does to devices that already run the current one.
public enum ImportReview {
    /// Reviews `decoded` (a valid file) as the replacement of `current`.
    ///
    /// `archived` are features that left earlier documents: devices still cache them, so one
    /// that comes back is judged against its last version too.
    public static func review(
        _ decoded: DecodedDocument, replacing current: FeaturesDocument, archived: [Feature] = []
    ) -> [Diagnostic] {
        guard let next = decoded.document else { return [] }
        let previousByName = Dictionary(
            (archived + current.features).map { ($0.name, $0) }, uniquingKeysWith: { _, latest in latest })
        var findings: [DecodedDocument.Finding] = []
        for (index, feature) in next.features.enumerated() {
            guard let previous = previousByName[feature.name] else { continue }
            if let finding = flagBecameTest(previous, feature, index: index)
                ?? needlessMoves(previous, feature, index: index)
            {
                findings.append(finding)
            }
        }
        let nextNames = Set(next.features.map(\.name))
        let absent = current.features.filter { !nextNames.contains($0.name) }.map { feature in
            Diagnostic(
                .featureAbsent, feature: feature.name, pointer: decoded.featuresPointer, location: nil,
                message:
                    "\"\(feature.name)\" is in the store but not in this file; it will be archived: FeatureFlags apps keep their last copy of it, while Bucketeer and OpenFeature apps fall back to the default in their code",
                fix: "to switch it off on every device, keep it in the file with \"enabled\": false")
        }
        return decoded.locate(findings) + absent
    }

    /// W251: devices that cached a plain flag hold point 1 or 99 and keep it.
    static func flagBecameTest(_ previous: Feature, _ feature: Feature, index: Int) -> DecodedDocument.Finding? {
        guard previous.hasFixedPoint, !previous.kind.isTest, !feature.hasFixedPoint, feature.kind.isTest else {
            return nil
        }
        return DecodedDocument.Finding(
            featureIndex: index, key: "test-variations", code: .flagBecameTest,
            message:
                "\"\(feature.name)\" was a plain flag and is now \(feature.kind.withArticle) under the same name; devices that cached it keep point \(previous.isEnabled ? "1" : "99"), so all of them land in one group",
            fix: "give the test a new feature name")
    }

    /// W252: more users change group than the new sizes require.
    static func needlessMoves(_ previous: Feature, _ feature: Feature, index: Int) -> DecodedDocument.Finding? {
        guard !previous.hasFixedPoint, !feature.hasFixedPoint else { return nil }
        let before = VariationRanges(of: previous)
        let after = VariationRanges(of: feature)
        let moving = before.movingShare(to: after)
        let minimal = before.minimalMovingShare(to: after)
        guard moving > minimal + 1e-9 else { return nil }
        let oldNames = previous.effectiveVariations.map { $0.lowercased() }
        let newNames = feature.effectiveVariations.map { $0.lowercased() }
        let isReordered = oldNames != newNames && oldNames.sorted() == newNames.sorted()
        let cause = isReordered ? "the variations were re-ordered" : "a middle group changed"
        return DecodedDocument.Finding(
            featureIndex: index, key: isReordered ? "test-variations" : "test-biases", code: .needlessMoves,
            message:
                "\(cause): \(Percent.format(moving)) of users change group where \(Percent.format(minimal)) would suffice",
            fix: isReordered
                ? "keep the variations in their previous order"
                : "change only the first or the last group's bias, or accept the extra moves")
    }

}
