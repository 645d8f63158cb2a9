/// Which schema migrations a database has.
public struct MigrationStatus: Hashable, Sendable {
    /// Migrations applied, oldest first.
    public var applied: [String]
    /// Migrations this version knows and the database lacks.
    public var pending: [String]
    /// Migrations the database has that this version does not know: it was made by a newer Flagpole.
    public var unknown: [String]
}
