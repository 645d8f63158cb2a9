/// What a whole database holds, in brief: what a backup copied, or what a restore brought back
/// or replaced.
public struct DatabaseSummary: Hashable, Sendable {
    /// One environment and its latest revision.
    public struct EnvironmentRevision: Hashable, Sendable {
        public var path: EnvironmentPath
        /// `nil` until the environment's first import.
        public var latestRevision: Int?
    }

    /// The last schema migration applied, such as `0003_server`; `nil` for an empty file.
    public var schemaVersion: String?
    public var tenantCount: Int
    /// Every environment of every tenant, by tenant then name.
    public var environments: [EnvironmentRevision]
    /// Revisions of all environments together.
    public var revisionCount: Int
    /// Recorded (user, feature) assignments, current and archived.
    public var assignmentCount: Int
    /// Recorded per-user unlocks.
    public var unlockCount: Int
    /// The database's size: its pages times the page size.
    public var byteCount: Int
}

/// What `FeatureStore.restore` did.
public struct RestoreOutcome: Hashable, Sendable {
    /// What the database holds now.
    public var restored: DatabaseSummary
    /// The schema version of the file before it was brought up to date; the same as
    /// `restored.schemaVersion` when it needed no migration.
    public var fileSchemaVersion: String?
    /// What the database held before, now gone.
    public var replaced: DatabaseSummary
}
