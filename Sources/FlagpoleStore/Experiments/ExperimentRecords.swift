import FlagpoleCore

/// A goal with its row id.
public struct StoredGoal: Hashable, Sendable {
    public var id: Int64
    public var goal: Goal
}

/// An event as received, checked for shape: a goal's event or an exposure.
public struct ReceivedEvent: Hashable, Sendable {
    public var id: String
    public var user: UserID
    /// A goal's name, or `Goal.exposure`.
    public var goal: String
    /// The test an exposure is of.
    public var feature: String?
    public var value: Double?
    /// Unix milliseconds, by the client's clock, and by the server's at receipt.
    public var time: Int64
    public var receivedAt: Int64

    public init(
        id: String, user: UserID, goal: String, feature: String? = nil, value: Double? = nil, time: Int64,
        receivedAt: Int64
    ) {
        self.id = id
        self.user = user
        self.goal = goal
        self.feature = feature
        self.value = value
        self.time = time
        self.receivedAt = receivedAt
    }
}

/// A run of revisions in which a test kept its variations, biases, rules and segments.
struct ExperimentEpoch: Hashable, Sendable {
    var featureID: Int64
    var number: Int64
    var revision: Int
    var startedAt: Int64
    var variations: [String]
    /// Each variation's share (0–100) of the split.
    var shares: [Double]
    var signature: String

    /// The control a readout compares with unless told another: `Disabled` in an on/off test,
    /// whose new arm is `Enabled`, so that its verdict speaks of the new arm ("Enabled lowers
    /// signup"); the first variation otherwise.
    var defaultControl: String {
        let names = variations.map { $0.lowercased() }
        if names.count == 2, Set(names) == ["enabled", "disabled"], let disabled = names.firstIndex(of: "disabled") {
            return variations[disabled]
        }
        return variations.first ?? ""
    }
}

struct ArmRecord: Hashable, Sendable {
    var epoch: Int64
    var variation: String
    var users: Int
    var splitUsers: Int
    var exposedUsers: Int
    var excludedUsers: Int
}

struct TotalRecord: Hashable, Sendable {
    var epoch: Int64
    var goalID: Int64
    var variation: String
    var itt: SumDelta
    var exposed: SumDelta
    /// Of the users the split placed in the epoch (first assigned, not moved in).
    var split: SumDelta
}

struct DayRecord: Hashable, Sendable {
    var day: Int64
    var variation: String
    var users: Int
    var sum: Double
    var sumOfSquares: Double
    var exposedUsers: Int
    var exposedSum: Double
    var exposedSumOfSquares: Double
}

/// Events, and the sum and sum of squares of users' totals: a change of them, or their value.
struct SumDelta: Hashable, Sendable {
    var events = 0
    var sum = 0.0
    var sumOfSquares = 0.0

    /// A user's total went from `old` to `new` with `events` more events.
    mutating func add(from old: Double, to new: Double, events: Int) {
        self.events += events
        sum += new - old
        sumOfSquares += new * new - old * old
    }
}

/// What one write changes in the figures, summed before it reaches the database: a batch of a
/// thousand events touches a few rows per test.
struct ExperimentDeltas {
    struct ArmKey: Hashable {
        var featureID: Int64
        var epoch: Int64
        var variation: String
    }

    struct TotalKey: Hashable {
        var featureID: Int64
        var epoch: Int64
        var variation: String
        var goalID: Int64
    }

    struct EpochKey: Hashable {
        var featureID: Int64
        var epoch: Int64
    }

    struct ArmDelta {
        var users = 0
        var splitUsers = 0
        var exposedUsers = 0
        var excludedUsers = 0
    }

    struct TotalDelta {
        var itt = SumDelta()
        var exposed = SumDelta()
        /// Of the users the split placed in the epoch only.
        var split = SumDelta()
    }

    var arms: [ArmKey: ArmDelta] = [:]
    var totals: [TotalKey: TotalDelta] = [:]
    var touchedEpochs: Set<EpochKey> = []

    var isEmpty: Bool { arms.isEmpty && totals.isEmpty }

    mutating func arm(_ featureID: Int64, _ stint: ExperimentUserState.Stint, _ change: (inout ArmDelta) -> Void) {
        change(&arms[ArmKey(featureID: featureID, epoch: stint.epoch, variation: stint.variation), default: ArmDelta()])
        touchedEpochs.insert(EpochKey(featureID: featureID, epoch: stint.epoch))
    }

    mutating func total(
        _ featureID: Int64, _ stint: ExperimentUserState.Stint, goalID: Int64, _ change: (inout TotalDelta) -> Void
    ) {
        change(
            &totals[
                TotalKey(featureID: featureID, epoch: stint.epoch, variation: stint.variation, goalID: goalID),
                default: TotalDelta()])
        touchedEpochs.insert(EpochKey(featureID: featureID, epoch: stint.epoch))
    }
}
