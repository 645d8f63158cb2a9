import EndToEndSupport
import FlagpoleCore
import Foundation

/// Checks a flagpole database through its own client, the `sqlite3` shell or `psql`: SQLite's
/// own integrity check, contiguous revisions, an audit trail that is exactly the diff between
/// revisions, tables that hold the latest revision, assignments that agree with their history,
/// and, against a `WriteLedger`, every acknowledged write present and every write whole or absent.
///
/// Revisions are checked once each, in order, so a long run does not re-read every document;
/// all the queries of a check run in one client process. The checks are the same on both
/// backends; where the two speak different SQL, the helpers at the end write each one's.
final class StoreConsistency {
    let shell: any DatabaseShell
    let tenant: String
    /// The last revision checked in each environment, decoded, and its bytes.
    private(set) var latest: [String: (number: Int, document: FeaturesDocument, bytes: [UInt8])] = [:]
    /// Ledger entries already checked by a quick check.
    private var checkedEntries = 0

    init(shell: any DatabaseShell, tenant: String) {
        self.shell = shell
        self.tenant = tenant
    }

    /// What is wrong with the database, as sentences; empty when nothing is. `isFull` adds
    /// the checks that read every page or every feature (integrity, foreign keys, tables), which
    /// a long run may do only every few cycles.
    func violations(against ledger: WriteLedger, isFull: Bool = true) throws -> [String] {
        let known = latest.map { "WHEN '\($0.key)' THEN \($0.value.number)" }.joined(separator: " ")
        let newRevisions = """
            FROM revisions r JOIN environments e ON e.id = r.environment_id JOIN tenants t ON t.id = e.tenant_id
            WHERE t.slug = '\(tenant)' AND r.number > CASE e.name WHEN '' THEN 0 \(known) ELSE 0 END
            """
        // A quick check counts the users of the assignments written since the last check, with
        // the indexes; a full one counts every assignment's.
        // A pinned fetch puts its user in every test: counted in any feature.
        let assignments = ledger.entries[(isFull ? 0 : checkedEntries)...].compactMap {
            entry -> (tag: String, feature: String?)? in
            switch entry.write {
            case .assign(let feature, _): (entry.tag, feature)
            case .pinned: (entry.tag, nil)
            default: nil
            }
        }
        let tag = "substr(user_id, 1, \(WriteLedger.assignTagLength))"
        let userCounts =
            isFull
            ? """
            SELECT tag, sum(users) AS users, sum(first) AS first FROM (
                SELECT \(tag) AS tag, count(*) AS users, 0 AS first FROM assignments GROUP BY tag
                UNION ALL SELECT \(tag), 0, count(*) FROM assignment_events WHERE reason = 'first' GROUP BY 1) AS counts
            GROUP BY tag
            """
            : assignments.isEmpty
                ? "SELECT 1 AS n WHERE false"
                : assignments.map { tag, feature in
                    let users = usersTagged(tag)
                    return """
                        SELECT '\(tag)' AS tag,
                            (SELECT count(*) FROM assignments
                             WHERE feature_id IN (SELECT id FROM features WHERE \(feature.map { "name = \(Self.quoted($0))" } ?? "true")) AND \(users)) AS users,
                            (SELECT count(*) FROM assignment_events WHERE environment_id IN (SELECT id FROM environments) AND \(users) AND reason = 'first') AS first
                        """
                }.joined(separator: " UNION ALL ")
        checkedEntries = ledger.entries.count
        // PostgreSQL has no integrity check a client may run (amcheck is an extension only a
        // superuser installs), and it checks every foreign key on every statement: there the
        // two stand-ins that find nothing run, as on SQLite between full checks.
        let checksFile = isFull && shell.backend == .sqlite
        let results: [[[String: Any]]]
        do {
            results = try shell.batch([
                checksFile ? "PRAGMA integrity_check" : "SELECT 'ok' AS integrity_check",
                checksFile ? "PRAGMA foreign_key_check" : "SELECT 1 AS n WHERE false",
                // UNIQUE (environment_id, number) rules out repeats, so count == max means no gap.
                """
                SELECT e.name AS env, count(r.id) AS n, coalesce(min(r.number), 1) AS lo, coalesce(max(r.number), 0) AS hi
                FROM environments e LEFT JOIN revisions r ON r.environment_id = e.id GROUP BY e.id
                """,
                "SELECT r.message, e.name AS env, r.number FROM revisions r JOIN environments e ON e.id = r.environment_id",
                "SELECT e.name AS env, r.id, r.number, r.message, \(text(ofBytes: "r.document")) AS document \(newRevisions) ORDER BY e.name, r.number",
                "SELECT a.revision_id, a.feature_name, a.field, a.change FROM audit a JOIN (SELECT r.id \(newRevisions)) n ON n.id = a.revision_id",
                userCounts,
                """
                SELECT count(*) AS n FROM assignments a WHERE \(isFull) AND a.variation \(isDistinctFrom) (
                    SELECT e.variation FROM assignment_events e
                    WHERE e.environment_id = a.environment_id AND e.user_id = a.user_id AND e.feature_id = a.feature_id
                    ORDER BY e.id DESC LIMIT 1)
                """,
                """
                SELECT count(*) AS n FROM assignment_events e WHERE \(isFull)
                    AND e.revision > (SELECT coalesce(max(number), 0) FROM revisions r WHERE r.environment_id = e.environment_id)
                """,
                """
                SELECT e.name AS env, f.name, f.enabled, v.name AS variation, v.bias
                FROM features f JOIN environments e ON e.id = f.environment_id JOIN tenants t ON t.id = e.tenant_id
                LEFT JOIN variations v ON v.feature_id = f.id
                WHERE t.slug = '\(tenant)' AND f.archived_at IS NULL AND \(isFull)
                ORDER BY e.name, f.position, v.position
                """,
                // The deltas the store keeps beside the events sum to the users each variation holds,
                // both ways (set operations chain left to right: each side is its own subquery).
                """
                WITH deltas AS (SELECT feature_id, \(bytes(ofText: "variation")) AS v, sum(users) AS n FROM assignment_deltas
                                GROUP BY 1, 2 HAVING sum(users) <> 0),
                     recorded AS (SELECT feature_id, \(bytes(ofText: "variation")) AS v, count(*) AS n FROM assignments GROUP BY 1, 2)
                SELECT count(*) AS n FROM (
                    SELECT * FROM (SELECT * FROM deltas EXCEPT SELECT * FROM recorded) AS kept_only
                    UNION ALL SELECT * FROM (SELECT * FROM recorded EXCEPT SELECT * FROM deltas) AS recorded_only
                ) AS differences
                WHERE \(isFull)
                """,
            ])
        } catch let failure as ShellFailure {
            return ["the database cannot be read: \(failure)"]
        }
        let integrity = results[0].map { "\($0["integrity_check"] ?? "")" }
        guard integrity == ["ok"] else { return ["integrity_check: \(integrity.prefix(5).joined(separator: "; "))"] }
        var problems: [String] = []
        if !results[1].isEmpty {
            problems.append("foreign_key_check: \(results[1].count) rows, first \(results[1][0])")
        }
        for row in results[2] {
            let (env, count, low, high) = (
                row["env"] as! String, row["n"] as! Int, row["lo"] as! Int, row["hi"] as! Int
            )
            if low != 1 || count != high {
                problems.append("\(env): revisions not contiguous (\(count) revisions, \(low)…\(high))")
            }
        }
        problems += checkTaggedRevisions(results[3], against: ledger)
        problems += checkNewRevisions(results[4], audit: results[5], against: ledger)
        problems += checkAssignments(results[6], of: Set(assignments.map(\.tag)), against: ledger)
        if let count = results[7].first?["n"] as? Int, count > 0 {
            problems.append("\(count) assignments differ from their latest event")
        }
        if let count = results[8].first?["n"] as? Int, count > 0 {
            problems.append("\(count) assignment events name a revision that does not exist")
        }
        if isFull { problems += checkTables(results[9]) }
        if let count = results[10].first?["n"] as? Int, count > 0 {
            problems.append("\(count) variations' assignment deltas differ from their users")
        }
        return problems
    }

