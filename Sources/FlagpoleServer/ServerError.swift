/// Why serving or publishing failed, worded for the person who can fix it.
public enum ServerError: Error, Sendable, CustomStringConvertible {
    /// A file or directory of the CDN tree could not be written.
    case cannotWrite(path: String, reason: String)
    /// The export directory exists but is not a directory.
    case notADirectory(path: String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason):
            "Cannot write \(path): \(reason). Check that the directory is writable and the disk has room; the previous tree is untouched."
        case .notADirectory(let path):
            "\(path) exists and is not a directory. Choose another --dir, or remove the file."
        }
    }
}
