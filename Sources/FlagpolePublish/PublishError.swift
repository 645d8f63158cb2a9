import FlagpoleCore

/// Why publishing failed, worded for the person who can fix it. No case ever carries a secret.
public enum PublishError: FlagpoleError, Equatable {
    /// A file or directory of the CDN tree could not be written.
    case cannotWrite(path: String, reason: String)
    /// The export directory exists but is not a directory.
    case notADirectory(path: String)
    /// `--to`, `--endpoint` or another setting of the target is malformed.
    case badTarget(String)
    /// No credentials could be read, or their file could not.
    case noCredentials(String)
    /// The bucket's `manifest.json` is not one Flagpole wrote.
    case foreignManifest(String)
    /// S3 refused a request, or could not be reached after the retries.
    case storage(S3Failure)
    /// A revision's copy already in the bucket holds other bytes.
    case immutableConflict(key: String, target: String)
    /// The bucket said a revision's copy exists (`412`), then that it doesn't (`404`).
    case unsettled(key: String, target: String)
    /// The database could not be read.
    case database(String)

    /// A stable name of the failure: the case's, in snake case.
    public var code: String {
        switch self {
        case .cannotWrite: "cannot_write"
        case .notADirectory: "not_a_directory"
        case .badTarget: "bad_target"
        case .noCredentials: "no_credentials"
        case .foreignManifest: "foreign_manifest"
        case .storage: "storage"
        case .immutableConflict: "immutable_conflict"
        case .unsettled: "unsettled"
        case .database: "database"
        }
    }

    /// Whether running the same publish again can complete it: the failure was S3's or the
    /// network's, not a setting or a conflict that stays until someone changes it.
    public var isWorthRetrying: Bool {
        switch self {
        case .storage(let failure): failure.isTransient
        case .unsettled: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason):
            "Cannot write \(path): \(reason). Check that the directory is writable and the disk has room; the previous tree is untouched."
        case .notADirectory(let path):
            "\(path) exists and is not a directory. Choose another --dir, or remove the file."
        case .badTarget(let why), .noCredentials(let why):
            why
        case .foreignManifest(let why):
            "The bucket's \(Manifest.name) was not written by Flagpole: \(why). Publish to a prefix of its own (s3://BUCKET/PREFIX)."
        case .storage(let failure):
            failure.description
        case .database(let why):
            "Cannot read the environments to publish from the database: \(why)"
        case .unsettled(let key, let target):
            """
            \(target)/\(key): the bucket answered that an object has this key (412), then that none has \
            (404). It is still settling, or something else deletes there; nothing says the bytes differ. \
            Publish again; if it recurs, check what else writes to the prefix.
            """
        case .immutableConflict(let key, let target):
            """
            \(target)/\(key) already holds other bytes. A revision's copy is never replaced: this \
            database was restored from a backup, or another one publishes to the same prefix. Publish \
            to a new prefix, or delete that environment's revisions/ folder in the bucket first.
            """
        }
    }
}

/// A request S3 refused or that never got an answer.
public struct S3Failure: Error, Sendable, CustomStringConvertible, Equatable {
    public var method: String
    /// `s3://bucket/key`.
    public var object: String
    /// The HTTP status; `nil` when no answer came (connection refused or lost, timeout).
    public var status: Int?
    /// S3's error code (`NoSuchBucket`, `SignatureDoesNotMatch`, …) or the transport's error.
    public var code: String
    public var message: String
    /// How many times it was sent.
    public var attempts: Int
    public var hint: String

    /// Worth sending again later: no answer, S3 busy or failing, or a request it timed out.
    public var isTransient: Bool {
        guard let status else { return true }
        return status >= 500 || status == 429 || code == "RequestTimeout" || code == "SlowDown"
    }

    /// Sent again within the run: what is transient, and a `403`, which new or rotated keys
    /// get for a few seconds while IAM spreads them (and a clock a little off, while it syncs).
    var isRetried: Bool { isTransient || status == 403 }

    public var description: String {
        let answer = status.map { "\($0) \(code)" } ?? code
        let tries = attempts > 1 ? " (after \(attempts) attempts)" : ""
        let sentence = message.last.map { ".!?".contains($0) } == true ? message : "\(message)."
        return "\(method) \(object) failed\(tries): \(answer): \(sentence) \(hint)"
    }
}
