import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on an environment's aggregate: `environments` (delivery
/// settings included), its numbered `revisions` with their `audit` rows, the document's other
/// top-level keys (`document_extras`), and the store's `store_generation`, which a restore raises.
struct EnvironmentTable {
    let db: Database

    // MARK: Environments

    /// The environment at `path`.
    ///
    /// - throws: `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    func scope(of path: EnvironmentPath) throws -> EnvironmentScope {
        // Every request starts here: one cached statement when the environment exists.
        let found = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT t.id, e.id, e.features_position FROM tenants t JOIN environments e ON e.tenant_id = t.id
                    WHERE t.slug = ? AND e.name = ?
                    """), arguments: [path.tenant.rawValue, path.environment.rawValue])
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
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT t.id, e.id, e.features_position,
                        (SELECT max(number) FROM revisions r WHERE r.tenant_id = t.id AND r.environment_id = e.id),
                        (SELECT generation FROM store_generation)
                    FROM tenants t JOIN environments e ON e.tenant_id = t.id
                    WHERE t.slug = ? AND e.name = ?
                    """), arguments: [path.tenant.rawValue, path.environment.rawValue])
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
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT (SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?), (SELECT generation FROM store_generation)
                    """), arguments: [head.scope.tenant.id, head.scope.id])!
        return row[0] == head.revision && row[1] == head.generation
    }

    /// The environments of `tenant`, by name.
    func all(of tenant: TenantScope) throws -> [EnvironmentRecord] {
        try EnvironmentRecord.owned(by: tenant).order(EnvironmentRecord.Columns.name).fetchAll(db)
    }

    /// The row of the environment of `scope`.
    func record(of scope: EnvironmentScope) throws -> EnvironmentRecord {
        try EnvironmentRecord.filter(key: scope.id).fetchOne(db)!
    }

    /// Inserts an environment of `tenant` named `name`, with no revision.
    func insert(_ name: EnvironmentName, of tenant: TenantScope, createdAt: Date) throws -> EnvironmentRecord {
        var record = EnvironmentRecord(
            tenantID: tenant.id, name: name.rawValue, featuresPosition: 0, createdAt: createdAt)
        try record.insert(db)
        return record
    }

    /// Every environment of every tenant with its latest revision number, by tenant then name.
    func latestRevisions() throws -> [(path: EnvironmentPath, revision: Int?)] {
        try Row.fetchAll(
            db,
            sql: """
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
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT t.slug, e.name, e.is_private, e.cache_control, e.delivery_version,
                           (SELECT max(number) FROM revisions r WHERE r.environment_id = e.id),
                           (SELECT generation FROM store_generation)
                    FROM environments e JOIN tenants t ON t.id = e.tenant_id
                    """))
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
        let row = try Row.fetchOne(
            db, sql: "SELECT is_private, cache_control, delivery_version FROM environments WHERE id = ?",
            arguments: [scope.id])!
        return (DeliverySettings(isPrivate: row[0], cacheControl: row[1]), row[2])
    }

    /// Stores new delivery settings, raising their version.
    func updateDeliverySettings(_ settings: DeliverySettings, in scope: EnvironmentScope) throws {
        try db.execute(
            sql:
                "UPDATE environments SET is_private = ?, cache_control = ?, delivery_version = delivery_version + 1 WHERE id = ?",
            arguments: [settings.isPrivate, settings.cacheControl, scope.id])
    }

    // MARK: Revisions and their audit

    /// The number of the environment's latest revision, `nil` before the first import.
    func latestRevisionNumber(in scope: EnvironmentScope) throws -> Int? {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?"),
            arguments: [scope.tenant.id, scope.id])
    }

    /// Revision `number` of the environment, or the latest when `number` is `nil`.
    func revision(_ number: Int?, in scope: EnvironmentScope) throws -> RevisionRecord? {
        let revisions = RevisionRecord.owned(by: scope.tenant).filter(RevisionRecord.Columns.environmentID == scope.id)
        if let number {
            return try revisions.filter(RevisionRecord.Columns.number == number).fetchOne(db)
        }
        return try revisions.order(RevisionRecord.Columns.number.desc).limit(1).fetchOne(db)
    }

    /// The configs file revision `number` keeps, `nil` when it has none.
    func configs(ofRevision number: Int, in scope: EnvironmentScope) throws -> Data? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT configs FROM revisions WHERE tenant_id = ? AND environment_id = ? AND number = ?"),
            arguments: [scope.tenant.id, scope.id, number])?[0]
    }

    /// The rules and segments kept with a revision (`nil`: none).
    func targeting(ofRevision number: Int, in scope: EnvironmentScope) throws -> Data? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT targeting FROM revisions WHERE tenant_id = ? AND environment_id = ? AND number = ?"),
            arguments: [scope.tenant.id, scope.id, number])?[0]
    }

    /// The environment's revisions numbered above `number`, oldest first: the latest `limit`.
    func revisions(after number: Int, limit: Int, in scope: EnvironmentScope) throws -> [RevisionRecord] {
        try RevisionRecord.owned(by: scope.tenant)
            .filter(RevisionRecord.Columns.environmentID == scope.id && RevisionRecord.Columns.number > number)
            .order(RevisionRecord.Columns.number.desc).limit(limit).fetchAll(db).reversed()
    }

    /// The environment's revisions in brief, newest first.
    func revisionSummaries(in scope: EnvironmentScope) throws -> [RevisionSummary] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT r.number, r.kind, r.actor, r.message, r.created_at, length(r.document) AS size,
                       (SELECT count(*) FROM audit a WHERE a.revision_id = r.id AND a.tenant_id = r.tenant_id) AS changes
                FROM revisions r
                WHERE r.tenant_id = ? AND r.environment_id = ?
                ORDER BY r.number DESC
                """, arguments: [scope.tenant.id, scope.id]
        ).map { row in
            RevisionSummary(
                number: row["number"], kind: RevisionKind(rawValue: row["kind"]) ?? .edit, actor: row["actor"],
                message: row["message"], createdAt: row["created_at"], size: row["size"], changeCount: row["changes"])
        }
    }

    /// Records a new revision with its rendered document and configs (`nil`: none) and one audit
    /// row per change.
    func insertRevision(
        number: Int, kind: RevisionKind, actor: String, message: String, document: [UInt8], configs: [UInt8]?,
        targeting: Data?, changes: [DocumentDiff.Change], in scope: EnvironmentScope, at time: Date
    ) throws {
        let revision = try RevisionRecord(
            tenantID: scope.tenant.id, environmentID: scope.id, number: number, kind: kind.rawValue,
            actor: actor, message: message, createdAt: time, document: Data(document),
            configs: configs.map { Data($0) },
            targeting: targeting
        ).inserted(db)
        // An import of a large file writes a row per feature: bound through SQLite's C API.
        let statement = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO audit (tenant_id, revision_id, feature_name, field, change, before_json, after_json, config_name,
                    segment_name)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """)
        statement.bind(scope.tenant.id, at: 1)
        statement.bind(revision.id!, at: 2)
        for change in changes {
            statement.bind(change.feature, at: 3)
            statement.bind(change.field, at: 4)
            statement.bind(change.kind.rawValue, at: 5)
            statement.bind(change.before?.storedText, at: 6)
            statement.bind(change.after?.storedText, at: 7)
            statement.bind(change.config, at: 8)
            statement.bind(change.segment, at: 9)
            try statement.execute()
        }
    }

    /// How many revisions there are, in every environment.
    func revisionCount() throws -> Int {
        try RevisionRecord.fetchCount(db)
    }

    // MARK: The document's other keys

    /// The document's top-level keys other than `features`, in order.
    func extras(in scope: EnvironmentScope) throws -> JSONObject {
        let records = try DocumentExtraRecord.owned(by: scope.tenant)
            .filter(DocumentExtraRecord.Columns.environmentID == scope.id)
            .order(DocumentExtraRecord.Columns.position)
            .fetchAll(db)
        return JSONObject(
            try records.map { JSONObject.Member(key: $0.key, value: try JSONValue(storedText: $0.valueJSON)) })
    }

    /// Replaces the document's other top-level keys and the place of `features` among them.
    func replaceExtras(of document: FeaturesDocument, in scope: EnvironmentScope) throws {
        try DocumentExtraRecord.owned(by: scope.tenant)
            .filter(DocumentExtraRecord.Columns.environmentID == scope.id)
            .deleteAll(db)
        for (position, member) in document.extras.members.enumerated() {
            var record = DocumentExtraRecord(
                tenantID: scope.tenant.id, environmentID: scope.id, position: position,
                key: member.key, valueJSON: member.value.storedText)
            try record.insert(db)
        }
        try db.execute(
            sql: "UPDATE environments SET features_position = ? WHERE id = ? AND tenant_id = ?",
            arguments: [document.featuresPosition, scope.id, scope.tenant.id])
    }

    // MARK: The store's generation

    /// The store's generation: it grows with every restore.
    func generation() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT generation FROM store_generation") ?? 0
    }

    /// Sets this database's generation above `other`'s and its own: a restored file must read as
    /// newer than anything a server has served from the database it replaces.
    func raiseGeneration(above other: Int64) throws {
        try db.execute(sql: "UPDATE store_generation SET generation = max(generation, ?) + 1", arguments: [other])
    }
}

extension Database {
    /// Environments, their revisions and audit.
    var environments: EnvironmentTable { EnvironmentTable(db: self) }
}

/// A row of `environments`: one features.json of a tenant.
struct EnvironmentRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "environments"

    var id: Int64?
    var tenantID: Int64
    var name: String
    var featuresPosition: Int
    var createdAt: Date
    var isPrivate = false
    var cacheControl: String?

    enum CodingKeys: String, CodingKey {
        case id, name
        case isPrivate = "is_private"
        case cacheControl = "cache_control"
        case tenantID = "tenant_id"
        case featuresPosition = "features_position"
        case createdAt = "created_at"
    }

    enum Columns {
        static let name = Column(CodingKeys.name)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// A row of `revisions`: one numbered state of an environment with its rendered document.
struct RevisionRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "revisions"

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

    enum CodingKeys: String, CodingKey {
        case id, number, kind, actor, message, document, configs, targeting
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case createdAt = "created_at"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let number = Column(CodingKeys.number)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// A row of `audit`: one changed field of one revision, with its values before and after.
struct AuditRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "audit"

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

    enum CodingKeys: String, CodingKey {
        case id, field, change
        case tenantID = "tenant_id"
        case revisionID = "revision_id"
        case featureName = "feature_name"
        case beforeJSON = "before_json"
        case afterJSON = "after_json"
        case configName = "config_name"
        case segmentName = "segment_name"
    }

    enum Columns {
        static let revisionID = Column(CodingKeys.revisionID)
    }
}

/// A row of `document_extras`: a top-level key of the document other than `features`.
struct DocumentExtraRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "document_extras"

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var position: Int
    var key: String
    var valueJSON: String

    enum CodingKeys: String, CodingKey {
        case id, position, key
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case valueJSON = "value_json"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let position = Column(CodingKeys.position)
    }
}
