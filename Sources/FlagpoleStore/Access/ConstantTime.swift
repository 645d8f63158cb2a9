/// Comparisons of secrets whose time depends on the lengths only, never on where the bytes
/// first differ, so response timing says nothing about how close a guess came.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, reading every byte of both whatever differs.
    public static func isEqual<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
