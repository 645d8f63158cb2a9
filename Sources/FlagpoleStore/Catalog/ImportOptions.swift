import FlagpoleCore
import Foundation

/// How to import a file.
public struct ImportOptions: Hashable, Sendable {
    /// Plan and report, write nothing.
    public var isDryRun: Bool
    /// Refuse on warnings as well as errors.
    public var isStrict: Bool
    /// The reason given for the import; `nil`: the revision says `defaultMessage`, which an
    /// environment that asks a reason of every change refuses.
    public var message: String?
    /// The store's own words for a revision given no reason.
    public var defaultMessage: String
    /// Who imports: recorded on the revision.
    public var actor: String
    /// The revision the caller read (HTTP `If-Match`): the import is refused if another came first.
    public var expectedRevision: Int?
    /// When the revision is written: the system's clock when `nil`; a ramp's step, at the time of
    /// the clock it runs by (`WallClock`).
    public var time: Date?

    /// Options of an import by `actor`; the defaults apply it, warnings allowed.
    public init(
        isDryRun: Bool = false, isStrict: Bool = false, message: String? = nil, defaultMessage: String = "import",
        actor: String, expectedRevision: Int? = nil, time: Date? = nil
    ) {
        self.defaultMessage = defaultMessage
        self.isDryRun = isDryRun
        self.isStrict = isStrict
        self.message = message
        self.actor = actor
        self.expectedRevision = expectedRevision
        self.time = time
    }
}

/// What an import did, or would do on a dry run.
public struct ImportOutcome: Hashable, Sendable {
    /// Whether the import wrote a revision, would write one, or found nothing to write.
    public enum Status: Hashable, Sendable {
        /// A new revision was written.
        case applied(revision: Int)
        /// The file renders to the current revision's bytes: nothing written.
        case unchanged(revision: Int)
        /// A dry run: the revision it would create.
        case planned(revision: Int)
    }

    public var path: EnvironmentPath
    public var status: Status
    /// Features new to the environment, in file order (including `returned` ones).
    public var added: [String]
    /// Features that come back from the archive with their old salt.
    public var returned: [String]
    /// Features with at least one changed field.
    public var changed: [String]
    /// Features absent from the file, now archived.
    public var archived: [String]
    /// Features kept as they were.
    public var unchangedCount: Int
    /// The file's warnings and the store's (W250–W252).
    public var warnings: [Diagnostic]
    /// Recorded users who changed group (0 for a dry run).
    public var reassigned: Int
}
