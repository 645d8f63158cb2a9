import EndToEndSupport
import FlagpoleTestSupport
import Foundation

/// Which process holds the store's write lock: a writer killed while holding it was killed
/// mid-transaction.
protocol WriteLockProbe {
    /// The pid holding the write lock now, if any process does.
    func holder() -> pid_t?
}

/// On SQLite, asked the way SQLite itself would find out: its unix VFS takes the write lock
/// of a WAL database as a POSIX lock on byte 120 of the `-shm` file (the first of the eight WAL
/// locks after the 120-byte wal-index header), held from `BEGIN IMMEDIATE` to the end of `COMMIT`.
struct SQLiteWriteLockProbe: WriteLockProbe {
    let shmPath: String

    init(databasePath: String) {
        shmPath = databasePath + "-shm"
    }

    func holder() -> pid_t? {
        let fd = open(shmPath, O_RDWR)
        guard fd >= 0 else { return nil }
        // Closing a descriptor drops this process's own locks on the file; it holds none.
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 120
        lock.l_len = 1
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }
}

/// On PostgreSQL, asked of the server: every flagpole write transaction takes the advisory lock
/// `0x666c_6167_7772_6974` ("flagwrit") until it ends, which `pg_locks` shows as its two halves
/// (classid 1718378855, objid 2003986804; objsubid 1 for a bigint key) in this database. The
/// backend holding it belongs to the flagpole process whose pid each of its connections names as
/// `application_name`, `flagpole (pid N)`. A killed writer's backend holds the lock until it
/// notices the closed connection; it is then no live writer's.
///
/// The harness asks in tight loops: one `psql` stays open for all the questions, asked and
/// answered a line at a time, and exits with the probe.
final class PostgresWriteLockProbe: WriteLockProbe {
    /// Why the probe stopped answering, if it did: its `psql` exited.
    private(set) var failure: String?
    private let psql = Process()
    private let questions = Pipe()
    private let answers = Pipe()
    private let complaints = Pipe()
    private var unread: [UInt8] = []

    /// The holder's pid, or an empty line: always one line, so that every question has its
    /// answer. `pg_stat_get_activity(pid)` is what `pg_stat_activity` reads, for one backend
    /// rather than all of them at every poll.
    private static let question =
        #"""
        SELECT coalesce((
            SELECT substring(a.application_name FROM '^flagpole \(pid ([0-9]+)\)$')
            FROM pg_locks l, pg_stat_get_activity(l.pid) a
            WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND l.classid = 1718378855 AND l.objid = 2003986804 AND l.objsubid = 1 AND l.granted
            LIMIT 1), '');
        """#.replacingOccurrences(of: "\n", with: " ") + "\n"

    init(url: String) throws {
        psql.executableURL = URL(fileURLWithPath: TestPostgres.psqlPath)
        // An error ends psql rather than leaving a question unanswered.
        psql.arguments = ["-X", "-w", "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-d", url]
        psql.environment = ProcessInfo.processInfo.environment.merging(["PGCLIENTENCODING": "UTF8"]) { _, new in new }
        psql.standardInput = questions
        psql.standardOutput = answers
        psql.standardError = complaints
        try psql.run()
    }

    deinit {
        // The end of its input: psql disconnects and exits, at once.
        try? questions.fileHandleForWriting.close()
        if psql.isRunning { psql.waitUntilExitPromptly() }
    }

    func holder() -> pid_t? {
        guard failure == nil else { return nil }
        do {
            try questions.fileHandleForWriting.write(contentsOf: Data(Self.question.utf8))
            if let answer = nextLine() { return pid_t(answer) }
        } catch {
            failure = "cannot ask psql: \(error)"
            return nil
        }
        psql.waitUntilExitPromptly()
        let said = String(decoding: complaints.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        failure = "psql, the write-lock probe, exited \(psql.terminationStatus): \(said)"
        return nil
    }

    /// The next line psql prints, without its newline; nil once it has exited.
    private func nextLine() -> String? {
        while true {
            if let end = unread.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: unread[..<end], as: UTF8.self)
                unread.removeSubrange(...end)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = read(answers.fileHandleForReading.fileDescriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            unread += chunk[..<count]
        }
    }
}
