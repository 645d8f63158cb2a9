import FlagpoleCore

/// Why `flagpole copy` stopped. Whatever the reason, the destination holds nothing of the copy:
/// a new SQLite file appears only once checked, and PostgreSQL's rows are one transaction.
public enum CopyError: FlagpoleError, Equatable {
    /// A copy makes a new SQLite file; it never writes over one.
    case destinationExists(String)
    /// A copy writes into an empty PostgreSQL database only: merging two stores would mix ids.
    case destinationNotEmpty(address: String, table: String)
    /// The database holds tables that are not Flagpole's: another application's, or a mistyped URL.
    case otherApplication(address: String, table: String)
    /// A value SQLite holds that its column can't mean (SQLite stores what it is given).
    case unexpectedValue(table: String, column: String, value: String, key: String)
    /// What was read back from the destination differs from what was read from the source.
    case verificationFailed(table: String, expected: String, found: String)

    public var description: String {
        switch self {
        case .destinationExists(let path):
            "There is already a file at \(path). `flagpole copy` writes a new SQLite file only; nothing was written. Choose a new path, or move the file away."
        case .destinationNotEmpty(let address, let table):
            "The database \(address) already holds data (its table \(table) has rows). `flagpole copy` writes into an empty database only, so that two stores' ids never mix; nothing was written. Create a new database (createdb NAME) and copy into it."
        case .otherApplication(let address, let table):
            "The database \(address) holds tables that are not Flagpole's (such as \(table)): it belongs to another application, or the URL names the wrong database. Nothing was written; copy into a new, empty database (createdb NAME)."
        case .unexpectedValue(let table, let column, let value, let key):
            "The source's table \(table) holds \(value) in its column \(column) (row \(key)), which that column can't mean. Nothing was written. The source was changed outside Flagpole; repair that row, then copy again."
        case .verificationFailed(let table, let expected, let found):
            "The copy of table \(table) does not match its source: the source had \(expected), the destination \(found). Nothing was kept; report this, with both databases' versions."
        }
    }

    public var code: String {
        switch self {
        case .destinationExists: "destination_exists"
        case .destinationNotEmpty: "destination_not_empty"
        case .otherApplication: "other_application"
        case .unexpectedValue: "unexpected_value"
        case .verificationFailed: "verification_failed"
        }
    }
}
