import FlagpoleCore
import Foundation
import GRDB

/// The one home of every statement on `features` and `variations`: each feature of an
/// environment's document as written, its salt and place, and its test's variations.
///
/// Imports write tens of thousands of rows: the writes are prepared once per connection and
/// reused, never rebuilt per row.
struct FeatureTable {
    let db: Database

    // MARK: Reads

    /// Every feature of the environment, current ones in file order then archived ones.
    func storedFeatures(in scope: EnvironmentScope) throws -> [StoredFeature] {
        let records = try FeatureRecord.owned(by: scope.tenant)
            .filter(FeatureRecord.Columns.environmentID == scope.id)
            .order(FeatureRecord.Columns.archivedAt != nil, FeatureRecord.Columns.position, FeatureRecord.Columns.name)
            .fetchAll(db)
        var variationsByFeature: [Int64: [VariationRecord]] = [:]
        let variations = try VariationRecord.owned(by: scope.tenant)
            .filter(
                sql: "feature_id IN (SELECT id FROM features WHERE tenant_id = ? AND environment_id = ?)",
                arguments: [scope.tenant.id, scope.id]
            )
            .order(VariationRecord.Columns.featureID, VariationRecord.Columns.position)
            .fetchCursor(db)
        while let variation = try variations.next() {
            variationsByFeature[variation.featureID, default: []].append(variation)
        }
        return try records.map { record in
            StoredFeature(
                id: record.id!, salt: record.salt, position: record.position,
                feature: try record.feature(variations: variationsByFeature[record.id!] ?? []))
        }
    }

    /// The feature named `name` in the environment's current document, or with
    /// `includingArchived` one that has left it (its users' history outlives its place).
    ///
    /// - throws: `DocumentError.featureNotFound`.
    func stored(named name: String, in scope: EnvironmentScope, includingArchived: Bool = false) throws -> StoredFeature
    {
        // Every per-user write (assign, a pinned fetch, an override) starts here: cached
        // statements, rather than SQL generated anew by the query interface each time.
        let sql = "SELECT * FROM features WHERE tenant_id = ? AND environment_id = ? AND name_key = ?"
        let record = try FeatureRecord.fetchOne(
            db.cachedStatement(sql: includingArchived ? sql : sql + " AND archived_at IS NULL"),
            arguments: [scope.tenant.id, scope.id, Feature.nameKey(name)])
        guard let record else { throw DocumentError.featureNotFound(scope.path, name: name) }
        let variations = try VariationRecord.fetchAll(
            db.cachedStatement(
                sql: "SELECT * FROM variations WHERE tenant_id = ? AND feature_id = ? ORDER BY position"),
            arguments: [scope.tenant.id, record.id!])
        return StoredFeature(
            id: record.id!, salt: record.salt, position: record.position,
            feature: try record.feature(variations: variations))
    }

