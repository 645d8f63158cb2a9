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

    /// Variable-length integers (LEB128; zigzag for times) and 8-byte doubles, the exposed
    /// figures only for an exposed stint: the rows are read and written on every event, and a
    /// user in ten tests fits in the B-tree's page (over about 1 000 bytes, SQLite moves a row
    /// to an overflow page of its own).
    var encoded: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(8 + 40 * memberships.count + 16 * pending.count)
        out.append(1)  // Format version.
        out.putVarint(UInt64(memberships.count))
        for membership in memberships {
            out.putSigned(membership.featureID)
            out.putVarint(UInt64(membership.stints.count))
            for stint in membership.stints {
                out.putSigned(stint.epoch)
                out.putVarint(UInt64(stint.variation.utf8.count))
                out.append(contentsOf: stint.variation.utf8)
                out.putSigned(stint.joinedAt)
                out.append((stint.bySplit ? 1 : 0) | (stint.isExcluded ? 2 : 0) | (stint.exposedAt != nil ? 4 : 0))
                if let exposedAt = stint.exposedAt { out.putSigned(exposedAt) }
                out.putVarint(UInt64(stint.totals.count))
                for total in stint.totals {
                    out.putSigned(total.goalID)
                    out.putDouble(total.total)
                    out.putVarint(UInt64(total.events))
                    if stint.exposedAt != nil {
                        out.putDouble(total.exposedTotal)
                        out.putVarint(UInt64(total.exposedEvents))
                    }
                }
            }
        }
        out.putVarint(UInt64(pending.count))
        for event in pending {
            out.putSigned(event.goalID)
            out.putSigned(event.time)
            out.append(event.value == nil ? 0 : 1)
            if let value = event.value { out.putDouble(value) }
        }
        return out
    }

    /// Decodes `encoded`; `nil` for bytes it didn't write.
    init?(encoded bytes: [UInt8]) {
        var reader = ByteReader(bytes: bytes)
        guard reader.byte() == 1, let count = reader.count() else { return nil }
        for _ in 0..<count {
            guard let featureID = reader.signed(), let stintCount = reader.count() else { return nil }
            var membership = Membership(featureID: featureID, stints: [])
            for _ in 0..<stintCount {
                guard let epoch = reader.signed(), let variation = reader.string(), let joinedAt = reader.signed(),
                    let flags = reader.byte()
                else { return nil }
                var stint = Stint(epoch: epoch, variation: variation, joinedAt: joinedAt, bySplit: flags & 1 != 0)
                stint.isExcluded = flags & 2 != 0
                if flags & 4 != 0 {
                    guard let exposedAt = reader.signed() else { return nil }
                    stint.exposedAt = exposedAt
                }
                guard let totalCount = reader.count() else { return nil }
                for _ in 0..<totalCount {
                    guard let goalID = reader.signed(), let value = reader.double(), let events = reader.count() else {
                        return nil
                    }
                    var total = GoalTotal(goalID: goalID, total: value, events: UInt32(events))
                    if stint.exposedAt != nil {
                        guard let exposed = reader.double(), let exposedEvents = reader.count() else { return nil }
                        total.exposedTotal = exposed
                        total.exposedEvents = UInt32(exposedEvents)
                    }
                    stint.totals.append(total)
                }
                membership.stints.append(stint)
            }
            memberships.append(membership)
        }
        guard let pendingCount = reader.count() else { return nil }
        for _ in 0..<pendingCount {
            guard let goalID = reader.signed(), let time = reader.signed(), let hasValue = reader.byte() else {
                return nil
            }
            var value: Double?
            if hasValue == 1 {
                guard let double = reader.double() else { return nil }
                value = double
            }
            pending.append(PendingEvent(goalID: goalID, time: time, value: value))
        }
        guard reader.isAtEnd else { return nil }
    }

    init() {}
}

extension [UInt8] {
    fileprivate mutating func putVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    /// Zigzag: small magnitudes of either sign take few bytes.
    fileprivate mutating func putSigned(_ value: Int64) {
        putVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    fileprivate mutating func putDouble(_ value: Double) {
        Swift.withUnsafeBytes(of: value.bitPattern.littleEndian) { append(contentsOf: $0) }
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

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = byte() {
            guard shift < 64 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// A count or length: at most what the row could hold.
    mutating func count() -> Int? {
        guard let value = varint(), value <= UInt64(bytes.count) else { return nil }
        return Int(value)
    }

    mutating func signed() -> Int64? {
        varint().map { Int64(bitPattern: ($0 >> 1) ^ (0 &- ($0 & 1))) }
    }

    mutating func double() -> Double? {
        guard position + 8 <= bytes.count else { return nil }
        let bits = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: position, as: UInt64.self) }
        position += 8
        return Double(bitPattern: UInt64(littleEndian: bits))
    }

    mutating func string() -> String? {
        guard let count = count(), position + count <= bytes.count else { return nil }
        defer { position += count }
        return String(decoding: bytes[position..<position + count], as: UTF8.self)
    }
}
