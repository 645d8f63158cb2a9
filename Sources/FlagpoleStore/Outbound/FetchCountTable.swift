import FlagpoleCore
import Foundation

/// The one home of every statement on `fetch_counts`.
struct FetchCountTable {
    let db: Transaction

    /// Adds `fetches` to the revision's count for `client`: several servers add up.
    func add(_ fetches: Int, environmentID: Int64, revision: Int, client: FetchClient, at time: Date) throws {
        try db.execute(
            """
            INSERT INTO fetch_counts (environment_id, revision, client, fetches, last_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (environment_id, revision, client)
            DO UPDATE SET fetches = fetch_counts.fetches + excluded.fetches, last_at = excluded.last_at
            """,
            [environmentID, revision, client.rawValue, fetches, time.unixMilliseconds], cached: true)
    }

    /// The fetches of revisions `revisions` of the environment, by client.
    func counts(environmentID: Int64, revisions: Range<Int>) throws -> FetchCounts {
        var counts = FetchCounts()
        for row in try db.rows(
            """
            SELECT client, sum(fetches) FROM fetch_counts
            WHERE environment_id = ? AND revision >= ? AND revision < ? GROUP BY client
            """, [environmentID, revisions.lowerBound, revisions.upperBound])
        {
            if let client = FetchClient(rawValue: row[0]) { counts.byClient[client] = row[1] }
        }
        return counts
    }
}

extension Transaction {
    /// How many times clients fetched each revision.
    var fetchCounts: FetchCountTable { FetchCountTable(db: self) }
}
