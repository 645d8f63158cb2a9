/// How the store puts a user in a group, the way a device would (FORMAT.md §5).
extension Feature {
    /// Whether users are split by their point: only tests with variations are. Plain,
    /// development and unlock flags show every user the same state, and so does a test declared
    /// by `type` without `test-variations`: the client then gives every device point 1 (enabled)
    /// or 99, whatever its own draw.
    public var isBucketed: Bool {
        kind.isTest && !hasFixedPoint
    }

    /// The groups the store records users in: everyone in `Disabled` while the feature is
    /// disabled (as the client does), everyone in `Enabled` on an enabled plain flag, else the
    /// test's ranges with the biases the client uses.
    public var assignmentRanges: VariationRanges {
        if !isEnabled { return VariationRanges(names: ["Disabled"], biases: [100]) }
        if !isBucketed { return VariationRanges(names: ["Enabled"], biases: [100]) }
        return VariationRanges(of: self)
    }

    /// The variation of a user at `point`.
    public func variation(at point: Double) -> String {
        // Never nil: every feature has at least two effective variations.
        assignmentRanges.variation(at: point)!
    }
}
