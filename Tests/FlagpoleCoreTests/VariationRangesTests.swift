import FlagpoleCore
import Testing

/// FORMAT.md §5: the ranges each variation owns, and who moves when they change.
@Suite("Variation ranges (FORMAT §5)")
struct VariationRangesTests {
    @Test("Variation i owns [Σ_{j<i}, Σ_{j≤i}), in array order")
    func ranges() {
        let ranges = VariationRanges(names: ["A", "B", "C"], biases: [20, 30, 50]).ranges
        #expect(ranges.map(\.name) == ["A", "B", "C"])
        #expect(ranges.map(\.lower) == [0, 20, 50])
        #expect(ranges.map(\.upper) == [20, 50, 100])
        #expect(ranges.map(\.width) == [20, 30, 50])
    }

    @Test("Ranges are cut at 100: [60, 60] leaves 40 to the second group, [50, 50, 50] none to the third")
    func cutAtHundred() {
        let over = VariationRanges(names: ["A", "B"], biases: [60, 60]).ranges
        #expect(over.map(\.lower) == [0, 60])
        #expect(over.map(\.upper) == [60, 100])
        #expect(over.map(\.width) == [60, 40])
        let unreachable = VariationRanges(names: ["A", "B", "C"], biases: [50, 50, 50]).ranges
        #expect(unreachable.map(\.width) == [50, 50, 0])
    }

    @Test("A feature's ranges use the biases the client keeps")
    func rangesOfFeature() {
        let short = Feature(name: "f", testVariations: ["A", "B"], testBiases: [50, 49])
        #expect(VariationRanges(of: short).ranges.map(\.width) == [50, 50])
        let flag = Feature(name: "f", enabled: true)
        #expect(VariationRanges(of: flag).ranges.map(\.name) == ["Enabled", "Disabled"])
        let single = Feature(name: "f", testVariations: ["X"], testBiases: [30, 70])
        #expect(VariationRanges(of: single).ranges.map(\.name) == ["X", "!X"])
        #expect(VariationRanges(of: single).ranges.map(\.width) == [30, 70])
    }

    struct Move: Sendable, CustomTestStringConvertible {
        var before: ([String], [Double])
        var after: ([String], [Double])
        /// `from>to:share`, in any order.
        var transitions: Set<String>
        var moving: Double
        var minimal: Double
        var label: String

        var testDescription: String { label }
    }

    static let moves: [Move] = [
        Move(
            before: (["A", "B"], [10, 90]), after: (["A", "B"], [20, 80]),
            transitions: ["B>A:10"], moving: 10, minimal: 10, label: "growing the first group moves the growth"),
        Move(
            before: (["A", "B"], [80, 20]), after: (["A", "B"], [70, 30]),
            transitions: ["A>B:10"], moving: 10, minimal: 10, label: "growing the last group moves the growth"),
        Move(
            before: (["Enabled", "Disabled"], [20, 80]), after: (["Enabled", "Disabled"], [100, 0]),
            transitions: ["Disabled>Enabled:80"], moving: 80, minimal: 80, label: "a roll-out to 100 %"),
        Move(
            before: (["A", "B", "C"], [30, 30, 40]), after: (["A", "B", "C"], [40, 20, 40]),
            transitions: ["B>A:10"], moving: 10, minimal: 10,
            label: "growing the first group of an MVT at its neighbour's cost"),
        Move(
            before: (["A", "B", "C"], [40, 30, 30]), after: (["A", "B", "C"], [40, 20, 40]),
            transitions: ["B>C:10"], moving: 10, minimal: 10,
            label: "growing the last group of an MVT at its neighbour's cost"),
        Move(
            before: (["A", "B", "C"], [20, 20, 60]), after: (["A", "B", "C"], [30, 20, 50]),
            transitions: ["B>A:10", "C>B:10"], moving: 20, minimal: 10,
            label: "a middle group shifts between its neighbours"),
        Move(
            before: (["A", "B"], [50, 50]), after: (["B", "A"], [50, 50]),
            transitions: ["A>B:50", "B>A:50"], moving: 100, minimal: 0,
            label: "re-ordering two variations moves everyone"),
        Move(
            before: (["A", "B", "C"], [20, 30, 50]), after: (["C", "A", "B"], [50, 20, 30]),
            transitions: ["A>C:20", "B>C:30", "C>A:20", "C>B:30"], moving: 100, minimal: 0,
            label: "re-ordering three variations moves everyone"),
        Move(
            before: (["A", "B"], [50, 50]), after: (["a", "b"], [50, 50]),
            transitions: [], moving: 0, minimal: 0, label: "names compare case-insensitively"),
        Move(
            before: (["A", "B"], [50, 50]), after: (["A", "C"], [50, 50]),
            transitions: ["B>C:50"], moving: 50, minimal: 50, label: "a renamed variation takes its users with a move"),
        Move(
            before: (["A", "B"], [60, 60]), after: (["A", "B"], [50, 50]),
            transitions: ["A>B:10"], moving: 10, minimal: 10, label: "sums over 100 count only what is reachable"),
        Move(
            before: (["A", "B", "C"], [50, 50, 50]), after: (["A", "B", "C"], [50, 50, 0]),
            transitions: [], moving: 0, minimal: 0, label: "an unreachable group has nobody to move"),
        Move(
            before: (["A", "B"], [30, 70]), after: (["A", "B"], [30, 70]),
            transitions: [], moving: 0, minimal: 0, label: "no change, no move"),
    ]

    @Test("Transitions and moving shares", arguments: moves)
    func transitions(move: Move) {
        let before = VariationRanges(names: move.before.0, biases: move.before.1)
        let after = VariationRanges(names: move.after.0, biases: move.after.1)
        let transitions = before.transitions(to: after)
        let described = Set(transitions.map { "\($0.from)>\($0.to):\(JSONWriter.format($0.share))" })
        #expect(described == move.transitions)
        #expect(transitions.count == move.transitions.count)
        #expect(TestSupport.isClose(before.movingShare(to: after), move.moving))
        #expect(TestSupport.isClose(before.minimalMovingShare(to: after), move.minimal))
    }

    @Test("Growing the first group keeps its users in: 10 % → 20 % keeps the first 10 %")
    func monotoneGrowth() {
        let ten = VariationRanges(names: ["Enabled", "Disabled"], biases: [10, 90])
        let twenty = VariationRanges(names: ["Enabled", "Disabled"], biases: [20, 80])
        #expect(!ten.transitions(to: twenty).contains { $0.from == "Enabled" })
        #expect(twenty.ranges[0].lower == 0 && twenty.ranges[0].upper >= ten.ranges[0].upper)
    }
}
