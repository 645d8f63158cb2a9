import FlagpoleCore
import Foundation

/// The one home of every statement on an environment's aggregate: `environments` (delivery
/// settings and marking included), its numbered `revisions` with their `audit` rows, the document's other
/// top-level keys (`document_extras`), and the store's `store_generation`, which a restore raises.
struct EnvironmentTable {
    let db: Transaction

    // MARK: Environments

    /// The environment at `path`.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    func scope(of path: EnvironmentPath) throws -> EnvironmentScope {
        // Every request starts here: one cached statement when the environment exists.
        let found = try db.row(
            """
            SELECT t.id, e.id, e.features_position FROM tenants t JOIN environments e ON e.tenant_id = t.id
            WHERE t.slug = ? AND e.name = ?
            """, [path.tenant.rawValue, path.environment.rawValue], cached: true)
        if let found {
            return EnvironmentScope(
                tenant: TenantScope(id: found[0], slug: path.tenant), id: found[1], path: path,
                featuresPosition: found[2])
        }
        // The long way round, to say what is missing.
        let tenant = try db.tenants.scope(of: path.tenant)
        let environments = try all(of: tenant)
        guard let record = environments.first(where: { $0.name == path.environment.rawValue }) else {
            throw TenancyError.environmentNotFound(
                path, existing: environments.map { EnvironmentName(rawValue: $0.name) })
        }
        return EnvironmentScope(record, of: tenant)
    }

    /// Where the environment at `path` is, its latest revision and the store's generation, in
    /// one statement.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    func head(of path: EnvironmentPath) throws -> EnvironmentHead {
        let row = try db.row(
            """
            SELECT t.id, e.id, e.features_position,
                (SELECT max(number) FROM revisions r WHERE r.tenant_id = t.id AND r.environment_id = e.id),
                (SELECT generation FROM store_generation)
            FROM tenants t JOIN environments e ON e.tenant_id = t.id
            WHERE t.slug = ? AND e.name = ?
            """, [path.tenant.rawValue, path.environment.rawValue], cached: true)
        guard let row else {
            // Says which of the two is missing.
            _ = try scope(of: path)
            throw TenancyError.environmentNotFound(path, existing: [])
        }
        return EnvironmentHead(
            scope: EnvironmentScope(
                tenant: TenantScope(id: row[0], slug: path.tenant), id: row[1], path: path, featuresPosition: row[2]),
            revision: row[3], generation: row[4])
    }

    /// Whether the environment is still at `head`'s revision and generation: what a write
    /// computed from a read checks, inside its transaction, before writing.
    func isCurrent(_ head: EnvironmentHead) throws -> Bool {
        // A group commit's writes each asking would cost a statement each (a round trip on
        // PostgreSQL): the answer is kept for the transaction, which only its own writes can
        // change (a write holds the store's write lock; a read is one snapshot).
        if let known = db.memo[KnownHeads.self]?[head.scope.id] {
            return known.revision == head.revision && known.generation == head.generation
        }
        let row = try db.row(
            """
            SELECT (SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?),
                (SELECT generation FROM store_generation)
            """, [head.scope.tenant.id, head.scope.id], cached: true)!
        let revision: Int? = row[0]
        let generation: Int64 = row[1]
        db.memo[KnownHeads.self, default: [:]][head.scope.id] = (revision, generation)
        return revision == head.revision && generation == head.generation
    }

    /// Each environment's latest revision and the store's generation, as the transaction read
    /// them (`isCurrent`), until it writes a revision or a generation; by environment id.
    private typealias KnownHeads = [Int64: (revision: Int?, generation: Int64)]

    /// The environments of `tenant`, by name.
    func all(of tenant: TenantScope) throws -> [EnvironmentRecord] {
        try db.rows(
            "SELECT \(EnvironmentRecord.columns) FROM environments WHERE tenant_id = ? ORDER BY name", [tenant.id]
        ).map(EnvironmentRecord.init(row:))
    }

    /// The row of the environment of `scope`.
    func record(of scope: EnvironmentScope) throws -> EnvironmentRecord {
        try db.row("SELECT \(EnvironmentRecord.columns) FROM environments WHERE id = ?", [scope.id])
            .map(EnvironmentRecord.init(row:))!
    }

    /// Inserts an environment of `tenant` named `name`, with no revision.
    func insert(_ name: EnvironmentName, of tenant: TenantScope, createdAt: Date) throws -> EnvironmentRecord {
        var record = EnvironmentRecord(
            tenantID: tenant.id, name: name.rawValue, featuresPosition: 0, createdAt: createdAt)
        record.id = try db.insertReturningID(
            """
            INSERT INTO environments (tenant_id, name, features_position, created_at, is_private, cache_control)
            VALUES (?, ?, ?, ?, ?, ?) RETURNING id
            """,
            [
                record.tenantID, record.name, record.featuresPosition, record.createdAt, record.isPrivate,
                record.cacheControl,
            ])
        return record
    }

    /// Every environment of every tenant with its latest revision number, by tenant then name.
    func latestRevisions() throws -> [(path: EnvironmentPath, revision: Int?)] {
        try db.rows(
            """
            SELECT t.slug, e.name, (SELECT max(number) FROM revisions r WHERE r.environment_id = e.id)
            FROM environments e JOIN tenants t ON t.id = e.tenant_id
            ORDER BY t.slug, e.name
            """
        ).map { row in
            (
                EnvironmentPath(tenant: TenantSlug(rawValue: row[0]), environment: EnvironmentName(rawValue: row[1])),
                row[2]
            )
        }
    }

    // MARK: Delivery settings

    /// Every environment's latest revision and delivery settings, with the store's generation,
    /// in one statement.
    func deliveryStates() throws -> [EnvironmentPath: DeliveryState] {
        let rows = try db.rows(
            """
            SELECT t.slug, e.name, e.is_private, e.cache_control, e.delivery_version,
                   (SELECT max(number) FROM revisions r WHERE r.environment_id = e.id),
                   (SELECT generation FROM store_generation)
            FROM environments e JOIN tenants t ON t.id = e.tenant_id
            """, cached: true)
        return Dictionary(
            uniqueKeysWithValues: rows.map { row in
                let path = EnvironmentPath(
                    tenant: TenantSlug(rawValue: row[0]), environment: EnvironmentName(rawValue: row[1]))
                return (
                    path,
                    DeliveryState(
                        revision: row[5], settings: DeliverySettings(isPrivate: row[2], cacheControl: row[3]),
                        settingsVersion: row[4], generation: row[6])
                )
            })
    }

    /// The environment's delivery settings and their version.
    func deliverySettings(in scope: EnvironmentScope) throws -> (settings: DeliverySettings, version: Int) {
        let row = try db.row(
            "SELECT is_private, cache_control, delivery_version FROM environments WHERE id = ?", [scope.id])!
        return (DeliverySettings(isPrivate: row[0], cacheControl: row[1]), row[2])
    }

    /// Stores new delivery settings, raising their version.
    func updateDeliverySettings(_ settings: DeliverySettings, in scope: EnvironmentScope) throws {
        try db.execute(
            """
            UPDATE environments SET is_private = ?, cache_control = ?, delivery_version = delivery_version + 1
            WHERE id = ?
            """,
            [settings.isPrivate, settings.cacheControl, scope.id])
        db.announceChange(of: scope)
    }

    // MARK: Marking

    /// Stores the environment's colour and whether changes need a reason. Apps are served
    /// nothing of it, so the delivery version stays and no change is announced.
    func updateMarking(_ marking: EnvironmentMarking, in scope: EnvironmentScope) throws {
        try db.execute(
            "UPDATE environments SET colour = ?, requires_reason = ? WHERE id = ? AND tenant_id = ?",
            [marking.colour?.rawValue, marking.requiresReason, scope.id, scope.tenant.id])
    }

    // MARK: Revisions and their audit

    /// The number of the environment's latest revision, `nil` before the first import.
    func latestRevisionNumber(in scope: EnvironmentScope) throws -> Int? {
        try db.value(
            Int.self, "SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?",
            [scope.tenant.id, scope.id], cached: true)
    }

    /// Revision `number` of the environment, or the latest when `number` is `nil`.
    func revision(_ number: Int?, in scope: EnvironmentScope) throws -> RevisionRecord? {
        let select = "SELECT \(RevisionRecord.columns) FROM revisions WHERE tenant_id = ? AND environment_id = ?"
        if let number {
            return try db.row(select + " AND number = ?", [scope.tenant.id, scope.id, number])
                .map(RevisionRecord.init(row:))
        }
        return try db.row(select + " ORDER BY number DESC LIMIT 1", [scope.tenant.id, scope.id])
            .map(RevisionRecord.init(row:))
    }

    /// The configs file revision `number` keeps, `nil` when it has none.
    func configs(ofRevision number: Int, in scope: EnvironmentScope) throws -> Data? {
        try db.value(
            Data.self, "SELECT configs FROM revisions WHERE tenant_id = ? AND environment_id = ? AND number = ?",
            [scope.tenant.id, scope.id, number], cached: true)
    }

    /// The rules and segments kept with a revision (`nil`: none).
    func targeting(ofRevision number: Int, in scope: EnvironmentScope) throws -> Data? {
        try db.value(
            Data.self, "SELECT targeting FROM revisions WHERE tenant_id = ? AND environment_id = ? AND number = ?",
            [scope.tenant.id, scope.id, number], cached: true)
    }

    /// The environment's revisions numbered above `number`, oldest first: the latest `limit`.
    func revisions(after number: Int, limit: Int, in scope: EnvironmentScope) throws -> [RevisionRecord] {
        try db.rows(
            """
            SELECT \(RevisionRecord.columns) FROM revisions
            WHERE tenant_id = ? AND environment_id = ? AND number > ?
            ORDER BY number DESC LIMIT ?
            """, [scope.tenant.id, scope.id, number, limit]
        ).map(RevisionRecord.init(row:)).reversed()
    }

    /// The environment's revisions in brief, newest first.
    func revisionSummaries(in scope: EnvironmentScope) throws -> [RevisionSummary] {
        try db.rows(
            """
            SELECT r.number, r.kind, r.actor, r.message, r.created_at, length(r.document) AS size,
                   (SELECT count(*) FROM audit a WHERE a.revision_id = r.id AND a.tenant_id = r.tenant_id) AS changes
            FROM revisions r
            WHERE r.tenant_id = ? AND r.environment_id = ?
            ORDER BY r.number DESC
            """, [scope.tenant.id, scope.id]
        ).map { row in
            RevisionSummary(
                number: row["number"], kind: RevisionKind(rawValue: row["kind"]) ?? .edit, actor: row["actor"],
                message: row["message"], createdAt: row["created_at"], size: row["size"], changeCount: row["changes"])
        }
    }

    /// The revisions created at or after `time`, oldest first, at most `limit`, each with what its
    /// audit rows touched (their values left out): what the audit feed tells of each.
    func revisionsCreated(
        since time: Date, in scope: EnvironmentScope, limit: Int
    ) throws -> [(summary: RevisionSummary, movedUsers: Int?, changes: [DocumentDiff.Change])] {
        try db.rows(
            """
            SELECT id, number, kind, actor, message, created_at, moved_users FROM revisions
            WHERE tenant_id = ? AND environment_id = ? AND created_at >= ? ORDER BY number LIMIT ?
            """, [scope.tenant.id, scope.id, time, limit]
        ).map { row in
            let changes = try db.rows(
                """
                SELECT feature_name, field, change, config_name, segment_name FROM audit
                WHERE tenant_id = ? AND revision_id = ? ORDER BY id
                """, [scope.tenant.id, row[0] as Int64]
            ).map { audit in
                DocumentDiff.Change(
                    feature: audit[0], field: audit[1], kind: DocumentDiff.Change.Kind(rawValue: audit[2]) ?? .changed,
                    before: nil, after: nil, config: audit[3], segment: audit[4])
            }
            let summary = RevisionSummary(
                number: row[1], kind: RevisionKind(rawValue: row[2]) ?? .edit, actor: row[3], message: row[4],
                createdAt: row[5], size: 0, changeCount: changes.count)
            return (summary, row[6], changes)
        }
    }

    /// The audit rows of `revision`, in the order they were written.
    func audit(of revision: RevisionRecord, in scope: EnvironmentScope) throws -> [AuditRecord] {
        try db.rows(
            "SELECT \(AuditRecord.columns) FROM audit WHERE tenant_id = ? AND revision_id = ? ORDER BY id",
            [scope.tenant.id, revision.id]
        ).map(AuditRecord.init(row:))
    }

    /// The revisions that changed the feature `name`, newest first, each with its audit rows of
    /// the feature; the actor is the key's name when the key has one.
    func featureHistory(of name: String, in scope: EnvironmentScope) throws -> [FeatureHistoryEntry] {
        let rows = try db.rows(
            """
            SELECT r.number, r.kind, r.actor, k.name AS key_name, r.message, r.created_at,
                   a.field, a.change, a.before_json, a.after_json
            FROM audit a JOIN revisions r ON r.id = a.revision_id AND r.tenant_id = a.tenant_id
            LEFT JOIN api_keys k ON r.actor = 'key:' || k.prefix
            WHERE a.tenant_id = ? AND a.feature_name = ? AND r.environment_id = ?
            ORDER BY r.number DESC, a.id
            """, [scope.tenant.id, name, scope.id])
        var entries: [FeatureHistoryEntry] = []
        for row in rows {
            let number: Int = row["number"]
            if entries.last?.change.revision != number {
                entries.append(FeatureHistoryEntry(change: FeatureChange(row: row), fields: []))
            }
            entries[entries.count - 1].fields.append(
                FieldChange(
                    field: row["field"], kind: DocumentDiff.Change.Kind(rawValue: row["change"]) ?? .changed,
                    before: row["before_json"], after: row["after_json"]))
        }
        return entries
    }

    /// The last revision that changed the feature `name` (its fields, its rules, its presence),
    /// `nil` when none did.
    func lastChange(of name: String, in scope: EnvironmentScope) throws -> FeatureChange? {
        try db.row(
            """
            SELECT a.feature_name, r.number, r.kind, r.actor, k.name AS key_name, r.message, r.created_at
            FROM audit a JOIN revisions r ON r.id = a.revision_id AND r.tenant_id = a.tenant_id
            LEFT JOIN api_keys k ON r.actor = 'key:' || k.prefix
            WHERE a.tenant_id = ? AND a.feature_name = ? AND r.environment_id = ?
            ORDER BY r.number DESC LIMIT 1
            """, [scope.tenant.id, name, scope.id]
        ).map(FeatureChange.init(row:))
    }

    /// The last revision that changed each feature of the environment, by the feature's name.
    func lastFeatureChanges(in scope: EnvironmentScope) throws -> [String: FeatureChange] {
        let rows = try db.rows(
            """
            SELECT a.feature_name, r.number, r.kind, r.actor, k.name AS key_name, r.message, r.created_at
            FROM revisions r JOIN audit a ON a.revision_id = r.id AND a.tenant_id = r.tenant_id
            LEFT JOIN api_keys k ON r.actor = 'key:' || k.prefix
            WHERE r.tenant_id = ? AND r.environment_id = ? AND a.feature_name IS NOT NULL
            """, [scope.tenant.id, scope.id])
        var last: [String: FeatureChange] = [:]
        for row in rows {
            let name: String = row["feature_name"]
            let number: Int = row["number"]
            if let known = last[name], known.revision >= number { continue }
            last[name] = FeatureChange(row: row)
        }
        return last
    }

    /// Records a new revision with its rendered document and configs (`nil`: none) and one audit
    /// row per change: every revision is written here, so this is where an environment that asks
    /// a reason of every change refuses one given none, inside the change's own transaction.
    ///
    /// - throws: `DocumentError.reasonRequired`.
    func insertRevision(
        number: Int, kind: RevisionKind, actor: String, message: RevisionMessage, document: [UInt8],
        configs: [UInt8]?, targeting: Data?, changes: [DocumentDiff.Change], in scope: EnvironmentScope, at time: Date
    ) throws {
        if !message.isGiven, try record(of: scope).marking.requiresReason {
            throw DocumentError.reasonRequired(scope.path)
        }
        let revisionID = try db.insertReturningID(
            """
            INSERT INTO revisions (tenant_id, environment_id, number, kind, actor, message, created_at, document,
                configs, targeting)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """,
            [
                scope.tenant.id, scope.id, number, kind.rawValue, actor, message.text, time, document, configs,
                targeting,
            ])
        db.announceChange(of: scope)
        db.memo[KnownHeads.self] = nil
        try insertAudit(changes, ofRevision: revisionID, in: scope)
        db.record(
            .revisionCreated(
                number: number, kind: kind, actor: actor, message: message.text, changes: changes, movedUsers: nil,
                in: scope.path, at: time))
    }

    /// Records how many recorded users revision `number` moved, once they have: on the revision,
    /// for the audit feed, and in its `revision.created` event.
    func recordMovedUsers(_ count: Int, ofRevision number: Int, in scope: EnvironmentScope) throws {
        try db.execute(
            "UPDATE revisions SET moved_users = ? WHERE tenant_id = ? AND environment_id = ? AND number = ?",
            [count, scope.tenant.id, scope.id, number])
        db.updateLastEvent(.revisionCreated, in: scope.path) { $0.setMovedUsers(count) }
    }

    /// How many audit rows one statement of `insertAudit` writes: a statement per row would cost
    /// a large import more than its writes where statements are round trips (9 arguments a row,
    /// far below PostgreSQL's 65 535 and SQLite's 32 766).
    private static let auditRowsPerStatement = 500

    /// The audit rows of a revision, many to a statement.
    private func insertAudit(
        _ changes: [DocumentDiff.Change], ofRevision revisionID: Int64, in scope: EnvironmentScope
    ) throws {
        for start in stride(from: 0, to: changes.count, by: Self.auditRowsPerStatement) {
            let batch = changes[start..<min(start + Self.auditRowsPerStatement, changes.count)]
            // Rows in `changes`' order, so the ids keep it; bound by position, without boxing.
            let insert = try db.statement(
                """
                INSERT INTO audit (tenant_id, revision_id, feature_name, field, change, before_json, after_json,
                    config_name, segment_name)
                VALUES \(repeatElement("(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: batch.count).joined(separator: ", "))
                """, cached: batch.count == Self.auditRowsPerStatement)
            for (row, change) in batch.enumerated() {
                let first = Int32(row * 9)
                insert.bind(scope.tenant.id, at: first + 1)
                insert.bind(revisionID, at: first + 2)
                insert.bind(change.feature, at: first + 3)
                insert.bind(change.field, at: first + 4)
                insert.bind(change.kind.rawValue, at: first + 5)
                insert.bind(change.before?.storedText, at: first + 6)
                insert.bind(change.after?.storedText, at: first + 7)
                insert.bind(change.config, at: first + 8)
                insert.bind(change.segment, at: first + 9)
            }
            try insert.execute()
        }
    }

    /// How many revisions there are, in every environment.
    func revisionCount() throws -> Int {
        try db.value(Int.self, "SELECT count(*) FROM revisions") ?? 0
    }

    // MARK: The document's other keys

    /// The document's top-level keys other than `features`, in order.
    func extras(in scope: EnvironmentScope) throws -> JSONObject {
        let records = try db.rows(
            """
            SELECT \(DocumentExtraRecord.columns) FROM document_extras
            WHERE tenant_id = ? AND environment_id = ? ORDER BY position
            """, [scope.tenant.id, scope.id]
        ).map(DocumentExtraRecord.init(row:))
        return JSONObject(
            try records.map { JSONObject.Member(key: $0.key, value: try JSONValue(storedText: $0.valueJSON)) })
    }

    /// Replaces the document's other top-level keys and the place of `features` among them.
    func replaceExtras(of document: FeaturesDocument, in scope: EnvironmentScope) throws {
        try db.execute(
            "DELETE FROM document_extras WHERE tenant_id = ? AND environment_id = ?", [scope.tenant.id, scope.id])
        for (position, member) in document.extras.members.enumerated() {
            try db.execute(
                """
                INSERT INTO document_extras (tenant_id, environment_id, position, key, value_json)
                VALUES (?, ?, ?, ?, ?)
                """, [scope.tenant.id, scope.id, position, member.key, member.value.storedText], cached: true)
        }
        try db.execute(
            "UPDATE environments SET features_position = ? WHERE id = ? AND tenant_id = ?",
            [document.featuresPosition, scope.id, scope.tenant.id])
    }

    // MARK: The change sequence

    /// Records the environment's next step of its change sequence for what this transaction
    /// changed, with which users that was (`nil`: any), in one statement: the migration's trigger
    /// gives the environment the step's number (and on PostgreSQL sends the `NOTIFY` that leaves
    /// with the commit). Writes hold the store's write lock on both backends, so each number is
    /// read by one write, and commits after the one before it.
    func advanceChangeSequence(_ change: EnvironmentChange, at time: Date) throws {
        try db.execute(
            Self.steppingOneChangeSequence,
            [
                change.scope.id,
                change.users.map { JSONValue.array($0.sorted().map { .string($0.rawValue) }).storedText },
                change.isDelivery, time.unixMilliseconds,
            ], cached: true)
    }

    private static let steppingOneChangeSequence = steppingChangeSequences(
        "SELECT ? AS environment_id, ? AS users, ? AS delivery, ? AS changed_at")

    /// The statement that takes one step of the change sequence of each environment `source`
    /// selects (columns `environment_id`, `users`, `delivery`, `changed_at`): alone, or inside a
    /// group commit's statement that records the users it names (`AssignmentWriter.prerecord`).
    static func steppingChangeSequences(_ source: String) -> String {
        """
        INSERT INTO environment_changes (environment_id, sequence, users, delivery, changed_at)
        SELECT e.id, e.change_sequence + 1, step.users, step.delivery, step.changed_at
        FROM (\(source)) AS step JOIN environments e ON e.id = step.environment_id
        """
    }

    /// Every environment's change sequence number, by path.
    func changeSequences() throws -> [EnvironmentPath: (id: Int64, sequence: Int64)] {
        Dictionary(
            uniqueKeysWithValues: try db.rows(
                """
                SELECT t.slug, e.name, e.id, e.change_sequence FROM environments e JOIN tenants t ON t.id = e.tenant_id
                """
            ).map { row in
                (
                    EnvironmentPath(
                        tenant: TenantSlug(rawValue: row[0]), environment: EnvironmentName(rawValue: row[1])),
                    (id: row[2], sequence: row[3])
                )
            })
    }

    /// The steps of the environment's change sequence after `sequence`, in order, each with the
    /// users it changed (`nil`: any).
    func changes(ofEnvironment id: Int64, after sequence: Int64) throws -> [(sequence: Int64, users: [UserID]?)] {
        try db.rows(
            "SELECT sequence, users FROM environment_changes WHERE environment_id = ? AND sequence > ? ORDER BY sequence",
            [id, sequence]
        ).map { row in
            let users: [UserID]? = try (row[1] as String?).map { text in
                guard case .array(let ids) = try JSONValue(storedText: text) else { return [] }
                return ids.compactMap { id in
                    guard case .string(let id) = id else { return nil }
                    return UserID(rawValue: id)
                }
            }
            return (row[0], users)
        }
    }

    /// Deletes every step of the environment's change sequence kept so far (a forget: they may
    /// name the user); a server behind them reads the environment as wholly changed.
    func forgetChanges(in scope: EnvironmentScope) throws {
        try db.execute("DELETE FROM environment_changes WHERE environment_id = ?", [scope.id])
    }

    /// Deletes the change sequence's steps older than `time`: a server that far behind reads
    /// its environments as wholly changed.
    func pruneChanges(before time: Date) throws -> Int {
        try db.execute("DELETE FROM environment_changes WHERE changed_at < ?", [time.unixMilliseconds])
    }

    // MARK: The store's generation

    /// The store's generation: it grows with every restore.
    func generation() throws -> Int64 {
        try db.value(Int64.self, "SELECT generation FROM store_generation") ?? 0
    }

    /// Sets this database's generation above `other`'s and its own: a restored file must read as
    /// newer than anything a server has served from the database it replaces.
    func raiseGeneration(above other: Int64) throws {
        // The larger of the two, plus one (SQLite's scalar max() is not PostgreSQL's).
        try db.execute(
            "UPDATE store_generation SET generation = CASE WHEN generation >= ? THEN generation ELSE ? END + 1",
            [other, other])
        db.memo[KnownHeads.self] = nil
    }
}

