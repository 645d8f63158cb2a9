import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB

extension FeatureStore {
    /// Copies the whole database, as it was at one moment, into a new standalone file at `path`,
    /// while other connections and processes keep writing.
    ///
    /// The copy is SQLite's online backup inside one read transaction: it holds every write
    /// committed before that moment and none after. It is written to a hidden file beside `path`,
    /// switched to a rollback journal (so it needs no `-wal` file), checked with `PRAGMA
    /// integrity_check`, and only then moved to `path`: a backup cut short leaves nothing there.
    ///
    /// - parameter replacingExisting: Replace a file already at `path`; otherwise it is refused.
    /// - throws: `BackupError.backupFileExists`, `BackupError.sameDatabase`,
    ///   `BackupError.cannotWrite`, `BackupError.damagedDatabase`, `StorageError.busy`,
    ///   `StorageError.storage`.
    @discardableResult
    public func backup(toPath path: String, replacingExisting: Bool = false) async throws -> DatabaseSummary {
        let writer = try sqliteWriter()
        let fileManager = FileManager.default
        let destination = URL(fileURLWithPath: path)
        if fileManager.fileExists(atPath: path) {
            if Self.isSameFile(path, writer.path) { throw BackupError.sameDatabase(path: path) }
            guard replacingExisting else { throw BackupError.backupFileExists(path: path) }
        }
        let directory = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BackupError.cannotWrite(path: path, reason: "its folder \(directory.path) does not exist")
        }

