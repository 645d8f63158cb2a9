import Foundation

/// Which process holds a WAL database's write lock, asked the way SQLite itself would find
/// out: SQLite's unix VFS takes it as a POSIX lock on byte 120 of the `-shm` file (the first
/// of the eight WAL locks after the 120-byte wal-index header), held from `BEGIN IMMEDIATE`
/// to the end of `COMMIT`. A child killed while holding it was killed mid-transaction.
struct WriteLockProbe {
    let shmPath: String

    init(databasePath: String) {
        shmPath = databasePath + "-shm"
    }

    /// The pid holding the write lock now, if any process does.
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