extension Transaction {
    /// Environments, their revisions and audit.
    var environments: EnvironmentTable { EnvironmentTable(db: self) }
}

/// A row of `environments`: one features.json of a tenant.
struct EnvironmentRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case name
        case featuresPosition = "features_position"
        case createdAt = "created_at"
        case isPrivate = "is_private"
        case cacheControl = "cache_control"
        case colour
        case requiresReason = "requires_reason"
    }

    var id: Int64?
    var tenantID: Int64
    var name: String
    var featuresPosition: Int
    var createdAt: Date
    var isPrivate = false
    var cacheControl: String?
    var colour: String?
    var requiresReason = false

    var marking: EnvironmentMarking {
        EnvironmentMarking(colour: colour.map(EnvironmentColour.init(rawValue:)), requiresReason: requiresReason)
    }
}

extension EnvironmentRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        name = row[.name]
        featuresPosition = row[.featuresPosition]
        createdAt = row[.createdAt]
        isPrivate = row[.isPrivate]
        cacheControl = row[.cacheControl]
        colour = row[.colour]
        requiresReason = row[.requiresReason]
    }
}

/// A row of `revisions`: one numbered state of an environment with its rendered document.
struct RevisionRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case number
        case kind
        case actor
        case message
        case createdAt = "created_at"
        case document
        case configs
        case targeting
    }

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var number: Int
    var kind: String
    var actor: String
    var message: String
    var createdAt: Date
    var document: Data
    /// The configs file of the revision; `nil` when it has neither configs nor feature tags.
    var configs: Data?
    /// The rules and segments of the revision (`TargetingDocument`); `nil` when it has none.
    var targeting: Data?
}

