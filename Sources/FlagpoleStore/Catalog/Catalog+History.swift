import FlagpoleCore
import Foundation

/// One revision as it concerns one feature: who made it, when and why.
public struct FeatureChange: Hashable, Sendable {
    public var revision: Int
    public var kind: RevisionKind
    /// Who made it, as a person reads it: the key's name when the key has one, else the actor
    /// recorded (`key:fp_…`, or the command line's user).
    public var actor: String
    /// The reason given, or what the change was when none was.
    public var message: String
    public var createdAt: Date
}

/// One field of a feature a revision changed, with its JSON before and after.
public struct FieldChange: Hashable, Sendable {
    /// `nil` when the whole feature was added or removed.
    public var field: String?
    public var kind: DocumentDiff.Change.Kind
    public var before: String?
    public var after: String?
}

/// A revision that changed a feature, with what it changed of it.
public struct FeatureHistoryEntry: Hashable, Sendable {
    public var change: FeatureChange
    public var fields: [FieldChange]
}

extension Catalog {
    /// The revisions that changed the feature `name` in the environment at `path`, newest first.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func history(of name: String, in path: EnvironmentPath) async throws -> [FeatureHistoryEntry] {
        try await read { db in
            try db.environments.featureHistory(of: name, in: try db.environments.scope(of: path))
        }
    }

    /// The last revision that changed each feature of the environment at `path`, by the
    /// feature's name as the audit wrote it.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func lastChanges(in path: EnvironmentPath) async throws -> [String: FeatureChange] {
        try await read { db in
            try db.environments.lastFeatureChanges(in: try db.environments.scope(of: path))
        }
    }
}

extension FeatureChange {
    init(row: SQLRow) {
        let keyName: String? = row["key_name"]
        let actor: String = row["actor"]
        self.init(
            revision: row["number"], kind: RevisionKind(rawValue: row["kind"]) ?? .edit,
            actor: keyName.flatMap { $0.isEmpty ? nil : $0 } ?? actor, message: row["message"],
            createdAt: row["created_at"])
    }
}
