/// An error of Flagpole's domain: a failure the person who asked can fix, worded for them (the
/// `description`), with a stable `code` that scripts and API clients can match on.
///
/// Each module has one error type per domain (`CoreError` here; the store's tenancy, document,
/// user state, key, delivery, storage and backup errors). The server maps them to HTTP statuses
/// in one place (`APIError.init(_:)`), and the command line exits 1 with the description.
public protocol FlagpoleError: Error, Sendable, CustomStringConvertible {
    /// A stable, machine-readable name of the failure, such as `not_found`.
    var code: String { get }
}