    /// An import, a bias change or an edit is at most one revision, exactly one when
    /// acknowledged (none when it reported no change), at the number the writer was told.
    private func checkTaggedRevisions(_ rows: [[String: Any]], against ledger: WriteLedger) -> [String] {
        var found: [String: [(env: String, number: Int)]] = [:]
        for row in rows {
            found[row["message"] as! String, default: []].append((row["env"] as! String, row["number"] as! Int))
        }
        var problems: [String] = []
        for entry in ledger.entries {
            switch entry.write {
            case .assign, .pinned: continue
            default: break
            }
            let revisions = found[entry.tag] ?? []
            if revisions.count > 1 { problems.append("\(entry.tag): \(revisions.count) revisions") }
            guard !(entry.isAcknowledged && entry.isUnchanged) else {
                if !revisions.isEmpty { problems.append("\(entry.tag): reported unchanged, but made a revision") }
                continue
            }
            if entry.isAcknowledged && revisions.isEmpty {
                problems.append("\(entry.tag): acknowledged (revision \(entry.revision ?? 0)) but absent")
            }
            if let revision = revisions.first {
                if revision.env != entry.environment {
                    problems.append("\(entry.tag): written to \(revision.env), not \(entry.environment)")
                }
                if let told = entry.revision, told != revision.number {
                    problems.append("\(entry.tag): told revision \(told), stored as \(revision.number)")
                }
            }
        }
        return problems
    }

