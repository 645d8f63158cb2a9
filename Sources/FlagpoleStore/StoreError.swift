import FlagpoleCore
import GRDB

/// Why a store operation failed, worded for the person who can fix it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case tenantNotFound(TenantSlug)
    case tenantAlreadyExists(TenantSlug)
    case environmentNotFound(EnvironmentPath, existing: [EnvironmentName])
    case environmentAlreadyExists(EnvironmentPath)
    case noRevision(EnvironmentPath)
    case revisionNotFound(EnvironmentPath, number: Int, latest: Int?)
    /// The file has errors, or warnings under `--strict`; nothing was written.
    case importRefused(EnvironmentPath, diagnostics: [Diagnostic], isStrict: Bool)
    case featureNotFound(EnvironmentPath, name: String)
    /// Biases the app would ignore; nothing was written.
    case biasesIgnored(feature: String, diagnostics: [Diagnostic])
    case notAnUnlockFlag(feature: String, kind: FeatureKind)
    /// A QA override into a variation that owns no points: the app could never land there.
    case unreachableVariation(feature: String, variation: String)
    case noOverride(feature: String, user: UserID)
    /// A QA override on a disabled test: every app shows it as `Disabled`.
    case testDisabled(feature: String)
    /// A write named the revision it expected to change (`If-Match`), and another came first.
    case revisionConflict(EnvironmentPath, expected: Int, current: Int?)
    case keyNotFound(prefix: String)
    /// Server keys are server admins, and tenant keys never are.
    case invalidKeyRole(KeyRole, owner: KeyOwner)
    /// A delivery setting the server could not send as given.
    case invalidCacheControl(String)
    /// A private environment's documents must not be kept by shared caches.
    case publicCacheControlOnPrivate(String)
    /// The database was migrated by a newer Flagpole.
    case databaseTooNew(unknownMigrations: [String])
    /// A command that only reads named a file that does not exist.
    case databaseNotFound(path: String)
    /// A command that only reads met a schema that is behind: it does not migrate.
    case databaseNeedsMigration(path: String, pending: [String])
    case cannotOpen(path: String, reason: String)
    /// Another process held the database's write lock past the busy timeout.
    case busy
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
    /// The database refused an operation for a reason the store did not foresee.
    case storage(reason: String)

    public var description: String {
        switch self {
        case .tenantNotFound(let slug):
            "There is no tenant \"\(slug)\". Create it with `flagpole tenant create \(slug)`, or list tenants with `flagpole tenant list`."
        case .tenantAlreadyExists(let slug):
            "A tenant \"\(slug)\" already exists. Pick another slug, or use the existing tenant."
        case .environmentNotFound(let path, let existing):
            "Tenant \"\(path.tenant)\" has no environment \"\(path.environment)\" (it has: \(existing.map(\.rawValue).joined(separator: ", "))). Create it with `flagpole env create \(path.environment) --tenant \(path.tenant)`."
        case .environmentAlreadyExists(let path):
            "Tenant \"\(path.tenant)\" already has an environment \"\(path.environment)\"."
        case .noRevision(let path):
            "\(path) has no revision yet. Import a file first: `flagpole import FILE --tenant \(path.tenant) --env \(path.environment)`."
        case .revisionNotFound(let path, let number, let latest):
            "\(path) has no revision \(number)"
                + (latest.map { " (revisions run from 1 to \($0))." } ?? " (it has none yet).")
        case .importRefused(let path, let diagnostics, let isStrict):
            isStrict && !diagnostics.hasErrors
                ? "Import into \(path) refused under --strict: \(diagnostics.count) warning(s). Nothing was written."
                : "Import into \(path) refused: \(diagnostics.errors.count) error(s) the app would reject. Nothing was written."
        case .featureNotFound(let path, let name):
            "\(path) has no feature \"\(name)\" (names are case-sensitive). List them with `flagpole feature list --tenant \(path.tenant) --env \(path.environment)`."
        case .biasesIgnored(let feature, let diagnostics):
            "The app would ignore these biases of \"\(feature)\": \(diagnostics.map { "\($0.message) (fix: \($0.fix))" }.joined(separator: "; ")). Nothing was written; fix them, or pass --force to store them anyway."
        case .notAnUnlockFlag(let feature, let kind):
            "\"\(feature)\" is \(kind.withArticle), not an unlock flag: only features with an \"unlocked\" key (and not exactly two variations) can be unlocked per user."
        case .unreachableVariation(let feature, let variation):
            "Variation \"\(variation)\" of \"\(feature)\" owns no users under the current biases, so no app could land in it. Give it a bias first with `flagpole bias set \(feature) …`."
        case .testDisabled(let feature):
            "\"\(feature)\" is disabled, so every app shows it as \"Disabled\" and an override would not show. Enable it first with `flagpole feature enable \(feature)`."
        case .noOverride(let feature, let user):
            "User \"\(user)\" has no override on \"\(feature)\"; nothing to clear."
        case .revisionConflict(let path, let expected, let current):
            "\(path) is at revision \(current.map(String.init) ?? "none"), not \(expected): someone changed it since you read it. Nothing was written; read the current revision and try again."
        case .keyNotFound(let prefix):
            "There is no key \"\(prefix)\" here. List keys with `flagpole key list`."
        case .invalidKeyRole(let role, let owner):
            owner == .server
                ? "A server-wide key is always a server admin (not \(role.rawValue)). Drop --role, or pass --tenant to make a tenant key."
                : "A tenant key cannot be a server admin. Use admin, editor, reader or delivery, or make a server key with --server-admin."
        case .invalidCacheControl(let value):
            "\"\(value)\" is not a usable Cache-Control value: it must be 1 to 256 printable ASCII characters. Example: \"public, max-age=60\"."
        case .publicCacheControlOnPrivate(let value):
            "A private environment cannot be served with Cache-Control \"\(value)\": a shared cache would hand the document to anyone. Use a private value, such as \"private, max-age=30\", or null for the default."
        case .databaseTooNew(let unknown):
            "This database was migrated by a newer version of Flagpole (it has migrations \(unknown.joined(separator: ", ")) that this version does not know). Upgrade Flagpole to open it."
        case .databaseNotFound(let path):
            "There is no database at \(path). Nothing was created; check the path (--db, else $FLAGPOLE_DB, else ./flagpole.sqlite). To start a new database there, run a command that writes, such as `flagpole tenant create SLUG` or `flagpole migrate`: it creates the file."
        case .databaseNeedsMigration(let path, let pending):
            "The database at \(path) was made by an older Flagpole: migration\(pending.count == 1 ? "" : "s") \(pending.joined(separator: ", ")) \(pending.count == 1 ? "is" : "are") pending, and a command that only reads does not apply them. Nothing was changed; migrate it with `flagpole migrate --db \(path)`, then try again."
        case .cannotOpen(let path, let reason):
            "Cannot open the database at \(path): \(reason). Check the path and its permissions, or choose another with --db."
        case .busy:
            "The database stayed locked by another writer for more than 10 seconds. Nothing was written; try again."
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
        case .storage(let reason):
            "The database failed: \(reason). Nothing was written."
        }
    }

    /// The first few problems of a check, and how many there are.
    private static func listing(_ problems: [String]) -> String {
        let shown = problems.prefix(3).joined(separator: "; ")
        return problems.count <= 3 ? shown : "\(problems.count) problems, first: \(shown)"
    }

    /// The error to show for a database failure the store did not foresee.
    init(_ error: DatabaseError) {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: self = .busy
        default: self = .storage(reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