extension RevisionRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        environmentID = row[.environmentID]
        number = row[.number]
        kind = row[.kind]
        actor = row[.actor]
        message = row[.message]
        createdAt = row[.createdAt]
        document = row[.document]
        configs = row[.configs]
        targeting = row[.targeting]
    }
}

/// A row of `audit`: one changed field of one revision, with its values before and after.
struct AuditRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case revisionID = "revision_id"
        case featureName = "feature_name"
        case field
        case change
        case beforeJSON = "before_json"
        case afterJSON = "after_json"
        case configName = "config_name"
        case segmentName = "segment_name"
    }

    var id: Int64?
    var tenantID: Int64
    var revisionID: Int64
    var featureName: String?
    var field: String?
    var change: String
    var beforeJSON: String?
    var afterJSON: String?
    var configName: String?
    var segmentName: String?
}

extension AuditRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        revisionID = row[.revisionID]
        featureName = row[.featureName]
        field = row[.field]
        change = row[.change]
        beforeJSON = row[.beforeJSON]
        afterJSON = row[.afterJSON]
        configName = row[.configName]
        segmentName = row[.segmentName]
    }
}

/// A row of `document_extras`: a top-level key of the document other than `features`.
struct DocumentExtraRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case position
        case key
        case valueJSON = "value_json"
    }

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var position: Int
    var key: String
    var valueJSON: String
}

extension DocumentExtraRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        environmentID = row[.environmentID]
        position = row[.position]
        key = row[.key]
        valueJSON = row[.valueJSON]
    }
}
