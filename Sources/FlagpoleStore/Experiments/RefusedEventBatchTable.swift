import FlagpoleCore
import Foundation

/// The one home of every statement on `refused_event_batches`.
struct RefusedEventBatchTable {
    let db: Transaction

    /// How long rows are kept: the listings look back a day.
    static let kept: TimeInterval = 48 * 3600

    /// Adds `batches` to the hour's count of the cause and key: several servers add up.
    func add(_ batches: Int, environmentID: Int64, cause: EventBatchRefusal, keyPrefix: String, at time: Date) throws {
        try db.execute(
            """
            INSERT INTO refused_event_batches (environment_id, hour, cause, key_prefix, batches, last_at)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (environment_id, hour, cause, key_prefix)
            DO UPDATE SET batches = refused_event_batches.batches + excluded.batches, last_at = excluded.last_at
            """,
            [environmentID, Self.hour(of: time), cause.rawValue, keyPrefix, batches, time.unixMilliseconds],
            cached: true)
    }

    /// Drops the rows of hours that ended more than `kept` before `time`.
    func prune(before time: Date) throws {
        try db.execute(
            "DELETE FROM refused_event_batches WHERE hour < ?", [Self.hour(of: time.addingTimeInterval(-Self.kept))])
    }

    /// The batches refused in the environments of `tenant` since `time` (to the hour), by
    /// environment; environments with none are left out.
    func batches(of tenant: TenantScope, since time: Date) throws -> [EnvironmentName: RefusedEventBatches] {
        var batches: [EnvironmentName: RefusedEventBatches] = [:]
        for row in try db.rows(
            """
            SELECT e.name, r.cause, r.key_prefix, sum(r.batches) FROM refused_event_batches r
            JOIN environments e ON e.id = r.environment_id
            WHERE e.tenant_id = ? AND r.hour >= ? GROUP BY e.name, r.cause, r.key_prefix
            """, [tenant.id, Self.hour(of: time)])
        {
            guard let cause = EventBatchRefusal(rawValue: row[1]) else { continue }
            let name = EnvironmentName(rawValue: row[0])
            batches[name, default: RefusedEventBatches()].batches[cause, default: [:]][row[2]] = row[3]
        }
        return batches
    }

    /// The start of the hour `time` is in, in milliseconds.
    static func hour(of time: Date) -> Int64 {
        let milliseconds = time.unixMilliseconds
        return milliseconds - milliseconds % 3_600_000
    }
}

extension Transaction {
    /// The event batches servers refused whole.
    var refusedEventBatches: RefusedEventBatchTable { RefusedEventBatchTable(db: self) }
}