        let partial = directory.appendingPathComponent(".\(destination.lastPathComponent).partial-\(UUID().uuidString)")
        defer { Self.removeDatabaseFiles(at: partial) }
        let copy: DatabaseQueue
        do {
            copy = try DatabaseQueue(path: partial.path)
        } catch let error as DatabaseError {
            throw BackupError.cannotWrite(
                path: path, reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }

        // One step (GRDB's default): every page is copied under this read transaction's snapshot,
        // however many commits other connections make meanwhile.
        try await Self.translatingErrorsAsync {
            try await writer.read { db in
                try copy.writeWithoutTransaction { copyDB in
                    do {
                        try db.backup(to: copyDB)
                    } catch let error as DatabaseError where Self.isFileSystemFailure(error) {
                        throw BackupError.cannotWrite(
                            path: path, reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
                    }
                }
            }
        }
        let summary = try Self.translatingErrors {
            try copy.writeWithoutTransaction { db -> DatabaseSummary in
                // The copied header says WAL, like the source's: back to a rollback journal, so
                // the file is whole without a -wal beside it.
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
                guard mode == "delete" else {
                    throw BackupError.cannotWrite(
                        path: path, reason: "the copy stayed in journal mode \(mode ?? "unknown")")
                }
                let problems = try Self.integrityProblems(db)
                guard problems.isEmpty else { throw BackupError.damagedDatabase(path: writer.path, problems: problems) }
                return try Self.summary(of: db)
            }
        }
        try Self.translatingErrors { try copy.close() }
        try Self.move(partial, to: destination, replacingExisting: replacingExisting)
        return summary
    }

    /// Replaces everything in the database at `target` (created when missing) with the
    /// contents of the backup at `source`, after checking the backup; see
    /// `restore(fromPath:replacingData:)`. The backup is checked before the target is opened,
    /// so a refused file leaves no new database behind.
    ///
    /// - throws: `BackupError.cannotRead`, `BackupError.notADatabase`, `BackupError.damagedFile`,
    ///   `BackupError.notAFlagpoleDatabase`, `BackupError.fileTooNew`,
    ///   `BackupError.restoreWouldReplaceData`, `BackupError.sameDatabase`, `StorageError.cannotOpen`,
    ///   `StorageError.databaseTooNew`, `StorageError.busy`, `StorageError.storage`.
    @discardableResult
    public static func restore(
        fromPath source: String, intoPath target: String, replacingData: Bool = false
    ) async throws -> RestoreOutcome {
        if isSameFile(source, target) { throw BackupError.sameDatabase(path: source) }
        let staged = try StagedBackup(checking: source, besides: target)
        defer { staged.discard() }
        return try await open(atPath: target).restore(staged, replacingData: replacingData)
    }

    /// Replaces everything in this database with the contents of the backup at `path`.
    ///
    /// The file is first copied aside and checked: it must be an SQLite database that passes
    /// `PRAGMA integrity_check` and `foreign_key_check`, made by Flagpole, and not by a newer
    /// version; an older schema is migrated (on the copy, never on the file). Then SQLite's
    /// backup API copies it into this database through its own writer connection, in one
    /// transaction: other connections and processes on the file see the old contents or the
    /// new, never a mix. A refused file changes nothing.
    ///
    /// - parameter replacingData: Replace a database that holds tenants; otherwise it is refused.
    /// - throws: `BackupError.cannotRead`, `BackupError.notADatabase`, `BackupError.damagedFile`,
    ///   `BackupError.notAFlagpoleDatabase`, `BackupError.fileTooNew`,
    ///   `BackupError.restoreWouldReplaceData`, `BackupError.sameDatabase`, `StorageError.busy`,
    ///   `StorageError.storage`.
    @discardableResult
    public func restore(fromPath path: String, replacingData: Bool = false) async throws -> RestoreOutcome {
        let writer = try sqliteWriter()
        if Self.isSameFile(path, writer.path) { throw BackupError.sameDatabase(path: path) }
        let staged = try StagedBackup(checking: path, besides: writer.path)
        defer { staged.discard() }
        return try await restore(staged, replacingData: replacingData)
    }

    private func restore(_ staged: StagedBackup, replacingData: Bool) async throws -> RestoreOutcome {
        let writer = try sqliteWriter()
        let pageSize = try await read { db in try db.value(Int.self, "PRAGMA page_size") ?? 4096 }
        try staged.matchPageSize(pageSize)
        let replaced = try await Self.translatingErrorsAsync {
            try await writer.writeWithoutTransaction { db -> DatabaseSummary in
                let before = try Self.summary(of: db)
                let target = Transaction(db)
                if !replacingData {
                    let tenants = try target.tenants.all()
                    guard tenants.isEmpty else {
                        throw BackupError.restoreWouldReplaceData(
                            path: writer.path, tenants: tenants.map { TenantSlug(rawValue: $0.slug) })
                    }
                }
                // A generation above both files' tells running servers that revision numbers they
                // have served may now hold other documents (see `DeliveryState.generation`).
                let generation = try target.environments.generation()
                try staged.queue.write { source in
                    try Transaction(source).environments.raiseGeneration(above: generation)
                }
                // SQLite's backup writes every page as one transaction of this connection: into
                // the WAL, so readers keep their snapshot and the next ones see the restored file.
                try staged.queue.read { source in try source.backup(to: db) }
                return before
            }
        }
        let restored = try await Self.translatingErrorsAsync { try await writer.read(Self.summary(of:)) }
        return RestoreOutcome(restored: restored, fileSchemaVersion: staged.schemaVersion, replaced: replaced)
    }

    // MARK: Checks and summaries

    /// What `db` holds, in brief. Needs the current schema.
    static func summary(of db: Database) throws -> DatabaseSummary {
        let pageCount = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        let tables = Transaction(db)
        return DatabaseSummary(
            schemaVersion: try appliedMigrations(db).last,
            tenantCount: try tables.tenants.count(),
            environments: try tables.environments.latestRevisions().map {
                DatabaseSummary.EnvironmentRevision(path: $0.path, latestRevision: $0.revision)
            },
            revisionCount: try tables.environments.revisionCount(),
            assignmentCount: try tables.assignments.count(),
            unlockCount: try tables.unlocks.count(),
            byteCount: pageCount * pageSize)
    }

    /// The identifiers in GRDB's migration table, oldest first (they are numbered).
    static func appliedMigrations(_ db: Database) throws -> [String] {
        guard try db.tableExists("grdb_migrations") else { return [] }
        return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").sorted()
    }

    /// The rows of `PRAGMA integrity_check` other than its lone "ok".
    static func integrityProblems(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
    }

    // MARK: Files

    /// Whether two paths name the same file (a link or another spelling of the path counts).
    static func isSameFile(_ first: String, _ second: String) -> Bool {
        let fileManager = FileManager.default
        guard let a = try? fileManager.attributesOfItem(atPath: first),
            let b = try? fileManager.attributesOfItem(atPath: second)
        else {
            return false
        }
        return (a[.systemNumber] as? NSNumber) == (b[.systemNumber] as? NSNumber)
            && (a[.systemFileNumber] as? NSNumber) == (b[.systemFileNumber] as? NSNumber)
    }

    /// A failure of the disk or the folder rather than of the database.
    private static func isFileSystemFailure(_ error: DatabaseError) -> Bool {
        [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM].contains(error.resultCode)
    }

    /// Removes a database file and whatever journal SQLite left beside it.
    static func removeDatabaseFiles(at url: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// Moves the finished copy to its name in one step: `rename` replaces an existing file
    /// atomically; `link` refuses one atomically, so two backups racing to one name never
    /// overwrite each other.
    private static func move(_ partial: URL, to destination: URL, replacingExisting: Bool) throws {
        if replacingExisting {
            guard rename(partial.path, destination.path) == 0 else {
                throw BackupError.cannotWrite(path: destination.path, reason: String(cString: strerror(errno)))
            }
            return
        }
        if link(partial.path, destination.path) == 0 {
            unlink(partial.path)
            return
        }
        let linkError = errno
        if linkError == EEXIST { throw BackupError.backupFileExists(path: destination.path) }
        // A file system without hard links: check, then rename.
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw BackupError.backupFileExists(path: destination.path)
        }
        guard rename(partial.path, destination.path) == 0 else {
            throw BackupError.cannotWrite(path: destination.path, reason: String(cString: strerror(errno)))
        }
    }
}

/// A backup file copied aside and checked, ready to be restored: the file itself is only read.
struct StagedBackup: Sendable {
    /// The checked copy, migrated to the current schema.
    let queue: DatabaseQueue
    let url: URL
    /// The schema version the file had.
    let schemaVersion: String?

