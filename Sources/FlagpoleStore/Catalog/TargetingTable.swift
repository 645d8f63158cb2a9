import FlagpoleCore
import Foundation

/// The one home of every statement on `segment_lists`: segments' lists of users, kept once per
/// distinct content under their SHA-256.
struct TargetingTable {
    let db: Transaction

    /// Keeps `bytes` (a list `SegmentUsers.listBytes` wrote) under `sha256`, unless it is kept.
    func keepList(_ bytes: [UInt8], sha256: [UInt8], count: Int, tenant: TenantScope) throws {
        try db.execute(
            """
            INSERT INTO segment_lists (tenant_id, sha256, users, user_count) VALUES (?, ?, ?, ?)
            ON CONFLICT (tenant_id, sha256) DO NOTHING
            """, [tenant.id, sha256, bytes, count])
    }

    /// The list kept under `sha256`, `nil` when there is none.
    func list(sha256: [UInt8], tenant: TenantScope) throws -> [UInt8]? {
        try db.value(
            [UInt8].self, "SELECT users FROM segment_lists WHERE tenant_id = ? AND sha256 = ?", [tenant.id, sha256])
    }
}

extension Transaction {
    /// Segments' lists of users.
    var targeting: TargetingTable { TargetingTable(db: self) }
}