    /// The id of the feature named `name` in the environment, current or archived (history
    /// outlives a feature's place in the document).
    ///
    /// - throws: `DocumentError.featureNotFound`.
    func id(named name: String, in scope: EnvironmentScope) throws -> Int64 {
        let id = try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT id FROM features WHERE tenant_id = ? AND environment_id = ? AND name_key = ?"),
            arguments: [scope.tenant.id, scope.id, Feature.nameKey(name)])
        guard let id else { throw DocumentError.featureNotFound(scope.path, name: name) }
        return id
    }

    /// How many features the environment's current document has.
    func activeCount(in scope: EnvironmentScope) throws -> Int {
        try FeatureRecord.owned(by: scope.tenant)
            .filter(FeatureRecord.Columns.environmentID == scope.id)
            .filter(FeatureRecord.Columns.archivedAt == nil)
            .fetchCount(db)
    }

    // MARK: Writes of a new revision

    /// Inserts a new feature with its salt (see `makeSalts(count:)`).
    func insert(
        _ feature: Feature, at position: Int, salt: String, in scope: EnvironmentScope, at time: DatabaseValue
    ) throws {
        // An import of a large file inserts every feature: bound through SQLite's C API, without
        // GRDB's boxed arguments.
        let statement = try RawStatement(
            cachedIn: db,
            sql: """
                INSERT INTO features (tenant_id, environment_id, name, name_key, position, salt, description, section,
                    development, enabled, unlocked, type_json, variation_count, bias_count, label_count,
                    unknown_json, created_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17)
                """)
        statement.bind(scope.tenant.id, at: 1)
        statement.bind(scope.id, at: 2)
        statement.bind(feature.name, at: 3)
        statement.bind(Feature.nameKey(feature.name), at: 4)
        statement.bind(Int64(position), at: 5)
        statement.bind(salt, at: 6)
        Self.bindFields(of: feature, to: statement, from: 7)
        statement.bind(time, at: 17)
        try statement.execute()
        try insertVariations(of: feature, featureID: db.lastInsertedRowID, in: scope)
    }

    /// Rewrites every field of a stored feature (and brings it back from the archive). The name
    /// is the same to the app but may be spelled in other bytes (NFC or NFD): the new spelling is
    /// kept, as the revision's document has it.
    func update(
        _ stored: StoredFeature, to feature: Feature, at position: Int, in scope: EnvironmentScope,
        at time: DatabaseValue
    ) throws {
        let statement = try RawStatement(
            cachedIn: db,
            sql: """
                UPDATE features SET name = ?1, position = ?2, description = ?3, section = ?4, development = ?5,
                    enabled = ?6, unlocked = ?7, type_json = ?8, variation_count = ?9, bias_count = ?10,
                    label_count = ?11, unknown_json = ?12, updated_at = ?13, archived_at = NULL
                WHERE id = ?14 AND tenant_id = ?15
                """)
        statement.bind(feature.name, at: 1)
        statement.bind(Int64(position), at: 2)
        Self.bindFields(of: feature, to: statement, from: 3)
        statement.bind(time, at: 13)
        statement.bind(stored.id, at: 14)
        statement.bind(scope.tenant.id, at: 15)
        try statement.execute()
        // Compared as written, byte for byte: a variation respelled (NFC, NFD) is rewritten too.
        let before = stored.feature.jsonObject
        let after = feature.jsonObject
        if ["test-variations", "test-biases", "labels"].contains(where: {
            !(before[$0] ?? .null).isIdentical(to: after[$0] ?? .null)
        }) {
            try db.cachedStatement(sql: "DELETE FROM variations WHERE feature_id = ? AND tenant_id = ?")
                .execute(arguments: [stored.id, scope.tenant.id])
            try insertVariations(of: feature, featureID: stored.id, in: scope)
        }
    }

    /// Moves an unchanged feature to its new place in the file.
    func move(_ stored: StoredFeature, to position: Int, in scope: EnvironmentScope) throws {
        try db.cachedStatement(sql: "UPDATE features SET position = ? WHERE id = ? AND tenant_id = ?")
            .execute(arguments: [position, stored.id, scope.tenant.id])
    }

    /// Archives a feature absent from the new document; its row, and so its salt, stays.
    func archive(_ stored: StoredFeature, in scope: EnvironmentScope, at time: DatabaseValue) throws {
        try db.cachedStatement(
            sql: "UPDATE features SET position = NULL, archived_at = ?, updated_at = ? WHERE id = ? AND tenant_id = ?"
        )
        .execute(arguments: [time, time, stored.id, scope.tenant.id])
    }

    private func insertVariations(of feature: Feature, featureID: Int64, in scope: EnvironmentScope) throws {
        let names = feature.testVariations ?? []
        let biases = feature.testBiases ?? []
        let labels = feature.labels ?? []
        let count = max(names.count, biases.count, labels.count)
        guard count > 0 else { return }
        let statement = try RawStatement(
            cachedIn: db,
            sql:
                "INSERT INTO variations (tenant_id, feature_id, position, name, bias, label) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        )
        statement.bind(scope.tenant.id, at: 1)
        statement.bind(featureID, at: 2)
        for position in 0..<count {
            statement.bind(Int64(position), at: 3)
            statement.bind(names.indices.contains(position) ? names[position] : nil, at: 4)
            statement.bind(biases.indices.contains(position) ? biases[position] : nil, at: 5)
            statement.bind(labels.indices.contains(position) ? labels[position] : nil, at: 6)
            try statement.execute()
        }
    }

    /// Binds the columns from `description` to `unknown_json`, in the order of the statements
    /// above, from parameter `first` on.
    private static func bindFields(of feature: Feature, to statement: RawStatement, from first: Int32) {
        statement.bind(feature.description, at: first)
        statement.bind(feature.section, at: first + 1)
        statement.bind(feature.development, at: first + 2)
        statement.bind(feature.enabled, at: first + 3)
        statement.bind(feature.unlocked, at: first + 4)
        statement.bind(feature.type.map { JSONValue.object($0).storedText }, at: first + 5)
        statement.bind(feature.testVariations?.count, at: first + 6)
        statement.bind(feature.testBiases?.count, at: first + 7)
        statement.bind(feature.labels?.count, at: first + 8)
        statement.bind(
            feature.unknownKeys.isEmpty ? nil : JSONValue.object(feature.unknownKeys).storedText, at: first + 9)
    }

    /// A salt for each of `count` new features: 128 random bits each, fixed for the feature's
    /// life, which seed the bucketing of its users. Drawn at once: an import of a large file
    /// makes thousands, and each draw is a system call.
    static func makeSalts(count: Int) -> [String] {
        let hex = Array(randomHex(bytes: 16 * count).utf8)
        return (0..<count).map { String(decoding: hex[32 * $0..<32 * ($0 + 1)], as: UTF8.self) }
    }
}

