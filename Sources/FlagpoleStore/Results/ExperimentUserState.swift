import Foundation

/// One user's part in an environment's tests, kept in one row of `experiment_users`: for each
/// test, the stints they had (which variation, in which epoch, since when, exposed when) and,
/// per stint and goal, their totals. Events update totals here and the change in the
/// variation's sums follows from the user's old and new total, so the readout never scans
/// events, and an event costs one read and one write whatever the number of tests.
struct ExperimentUserState: Equatable {
    struct Membership: Equatable {
        var featureID: Int64
        /// Oldest first; a user who moves starts a new stint.
        var stints: [Stint]

        /// The stint the user was in at `time`: the last that began at or before it.
        func stintIndex(at time: Int64) -> Int? {
            stints.lastIndex { $0.joinedAt <= time }
        }
    }

    struct Stint: Equatable {
        var epoch: Int64
        var variation: String
        var joinedAt: Int64
        /// First assigned by the test's split: counted by the sample-ratio check.
        var bySplit: Bool
        /// Seen in two variations of this epoch: excluded from its readout.
        var isExcluded: Bool
        var exposedAt: Int64?
        var totals: [GoalTotal]

        init(epoch: Int64, variation: String, joinedAt: Int64, bySplit: Bool) {
            self.epoch = epoch
            self.variation = variation
            self.joinedAt = joinedAt
            self.bySplit = bySplit
            isExcluded = false
            totals = []
        }

        func total(of goalID: Int64) -> GoalTotal {
            totals.first { $0.goalID == goalID } ?? GoalTotal(goalID: goalID)
        }

        mutating func setTotal(_ total: GoalTotal) {
            if let index = totals.firstIndex(where: { $0.goalID == total.goalID }) {
                totals[index] = total
            } else {
                totals.append(total)
            }
        }
    }

    struct GoalTotal: Equatable {
        var goalID: Int64
        /// Since joining the stint, and since exposure.
        var total = 0.0
        var exposedTotal = 0.0
        var events: UInt32 = 0
        var exposedEvents: UInt32 = 0
    }

    struct PendingEvent: Equatable {
        var goalID: Int64
        var time: Int64
        var value: Double?
    }

    /// Enough for a session's worth of events before the app says what it showed; older ones
    /// give way, and the docs say so.
    static let pendingLimit = 64

    var memberships: [Membership] = []
    /// The user's events while a stint they count for has no exposure yet, once for all their
    /// tests (up to `pendingLimit`), so an exposure reported late still counts the events that
    /// followed it. Emptied when every stint that counts is exposed.
    var pending: [PendingEvent] = []

    func membershipIndex(of featureID: Int64) -> Int? {
        memberships.firstIndex { $0.featureID == featureID }
    }

    // MARK: Encoding

    /// Little-endian fixed widths and length-prefixed strings: the rows are read and written on
    /// every event, so no JSON.
    var encoded: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(
            5
                + memberships.reduce(0) { size, membership in
                    size + 12
                        + membership.stints.reduce(0) {
                            $0 + 40 + $1.variation.utf8.count + 28 * $1.totals.count
                        }
                })
        out.append(1)  // Format version.
        out.put(UInt32(memberships.count))
        for membership in memberships {
            out.put(membership.featureID)
            out.put(UInt32(membership.stints.count))
            for stint in membership.stints {
                out.put(stint.epoch)
                out.put(stint.variation)
                out.put(stint.joinedAt)
                out.append((stint.bySplit ? 1 : 0) | (stint.isExcluded ? 2 : 0) | (stint.exposedAt != nil ? 4 : 0))
                if let exposedAt = stint.exposedAt { out.put(exposedAt) }
                out.put(UInt32(stint.totals.count))
                for total in stint.totals {
                    out.put(total.goalID)
                    out.put(total.total.bitPattern)
                    out.put(total.exposedTotal.bitPattern)
                    out.put(total.events)
                    out.put(total.exposedEvents)
                }
            }
        }
        out.put(UInt32(pending.count))
        for event in pending {
            out.put(event.goalID)
            out.put(event.time)
            out.append(event.value == nil ? 0 : 1)
            if let value = event.value { out.put(value.bitPattern) }
        }
        return out
    }

    /// Decodes `encoded`; `nil` for bytes it didn't write.
    init?(encoded bytes: [UInt8]) {
        var reader = ByteReader(bytes: bytes)
        guard reader.byte() == 1, let count = reader.uint32() else { return nil }
        for _ in 0..<count {
            guard let featureID = reader.int64(), let stintCount = reader.uint32() else { return nil }
            var membership = Membership(featureID: featureID, stints: [])
            for _ in 0..<stintCount {
                guard let epoch = reader.int64(), let variation = reader.string(), let joinedAt = reader.int64(),
                    let flags = reader.byte()
                else { return nil }
                var stint = Stint(epoch: epoch, variation: variation, joinedAt: joinedAt, bySplit: flags & 1 != 0)
                stint.isExcluded = flags & 2 != 0
                if flags & 4 != 0 {
                    guard let exposedAt = reader.int64() else { return nil }
                    stint.exposedAt = exposedAt
                }
                guard let totalCount = reader.uint32() else { return nil }
                for _ in 0..<totalCount {
                    guard let goalID = reader.int64(), let total = reader.uint64(), let exposed = reader.uint64(),
                        let events = reader.uint32(), let exposedEvents = reader.uint32()
                    else { return nil }
                    stint.totals.append(
                        GoalTotal(
                            goalID: goalID, total: Double(bitPattern: total), exposedTotal: Double(bitPattern: exposed),
                            events: events, exposedEvents: exposedEvents))
                }
                membership.stints.append(stint)
            }
            memberships.append(membership)
        }
        guard let pendingCount = reader.uint32() else { return nil }
        for _ in 0..<pendingCount {
            guard let goalID = reader.int64(), let time = reader.int64(), let hasValue = reader.byte() else {
                return nil
            }
            var value: Double?
            if hasValue == 1 {
                guard let bits = reader.uint64() else { return nil }
                value = Double(bitPattern: bits)
            }
            pending.append(PendingEvent(goalID: goalID, time: time, value: value))
        }
        guard reader.isAtEnd else { return nil }
    }

    init() {}
}

extension [UInt8] {
    fileprivate mutating func put<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func put(_ text: String) {
        put(UInt32(text.utf8.count))
        append(contentsOf: text.utf8)
    }
}

private struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard position + size <= bytes.count else { return nil }
        let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: position, as: T.self) }
        position += size
        return T(littleEndian: value)
    }

    mutating func uint32() -> UInt32? { integer(UInt32.self) }
    mutating func uint64() -> UInt64? { integer(UInt64.self) }
    mutating func int64() -> Int64? { integer(Int64.self) }

    mutating func string() -> String? {
        guard let count = uint32().map(Int.init), position + count <= bytes.count else { return nil }
        defer { position += count }
        return String(decoding: bytes[position..<position + count], as: UTF8.self)
    }
}
