/// What a test is judged on: something users do, defined once per environment.
public struct Goal: Hashable, Sendable, Codable {
    /// How a user's events for the goal add up to their total.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// Did the user do it at least once: their total is 0 or 1.
        case conversion
        /// How many times they did it: each event adds 1.
        case count
        /// A sum, such as revenue: each event adds its value.
        case value

        /// A user's total after one more event of `value` (`nil` for conversion and count).
        public func total(after total: Double, adding value: Double?) -> Double {
            switch self {
            case .conversion: 1
            case .count: total + 1
            case .value: total + (value ?? 0)
            }
        }
    }

    /// Which way of the total is good for the product.
    public enum Direction: String, Hashable, Sendable, Codable, CaseIterable {
        case higher, lower
    }

    public var name: String
    public var kind: Kind
    public var better: Direction

    public init(name: String, kind: Kind, better: Direction = .higher) {
        self.name = name
        self.kind = kind
        self.better = better
    }

    /// The name an app's exposure events carry instead of a goal's.
    public static let exposure = "$exposure"

    /// Why `name` can't name a goal, `nil` when it can.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty || name.unicodeScalars.count > 100 {
            return "a goal's name has 1 to 100 characters"
        }
        if name.hasPrefix("$") {
            return "names starting with `$` are Flagpole's (`\(exposure)`)"
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a goal's name can't hold control characters"
        }
        return nil
    }
}