    /// Each revision not yet seen, in order: its audit rows are exactly the diff from the one
    /// before, and a ledger write tagged on it wrote exactly what was asked.
    private func checkNewRevisions(
        _ revisions: [[String: Any]], audit: [[String: Any]], against ledger: WriteLedger
    ) -> [String] {
        var problems: [String] = []
        let byTag = Dictionary(ledger.entries.map { ($0.tag, $0) }, uniquingKeysWith: { first, _ in first })
        var recorded: [Int: [String]] = [:]
        for row in audit {
            recorded[row["revision_id"] as! Int, default: []].append(
                Self.line(row["feature_name"] as? String, row["field"] as? String, row["change"] as! String))
        }
        for revision in revisions {
            let env = revision["env"] as! String
            let number = revision["number"] as! Int
            let previous = latest[env] ?? (0, FeaturesDocument(features: []), [])
            let bytes = Array((revision["document"] as! String).utf8)
            guard let document = DocumentDecoder.decode(bytes).document else {
                problems.append("\(env) revision \(number): its document does not decode")
                continue
            }
            let expected = DocumentDiff(from: previous.document, to: document).changes.map {
                Self.line($0.feature, $0.field, $0.kind.rawValue)
            }
            let audit = recorded[revision["id"] as! Int] ?? []
            if expected.isEmpty {
                problems.append("\(env) revision \(number): identical to revision \(previous.number)")
            }
            if expected.sorted() != audit.sorted() {
                problems.append(
                    "\(env) revision \(number): audit has \(audit.count) rows \(audit.sorted().prefix(3)), the diff \(expected.count) changes \(expected.sorted().prefix(3))"
                )
            }
            if let entry = byTag[revision["message"] as! String] {
                switch entry.write {
                case .importDocument(let rendered):
                    if bytes != rendered {
                        problems.append(
                            "\(env) revision \(number) (\(entry.tag)): not the imported file's \(rendered.count) bytes but \(bytes.count)"
                        )
                    }
                case .biases(let feature, let biases):
                    let stored = document.feature(named: feature)?.testBiases
                    if stored != biases {
                        problems.append(
                            "\(env) revision \(number) (\(entry.tag)): \(feature) has biases \(stored ?? []) not \(biases)"
                        )
                    }
                case .assign, .pinned, .edit:
                    break
                }
            }
            latest[env] = (number, document, bytes)
        }
        return problems
    }