extension Database {
    /// Features and their variations.
    var features: FeatureTable { FeatureTable(db: self) }
}

/// A row of `features`: the keys of one feature as written, its salt and its place in the file.
struct FeatureRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "features"

    var id: Int64?
    var tenantID: Int64
    var environmentID: Int64
    var name: String
    var position: Int?
    var salt: String
    var description: String?
    var section: String?
    var development: Bool?
    var enabled: Bool?
    var unlocked: Bool?
    var typeJSON: String?
    var variationCount: Int?
    var biasCount: Int?
    var labelCount: Int?
    var unknownJSON: String?
    var createdAt: Date
    var updatedAt: Date
    var archivedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, position, salt, description, section, development, enabled, unlocked
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case typeJSON = "type_json"
        case variationCount = "variation_count"
        case biasCount = "bias_count"
        case labelCount = "label_count"
        case unknownJSON = "unknown_json"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case archivedAt = "archived_at"
    }

    enum Columns {
        static let environmentID = Column(CodingKeys.environmentID)
        static let name = Column(CodingKeys.name)
        static let position = Column(CodingKeys.position)
        static let archivedAt = Column(CodingKeys.archivedAt)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension FeatureRecord {
    /// Reads a row without going through `Decodable`: every import and listing loads all the
    /// features of an environment, and the generic decoder dominated that load.
    init(row: Row) throws {
        id = row[CodingKeys.id.rawValue]
        tenantID = row[CodingKeys.tenantID.rawValue]
        environmentID = row[CodingKeys.environmentID.rawValue]
        name = row[CodingKeys.name.rawValue]
        position = row[CodingKeys.position.rawValue]
        salt = row[CodingKeys.salt.rawValue]
        description = row[CodingKeys.description.rawValue]
        section = row[CodingKeys.section.rawValue]
        development = row[CodingKeys.development.rawValue]
        enabled = row[CodingKeys.enabled.rawValue]
        unlocked = row[CodingKeys.unlocked.rawValue]
        typeJSON = row[CodingKeys.typeJSON.rawValue]
        variationCount = row[CodingKeys.variationCount.rawValue]
        biasCount = row[CodingKeys.biasCount.rawValue]
        labelCount = row[CodingKeys.labelCount.rawValue]
        unknownJSON = row[CodingKeys.unknownJSON.rawValue]
        createdAt = row[CodingKeys.createdAt.rawValue]
        updatedAt = row[CodingKeys.updatedAt.rawValue]
        archivedAt = row[CodingKeys.archivedAt.rawValue]
    }
}

/// A row of `variations`: element `position` of a feature's test-variations, test-biases
/// and labels (each `nil` past the end of its array).
struct VariationRecord: Codable, FetchableRecord, MutablePersistableRecord, TenantOwnedRecord {
    static let databaseTableName = "variations"

    var id: Int64?
    var tenantID: Int64
    var featureID: Int64
    var position: Int
    var name: String?
    var bias: Double?
    var label: String?

    enum CodingKeys: String, CodingKey {
        case id, position, name, bias, label
        case tenantID = "tenant_id"
        case featureID = "feature_id"
    }

    enum Columns {
        static let featureID = Column(CodingKeys.featureID)
        static let position = Column(CodingKeys.position)
    }
}

extension VariationRecord {
    /// Reads a row without going through `Decodable`, for the same reason as `FeatureRecord`.
    init(row: Row) throws {
        id = row[CodingKeys.id.rawValue]
        tenantID = row[CodingKeys.tenantID.rawValue]
        featureID = row[CodingKeys.featureID.rawValue]
        position = row[CodingKeys.position.rawValue]
        name = row[CodingKeys.name.rawValue]
        bias = row[CodingKeys.bias.rawValue]
        label = row[CodingKeys.label.rawValue]
    }
}
