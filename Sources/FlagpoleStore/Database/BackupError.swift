import FlagpoleCore

/// Why an operation on backups and restores failed, worded for the person who can fix it.
public enum BackupError: FlagpoleError {
    /// A backup would replace an existing file, and was not told to.
    case backupFileExists(path: String)
    /// A backup or a restore named the database itself as its other file.
    case sameDatabase(path: String)
    case cannotWrite(path: String, reason: String)
    case cannotRead(path: String, reason: String)
    /// The live database failed SQLite's integrity check while being copied.
    case damagedDatabase(path: String, problems: [String])
    /// A file to restore is not an SQLite database at all.
    case notADatabase(path: String)
    /// A file to restore failed SQLite's integrity or foreign key check.
    case damagedFile(path: String, problems: [String])
    /// A file to restore is an SQLite database that Flagpole did not make.
    case notAFlagpoleDatabase(path: String)
    /// A file to restore was migrated by a newer Flagpole.
    case fileTooNew(path: String, unknownMigrations: [String])
    /// A restore would replace tenants, and was not told to.
    case restoreWouldReplaceData(path: String, tenants: [TenantSlug])

    public var description: String {
        switch self {
        case .backupFileExists(let path):
            "\(path) already exists. Nothing was written; choose another file name, or pass --force to replace it."
        case .sameDatabase(let path):
            "\(path) is the database itself. Nothing was written; name another file."
        case .cannotWrite(let path, let reason):
            "Cannot write \(path): \(reason). Nothing was written; check that its folder exists and is writable, and that the disk has room."
        case .cannotRead(let path, let reason):
            "Cannot read \(path): \(reason). Nothing was restored; check the path and its permissions."
        case .damagedDatabase(let path, let problems):
            "The database at \(path) is damaged: SQLite's integrity check found \(Self.listing(problems)). Nothing was written; restore an earlier backup with `flagpole restore FILE --force`."
        case .notADatabase(let path):
            "\(path) is not an SQLite database. Nothing was restored and the database is unchanged; name a file made by `flagpole backup`."
        case .damagedFile(let path, let problems):
            "\(path) is damaged: SQLite found \(Self.listing(problems)). Nothing was restored and the database is unchanged; use another backup."
        case .notAFlagpoleDatabase(let path):
            "\(path) is an SQLite database, but not a Flagpole one (it has no Flagpole schema). Nothing was restored and the database is unchanged; name a file made by `flagpole backup`."
        case .fileTooNew(let path, let unknown):
            "\(path) was migrated by a newer version of Flagpole (it has migrations \(unknown.joined(separator: ", ")) that this version does not know). Nothing was restored and the database is unchanged; upgrade Flagpole, then restore."
        case .restoreWouldReplaceData(let path, let tenants):
            "The database at \(path) already holds \(tenants.count) tenant\(tenants.count == 1 ? "" : "s") (\(tenants.map(\.rawValue).joined(separator: ", "))). Nothing was restored; pass --force to replace everything in it with the file (take a `flagpole backup` of it first), or restore into another --db."
        }
    }

    public var code: String {
        switch self {
        case .backupFileExists: "backup_file_exists"
        case .sameDatabase: "same_database"
        case .cannotWrite: "cannot_write"
        case .cannotRead: "cannot_read"
        case .damagedDatabase: "damaged_database"
        case .notADatabase: "not_a_database"
        case .damagedFile: "damaged_file"
        case .notAFlagpoleDatabase: "not_a_flagpole_database"
        case .fileTooNew: "file_too_new"
        case .restoreWouldReplaceData: "restore_would_replace_data"
        }
    }

    /// The first few problems of a check, and how many there are.
    private static func listing(_ problems: [String]) -> String {
        let shown = problems.prefix(3).joined(separator: "; ")
        return problems.count <= 3 ? shown : "\(problems.count) problems, first: \(shown)"
    }
}
