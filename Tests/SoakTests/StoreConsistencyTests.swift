import EndToEndSupport
import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Testing

/// The checks of the crash harness fail on a damaged database: without this, a harness whose
/// checks can never fail would pass whatever the store did.
@Suite("The crash checks catch a damaged database", .serialized)
struct StoreConsistencyTests {
    /// One kind of damage, done with the database's own client, and what the report must then say.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case revisionGap, auditRowLost, halfAnAssignment, acknowledgedImportLost, revisionNotTheFile,
            tablesAheadOfTheRevision, assignmentWithoutHistory, firstEventLost, eventOfAMissingRevision, zeroedPage,
            deltaOff

        var testDescription: String { rawValue }

        /// The statements that do it, in the SQL of `backend`.
        func sql(on backend: Backend) -> String {
            let isPostgres = backend == .postgres
            return switch self {
            case .revisionGap:
                // PostgreSQL keeps the audit's foreign key: its rows go first.
                "DELETE FROM audit WHERE revision_id = (SELECT id FROM revisions WHERE number = 2); DELETE FROM revisions WHERE number = 2"
            case .auditRowLost: "DELETE FROM audit WHERE id = (SELECT max(id) FROM audit)"
            case .halfAnAssignment:
                "DELETE FROM assignments WHERE user_id IN (SELECT user_id FROM assignments WHERE user_id LIKE 'u00003-%' LIMIT 50)"
            case .acknowledgedImportLost:
                "DELETE FROM audit WHERE revision_id = (SELECT max(id) FROM revisions); DELETE FROM revisions WHERE id = (SELECT max(id) FROM revisions)"
            case .revisionNotTheFile:
                isPostgres
                    ? "UPDATE revisions SET document = convert_to(replace(convert_from(document, 'UTF8'), 'import-4', 'import-9'), 'UTF8') WHERE message = 'import-4'"
                    : "UPDATE revisions SET document = CAST(replace(CAST(document AS TEXT), 'import-4', 'import-9') AS BLOB) WHERE message = 'import-4'"
            case .tablesAheadOfTheRevision:
                "UPDATE features SET enabled = NOT enabled WHERE id = (SELECT min(id) FROM features WHERE archived_at IS NULL)"
            case .assignmentWithoutHistory: "UPDATE assignments SET variation = 'Nowhere' WHERE user_id = 'u00003-0'"
            case .firstEventLost: "DELETE FROM assignment_events WHERE reason = 'first' AND user_id = 'u00003-1'"
            case .eventOfAMissingRevision:
                "UPDATE assignment_events SET revision = 99 WHERE id = (SELECT max(id) FROM assignment_events)"
            case .zeroedPage: "PRAGMA wal_checkpoint(TRUNCATE)"
            case .deltaOff:
                "UPDATE assignment_deltas SET users = users + 1 WHERE (feature_id, minute, variation) = (SELECT feature_id, minute, variation FROM assignment_deltas LIMIT 1)"
            }
        }

        /// Words the report must contain.
        var reported: [String] {
            switch self {
            case .revisionGap: ["not contiguous"]
            case .auditRowLost: ["audit has"]
            case .halfAnAssignment: ["50 of 100 users assigned (half-applied)"]
            case .acknowledgedImportLost: ["import-4: acknowledged"]
            case .revisionNotTheFile: ["not the imported file"]
            case .tablesAheadOfTheRevision: ["in the tables differs"]
            case .assignmentWithoutHistory: ["differ from their latest event"]
            case .firstEventLost: ["first events"]
            case .deltaOff: ["assignment deltas differ"]
            case .eventOfAMissingRevision: ["name a revision that does not exist"]
            case .zeroedPage: ["integrity_check", "cannot be read"]
            }
        }
    }

    /// Every damage on each backend, but a zeroed page, which only a file can have.
    static let cases = Backend.allCases.flatMap { backend in
        Damage.allCases.filter { backend == .sqlite || $0 != .zeroedPage }.map { (backend, $0) }
    }

    @Test("An intact database passes; a damaged one is reported", arguments: cases)
    func damaged(_ backend: Backend, _ damage: Damage) throws {
        let (cli, ledger) = try Self.makeDatabase(on: backend)
        defer { try? FileManager.default.removeItem(at: cli.directory) }
        let shell = backend.shell(on: cli.databasePath)
        #expect(try StoreConsistency(shell: shell, tenant: "acme").violations(against: ledger) == [])

        try shell.execute(damage.sql(on: backend))
        if damage == .zeroedPage {
            // The root page of an index, zeroed in the file the checkpoint just completed.
            let page = try shell.int("SELECT rootpage FROM sqlite_schema WHERE name = 'assignment_events_by_user'")
            let size = try shell.int("PRAGMA page_size")
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: cli.databasePath))
            try file.seek(toOffset: UInt64((page - 1) * size))
            file.write(Data(count: size))
            try file.close()
        }
        let problems = try StoreConsistency(shell: shell, tenant: "acme").violations(against: ledger)
        #expect(
            problems.contains { problem in damage.reported.contains { problem.contains($0) } }, "reported: \(problems)")
    }

    /// A database written by the command line: an import, a bias change, 100 users assigned,
    /// another import; and its ledger.
    static func makeDatabase(on backend: Backend) throws -> (CLI, WriteLedger) {
        let cli = try CLI(database: backend == .postgres ? try TestPostgres.newDatabase("damage") : nil)
        var random = SeededGenerator(seed: 1)
        var ledger = WriteLedger()
        let files = ImportFiles()
        try #require(try cli.runBinary(["tenant", "create", "acme"]).status == 0)
        func record(_ tag: String, _ write: WriteLedger.Write, _ arguments: [String]) throws {
            let result = try cli.runBinary(arguments + ["--tenant", "acme", "--json"])
            try #require(result.status == 0, "\(result.stderr)")
            let answer = try? JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
            ledger.append(
                WriteLedger.Entry(
                    tag: tag, environment: "production", write: write, isAcknowledged: true,
                    revision: answer?["revision"] as? Int))
        }
        func importFile(_ tag: String) throws {
            let bytes = files.make(tag: tag, count: 40, biases: [50, 50], using: &random)
            let file = try cli.write(String(decoding: bytes, as: UTF8.self), to: "\(tag).json")
            try record(
                tag, .importDocument(rendered: DocumentDecoder.decode(bytes).document!.rendered()),
                ["import", file, "--message", tag])
        }
        try importFile("import-1")
        try record(
            "bias-2", .biases(feature: ImportFiles.rollout, biases: [30, 70]),
            ["bias", "set", ImportFiles.rollout, "30", "70", "--message", "bias-2"])
        let tag = WriteLedger.assignTag(3)
        let users = try cli.write((0..<100).map { "\(tag)-\($0)\n" }.joined(), to: "users.txt")
        try record(
            tag, .assign(feature: ImportFiles.rollout, count: 100),
            ["assign", "--feature", ImportFiles.rollout, "--users-file", users])
        try importFile("import-4")
        return (cli, ledger)
    }
}