    /// A bulk assignment is all its users or none, each with its `first` event.
    private func checkAssignments(
        _ rows: [[String: Any]], of tags: Set<String>, against ledger: WriteLedger
    ) -> [String] {
        let counts = Dictionary(
            uniqueKeysWithValues: rows.map {
                ($0["tag"] as! String, (users: $0["users"] as! Int, first: $0["first"] as! Int))
            })
        var problems: [String] = []
        for entry in ledger.entries where tags.contains(entry.tag) {
            let (users, first) = counts[entry.tag] ?? (0, 0)
            switch entry.write {
            case .assign(_, let count):
                if users != 0 && users != count {
                    problems.append("\(entry.tag): \(users) of \(count) users assigned (half-applied)")
                }
                if entry.isAcknowledged && users != count {
                    problems.append("\(entry.tag): acknowledged, but \(users) of \(count) users assigned")
                }
            case .pinned(let tests):
                if entry.isAcknowledged, let tests, users != tests {
                    problems.append(
                        "\(entry.tag): its pinned document was answered with \(tests) tests, but the user is in \(users)"
                    )
                }
            default: continue
            }
            if first != users { problems.append("\(entry.tag): \(users) users assigned, \(first) first events") }
        }
        return problems
    }

    /// Each environment's tables hold its latest revision's features, in order, with their
    /// states, variations and biases.
    private func checkTables(_ rows: [[String: Any]]) -> [String] {
        var stored: [String: [(name: String, enabled: Bool?, variations: [String], biases: [Double])]] = [:]
        for row in rows {
            let (env, name) = (row["env"] as! String, row["name"] as! String)
            var features = stored[env] ?? []
            if features.last?.name != name { features.append((name, Self.flag(row["enabled"]), [], [])) }
            if let variation = row["variation"] as? String { features[features.count - 1].variations.append(variation) }
            if let bias = row["bias"] as? NSNumber { features[features.count - 1].biases.append(bias.doubleValue) }
            stored[env] = features
        }
        var problems: [String] = []
        for (env, latest) in latest.sorted(by: { $0.key < $1.key }) {
            let rows = stored[env] ?? []
            let features = latest.document.features
            guard rows.map(\.name) == features.map(\.name) else {
                problems.append(
                    "\(env): the tables hold \(rows.count) features, revision \(latest.number) \(features.count) (or in another order)"
                )
                continue
            }
            for (row, feature) in zip(rows, features)
            where row.enabled != feature.enabled || row.variations != (feature.testVariations ?? [])
                || row.biases != (feature.testBiases ?? [])
            {
                problems.append("\(env): \(feature.name) in the tables differs from revision \(latest.number)")
                break
            }
        }
        return problems
    }

    /// A boolean column: 0 or 1 from SQLite, false or true from PostgreSQL; nil when NULL.
    private static func flag(_ value: Any?) -> Bool? {
        switch value {
        case let flag as Bool: flag
        case let number as Int: number == 1
        default: nil
        }
    }

    // MARK: SQL written for each backend

    /// The users of an assignment tag, `<tag>-…`: a range of ids in byte order, where `-` comes
    /// just before `.`. PostgreSQL compares text in byte order under the "C" collation only;
    /// its user-id columns have it, and the clause keeps the range in byte order regardless.
    func usersTagged(_ tag: String) -> String {
        let userID = shell.backend == .postgres ? #"user_id COLLATE "C""# : "user_id"
        return "\(userID) >= '\(tag)-' AND \(userID) < '\(tag).'"
    }

    /// A stored document's bytes as text: a blob cast on SQLite, a `bytea` decoded on PostgreSQL.
    private func text(ofBytes column: String) -> String {
        shell.backend == .postgres ? "convert_from(\(column), 'UTF8')" : "CAST(\(column) AS TEXT)"
    }

    /// Text as its bytes, to compare byte for byte.
    private func bytes(ofText column: String) -> String {
        shell.backend == .postgres ? "convert_to(\(column), 'UTF8')" : "CAST(\(column) AS BLOB)"
    }

    /// The comparison where NULL equals NULL and differs from any value (`IS NOT` is SQLite's;
    /// its `IS DISTINCT FROM` is too recent for some systems' shells).
    private var isDistinctFrom: String {
        shell.backend == .postgres ? "IS DISTINCT FROM" : "IS NOT"
    }

    /// `text` as an SQL string literal.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    private static func line(_ feature: String?, _ field: String?, _ change: String) -> String {
        "\(feature ?? "∅")|\(field ?? "∅")|\(change)"
    }
}
