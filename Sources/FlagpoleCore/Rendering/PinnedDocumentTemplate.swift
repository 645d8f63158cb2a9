/// A document's pinned form with holes where one user's values go: the bytes of
/// `FeaturesDocument.pinned(points:unlocks:)`, rendered once per revision and filled per user.
///
/// Apps fetch their own pinned document far more often than anything else is asked of the
/// store; rendering the whole document for each would cost more than finding the user's groups.
/// A hole is a scalar in the layout (a number, a bool), so the bytes around it are the same
/// whatever fills it, and a filled template is byte for byte the pinned document.
public struct PinnedDocumentTemplate: Sendable {
    /// What a hole holds.
    public enum Slot: Hashable, Sendable {
        /// `test-variation-assignment` of the bucketed test at this index of the document's features.
        case point(feature: Int)
        /// `unlocked` of the unlock flag at this index, and the file's own value.
        case unlocked(feature: Int, byDefault: Bool)
    }

    /// The holes, in the order they appear.
    public let slots: [Slot]
    /// The rendered bytes without the holes' values.
    private let bytes: [UInt8]
    /// Where each hole is in `bytes`, in order.
    private let offsets: [Int]

    /// Renders `document` with a hole for every bucketed test's point and every unlock flag's
    /// state. `nil` when `document` itself holds a string that could be taken for a hole (one
    /// with U+0000, which the store refuses to import); render such a document whole.
    public init?(_ document: FeaturesDocument, style: JSONWriter.Style = .pretty) {
        var slots: [Slot] = []
        // A hole is written as a string no stored document holds: `"\u0000` and its number.
        func hole(_ slot: Slot) -> JSONValue {
            slots.append(slot)
            return .string("\u{0}\(slots.count - 1)")
        }
        var index = -1
        let value = document.jsonValue { feature in
            index += 1
            let unlocked =
                feature.kind == .unlockFlag
                ? hole(.unlocked(feature: index, byDefault: feature.unlocked ?? false))
                : feature.unlocked.map(JSONValue.bool)
            let assignment = feature.isBucketed ? hole(.point(feature: index)) : nil
            return feature.jsonObject(assignment: assignment, unlocked: unlocked)
        }
        let rendered = JSONWriter(style: style).bytes(of: value)

        var bytes: [UInt8] = []
        bytes.reserveCapacity(rendered.count)
        var offsets: [Int] = []
        var position = 0
        let marker = Array(#""\u0000"#.utf8)
        while let start = Self.firstIndex(of: marker, in: rendered, from: position) {
            var end = start + marker.count
            var number = 0
            while end < rendered.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(rendered[end]) {
                number = number * 10 + Int(rendered[end] - UInt8(ascii: "0"))
                end += 1
            }
            // Holes come in order, each exactly once; anything else means the document wrote a U+0000 itself.
            guard number == offsets.count, end > start + marker.count, end < rendered.count,
                rendered[end] == UInt8(ascii: "\"")
            else {
                return nil
            }
            bytes.append(contentsOf: rendered[position..<start])
            offsets.append(bytes.count)
            position = end + 1
        }
        guard offsets.count == slots.count else { return nil }
        bytes.append(contentsOf: rendered[position...])
        self.slots = slots
        self.bytes = bytes
        self.offsets = offsets
    }

    /// The pinned document: `point` gives each test's point to pin, by feature index; `unlocked`
    /// each unlock flag's state for the user, `nil` for the file's default.
    public func rendered(point: (_ feature: Int) -> Double, unlocked: (_ feature: Int) -> Bool?) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + slots.count * 20)
        var position = 0
        for (slot, offset) in zip(slots, offsets) {
            output.append(contentsOf: bytes[position..<offset])
            position = offset
            switch slot {
            case .point(let feature):
                output.append(contentsOf: JSONWriter.format(point(feature)).utf8)
            case .unlocked(let feature, let byDefault):
                output.append(contentsOf: (unlocked(feature) ?? byDefault ? "true" : "false").utf8)
            }
        }
        output.append(contentsOf: bytes[position...])
        return output
    }

    private static func firstIndex(of marker: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard marker.count <= bytes.count else { return nil }
        var index = start
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], bytes[index..<(index + marker.count)].elementsEqual(marker) { return index }
            index += 1
        }
        return nil
    }
}
