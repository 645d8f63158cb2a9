import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on `segment_lists`: segments' lists of users, kept once per
/// distinct content under their SHA-256.
struct TargetingTable {
    let db: Database

    /// Keeps `bytes` (a list `SegmentUsers.listBytes` wrote) under `sha256`, unless it is kept.
    func keepList(_ bytes: [UInt8], sha256: [UInt8], count: Int, tenant: TenantScope) throws {
        try db.execute(
            sql: """
                INSERT INTO segment_lists (tenant_id, sha256, users, user_count) VALUES (?, ?, ?, ?)
                ON CONFLICT (tenant_id, sha256) DO NOTHING
                """, arguments: [tenant.id, Data(sha256), Data(bytes), count])
    }

    /// The list kept under `sha256`, `nil` when there is none.
    func list(sha256: [UInt8], tenant: TenantScope) throws -> [UInt8]? {
        try Data.fetchOne(
            db, sql: "SELECT users FROM segment_lists WHERE tenant_id = ? AND sha256 = ?",
            arguments: [tenant.id, Data(sha256)]
        ).map(Array.init)
    }
}

extension Database {
    /// Segments' lists of users.
    var targeting: TargetingTable { TargetingTable(db: self) }
}
