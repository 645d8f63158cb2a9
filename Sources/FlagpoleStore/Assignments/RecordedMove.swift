import FlagpoleCore
import Foundation

/// Recorded users moving from one variation to another.
struct RecordedMove: Hashable, Sendable {
    var from: String
    var to: String
    var users: Int
}

/// A variation users leave and the one they join.
struct MovePair: Hashable {
    var from: String
    var to: String
}

/// Recorded moves summed by pair, in the order pairs first appear; pairs are found by a
/// dictionary, as a test with many variations yields many of them.
struct MoveTally {
    private(set) var moves: [RecordedMove] = []
    private var positions: [MovePair: Int] = [:]

    /// Adds `move`'s users to its pair.
    mutating func add(_ move: RecordedMove) {
        let pair = MovePair(from: move.from, to: move.to)
        if let index = positions[pair] {
            moves[index].users += move.users
        } else if move.users > 0 {
            positions[pair] = moves.count
            moves.append(move)
        }
    }
}

extension VariationRanges {
    /// The points whose variation differs between `self` and `next` (names compared exactly, as
    /// the store records them), with their owner before and after: the only points a
    /// re-evaluation must visit, since every recorded user is kept in the group of their point.
    func changedIntervals(to next: VariationRanges) -> [(lower: Double, upper: Double, from: String, to: String)] {
        var intervals: [(lower: Double, upper: Double, from: String, to: String)] = []
        // Both lists run up [0, 100] in order: sweep them together rather than pair every
        // range with every other (a test may have tens of thousands of variations).
        var first = 0
        for oldIndex in ranges.indices {
            let old = bounds(of: oldIndex)
            guard old.lower < old.upper else { continue }
            while first < next.ranges.count && next.bounds(of: first).upper <= old.lower { first += 1 }
            for newIndex in next.ranges.indices[first...] {
                let new = next.bounds(of: newIndex)
                guard new.lower < old.upper else { break }
                guard ranges[oldIndex].name != next.ranges[newIndex].name else { continue }
                let lower = max(old.lower, new.lower)
                let upper = min(old.upper, new.upper)
                if lower < upper { intervals.append((lower, upper, ranges[oldIndex].name, next.ranges[newIndex].name)) }
            }
        }
        return intervals
    }
}

extension StoredFeature {
    /// `users` by variation in the feature's order, then any other variations by name. SQLite
    /// groups by bytes and Swift compares names as text, so "\u{E9}" and "e\u{301}" arrive as
    /// two rows and are summed into one name.
    func ordered(_ users: [String: Int]) -> [VariationCount] {
        var users = users
        var result: [VariationCount] = []
        var listed: Set<String> = []
        for variation in feature.effectiveVariations where listed.insert(variation).inserted {
            result.append(VariationCount(variation: variation, users: users.removeValue(forKey: variation) ?? 0))
        }
        return result
            + users.filter { $0.value != 0 }.sorted { $0.key < $1.key }.map {
                VariationCount(variation: $0.key, users: $0.value)
            }
    }
}

extension Date {
    /// Milliseconds since 1970, as the per-user tables keep time.
    public var unixMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    init(unixMilliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(unixMilliseconds) / 1000)
    }
}
