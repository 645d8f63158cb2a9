/// Reads a features.json file as the client does and reports, with positions, everything
/// the client would reject (errors) or silently change (warnings) — all of it, not only
/// the first problem.
public enum DocumentDecoder {
    /// The largest file read, in bytes (64 MiB): a larger one is refused (E100) before parsing.
    ///
    /// Far above any real features.json (the app downloads and decodes the whole file at every
    /// launch), and enough for 100 000 features as Scripts/bench generates them (35 MB); it bounds
    /// the time and memory of a validation or an import (an import peaks at about 15 times the
    /// file's size). Commands that read files check it before reading them.
    public static let maximumInputSize = 64 << 20

    /// Decodes `bytes` (UTF-8, an optional byte-order mark) into a document and diagnostics.
    public static func decode(_ bytes: [UInt8]) -> DecodedDocument {
        guard bytes.count <= maximumInputSize else {
            // No line table for a file this size: the problem is the whole file, not a place in it.
            let tooLarge = Diagnostic(
                .notStrictJSON, feature: nil, pointer: .root, location: nil,
                message:
                    "the file is \(bytes.count) bytes, over the \(maximumInputSize) bytes (\(maximumInputSize >> 20) MiB) Flagpole reads",
                fix:
                    "check that this is the right file: an app's features.json is rarely more than a few hundred kilobytes"
            )
            return DecodedDocument(
                document: nil, diagnostics: [tooLarge], sources: [], bytes: [], featuresPointer: .root)
        }
        var pending = PendingDiagnostics()
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            pending.add(.notStrictJSON, feature: nil, at: .root, offset: error.offset, error.message, fix: error.fix)
            return DecodedDocument(
                document: nil, diagnostics: pending.located(in: bytes), sources: [], bytes: bytes,
                featuresPointer: .root)
        }
        guard let shape = DocumentShape(root, pending: &pending) else {
            return DecodedDocument(
                document: nil, diagnostics: pending.located(in: bytes), sources: [], bytes: bytes,
                featuresPointer: .root)
        }

        var features: [Feature] = []
        var sources: [DecodedDocument.FeatureSource] = []
        var firstPointerByName: [String: JSONPointer] = [:]
        for (index, node) in shape.featureNodes.enumerated() {
            let pointer = shape.featuresPointer.appending(index)
            guard let feature = FeatureDecoder.decode(node, at: pointer, pending: &pending) else { continue }
            if let first = firstPointerByName[feature.name] {
                pending.add(
                    .duplicateName, feature: feature.name, at: pointer, offset: node.offset,
                    "a feature named \"\(feature.name)\" already appears at \(first); the app sees only the first, so the store keeps the first and drops this one",
                    fix: "rename this feature or delete one of the two")
                continue
            }
            firstPointerByName[feature.name] = pointer
            FeatureLint.check(feature, node: node, at: pointer, pending: &pending)
            features.append(feature)
            sources.append(DecodedDocument.FeatureSource(pointer: pointer, node: node))
        }

        let document =
            pending.hasErrors
            ? nil
            : FeaturesDocument(features: features, extras: shape.extras, featuresPosition: shape.featuresPosition)
        return DecodedDocument(
            document: document, diagnostics: pending.located(in: bytes), sources: sources, bytes: bytes,
            featuresPointer: shape.featuresPointer)
    }
}

/// The top level of a file: where the features array is and what surrounds it (FORMAT.md §1).
private struct DocumentShape {
    var featureNodes: [JSONNode]
    var featuresPointer: JSONPointer
    var extras = JSONObject()
    var featuresPosition = 0

    init?(_ root: JSONNode, pending: inout PendingDiagnostics) {
        switch root.content {
        case .array(let elements):
            // The shape of the client's own cache: accepted as is.
            featureNodes = elements
            featuresPointer = .root
        case .object(let members):
            guard let position = members.firstIndex(where: { $0.key == "features" }) else {
                pending.add(
                    .notAFeaturesDocument, feature: nil, at: .root, offset: root.offset,
                    "the top-level object has no \"features\" key; the app rejects the file",
                    fix: "put the features in an array under \"features\": {\"features\": [...]}")
                return nil
            }
            let features = members[position].node
            featuresPointer = JSONPointer.root.appending("features")
            featuresPosition = position
            extras = JSONObject(
                members.enumerated().filter { $0.offset != position }.map {
                    JSONObject.Member(key: $0.element.key, value: $0.element.node.value)
                })
            for member in members where member.key.containsNUL {
                pending.add(
                    .nulCharacter, feature: nil, at: JSONPointer.root.appending(member.key), offset: member.keyOffset,
                    "this top-level key contains the NUL character (U+0000): the app ignores it, but Flagpole cannot store it",
                    fix: "remove the \\u0000 from the key")
            }
            switch features.content {
            case .array(let elements):
                featureNodes = elements
            case .object:
                pending.add(
                    .featuresNotAnArray, feature: nil, at: featuresPointer, offset: features.offset,
                    "\"features\" is an object, not an array; the app rejects the file",
                    fix: "make \"features\" an array of feature objects: \"features\": [{\"name\": ...}]")
                return nil
            default:
                pending.add(
                    .featuresNotAnArray, feature: nil, at: featuresPointer, offset: features.offset,
                    "\"features\" is \(features.value.summary), not an array; the app crashes on this file",
                    fix: "make \"features\" an array of feature objects, or [] for none")
                return nil
            }
        default:
            pending.add(
                .notAFeaturesDocument, feature: nil, at: .root, offset: root.offset,
                "the file is \(root.value.summary), not an object with \"features\" or an array; the app rejects it",
                fix: "write {\"features\": [...]}")
            return nil
        }
    }
}
