extension FeaturesDocument {
    /// The document one user's app should fetch (FORMAT.md §5–§6): every test carries the
    /// user's point as `test-variation-assignment`, which a fresh install adopts for good, and
    /// every unlock flag the user's own `unlocked` state.
    ///
    /// - parameter points: the point to pin, by test name.
    /// - parameter unlocks: the user's unlock state, by unlock flag name; flags not named keep
    ///   their default.
    public func pinned(points: [String: Double], unlocks: [String: Bool]) -> FeaturesDocument.Pinned {
        var document = self
        for index in document.features.indices {
            if let unlocked = unlocks[document.features[index].name], document.features[index].kind == .unlockFlag {
                document.features[index].unlocked = unlocked
            }
        }
        return Pinned(value: document.jsonValue(assignments: points))
    }

    /// A per-user document: it carries keys a shared document never does, so it is only rendered.
    public struct Pinned: Sendable {
        let value: JSONValue

        /// The pinned document's bytes, in the export's layout.
        public func rendered(_ style: JSONWriter.Style = .pretty) -> [UInt8] {
            JSONWriter(style: style).bytes(of: value)
        }
    }
}
