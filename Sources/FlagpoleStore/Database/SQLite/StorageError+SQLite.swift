import GRDB

extension StorageError {
    /// The error to show for a database failure the store did not foresee.
    init(_ error: DatabaseError) {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: self = .busy
        default: self = .storage(reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }

    /// `error` as the store reports it, when it is SQLite's own (PostgreSQL's are translated where
    /// they are read, by `PostgresSession`); `nil` for any other.
    init?(translating error: any Error) {
        guard let error = error as? DatabaseError else { return nil }
        self.init(error)
    }
}
