import EndToEndSupport
import Foundation

/// Every write a harness asked for, with what the writer said before it died or finished: the
/// reference a database is checked against after a crash.
struct WriteLedger {
    /// What a write was asked to do.
    enum Write {
        /// An import whose revision must hold exactly these bytes (the file as rendered).
        case importDocument(rendered: [UInt8])
        /// A bias change of one test.
        case biases(feature: String, biases: [Double])
        /// `count` users whose ids start with the tag, put in one test at once.
        case assign(feature: String, count: Int)
        /// One user whose id starts with the tag, who fetched their pinned document and so was
        /// put in every test of it at once: `tests` of them, as the answer pinned.
        case pinned(tests: Int?)
        /// Another change made as a revision (a feature enabled or disabled).
        case edit
    }

    /// One write, named by a tag unique in the run: the revision message of an import or a
    /// bias change, the user-id prefix of an assignment.
    struct Entry {
        var tag: String
        var environment: String
        var write: Write
        /// Whether the writer answered success (the CLI exited 0, the server sent a 2xx).
        var isAcknowledged = false
        /// The revision the writer reported, when it reported one.
        var revision: Int?
        /// Whether the writer reported that nothing changed, so no revision was made.
        var isUnchanged = false
    }

    private(set) var entries: [Entry] = []

    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// Assignment tags are this long: `u` and five digits.
    static let assignTagLength = 6

    static func assignTag(_ operation: Int) -> String {
        "u" + String(format: "%05d", operation)
    }
}