    /// Copies the file at `path` beside the database at `databasePath` and checks it.
    ///
    /// - throws: `BackupError.cannotRead`, `BackupError.notADatabase`, `BackupError.damagedFile`,
    ///   `BackupError.notAFlagpoleDatabase`, `BackupError.fileTooNew`, `BackupError.cannotWrite`,
    ///   `StorageError.storage`.
    init(checking path: String, besides databasePath: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw BackupError.cannotRead(path: path, reason: "there is no such file")
        }
        guard !isDirectory.boolValue else { throw BackupError.cannotRead(path: path, reason: "it is a folder") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw BackupError.cannotRead(path: path, reason: "it is not readable")
        }

        // Beside the database: the same file system, with room for a file of its size.
        let inMemory = databasePath.isEmpty || databasePath == ":memory:"
        let directory =
            inMemory
            ? FileManager.default.temporaryDirectory : URL(fileURLWithPath: databasePath).deletingLastPathComponent()
        let url = directory.appendingPathComponent(".flagpole-restore-\(UUID().uuidString).sqlite")
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: url.path)
        } catch let error as DatabaseError {
            throw BackupError.cannotWrite(
                path: url.path, reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
        do {
            schemaVersion = try Self.copyAndCheck(path, into: queue)
        } catch {
            try? queue.close()
            FeatureStore.removeDatabaseFiles(at: url)
            throw error
        }
        self.url = url
        self.queue = queue
    }

    /// Returns the file's schema version.
    private static func copyAndCheck(_ path: String, into queue: DatabaseQueue) throws -> String? {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let source = try DatabaseQueue(path: path, configuration: configuration)
            try source.backup(to: queue)
            try source.close()
            let applied = try queue.writeWithoutTransaction { db -> [String] in
                // A copy of a WAL file says WAL: back to one file, as `backup` leaves its copies.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let problems = try FeatureStore.integrityProblems(db)
                guard problems.isEmpty else { throw BackupError.damagedFile(path: path, problems: problems) }
                let applied = try FeatureStore.appliedMigrations(db)
                let tables = try ["tenants", "environments", "revisions"].filter { try db.tableExists($0) }
                guard applied.contains(SchemaMigrations.all[0].identifier), tables.count == 3 else {
                    throw BackupError.notAFlagpoleDatabase(path: path)
                }
                return applied
            }
            let known = Set(SchemaMigrations.all.map(\.identifier))
            let unknown = applied.filter { !known.contains($0) }
            guard unknown.isEmpty else { throw BackupError.fileTooNew(path: path, unknownMigrations: unknown) }
            // Brings an older schema up to date, on the copy.
            _ = try FeatureStore(queue)
            let violations = try queue.read { db in
                try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row -> String in
                    "row \(row[1] as Int64? ?? 0) of \(row[0] as String? ?? "?") refers to a missing row of \(row[2] as String? ?? "?")"
                }
            }
            guard violations.isEmpty else { throw BackupError.damagedFile(path: path, problems: violations) }
            // Sign-ins are not restored: a session signed out since the backup must not come back.
            try queue.write { db in
                let transaction = Transaction(db)
                try transaction.keys.closeAllSessions()
                try transaction.members.closeAllSessions()
            }
            return applied.last
        } catch let error as DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB: throw BackupError.notADatabase(path: path)
            case .SQLITE_CORRUPT:
                throw BackupError.damagedFile(path: path, problems: [error.message ?? "a damaged page"])
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
                throw BackupError.cannotRead(path: path, reason: error.message ?? "cannot open")
            default: throw StorageError(error)
            }
        }
    }

    /// SQLite's backup cannot change the page size of a database in WAL mode: the copy takes
    /// the target's first.
    func matchPageSize(_ pageSize: Int) throws {
        try FeatureStore.translatingErrors {
            try queue.writeWithoutTransaction { db in
                guard try Int.fetchOne(db, sql: "PRAGMA page_size") != pageSize else { return }
                try db.execute(sql: "PRAGMA page_size = \(pageSize)")
                try db.execute(sql: "VACUUM")
            }
        }
    }

    /// Closes and deletes the copy.
    func discard() {
        try? queue.close()
        FeatureStore.removeDatabaseFiles(at: url)
    }
}
