import FlagpoleCore
import Foundation

/// The one home of every statement on `features` and `variations`: each feature of an
/// environment's document as written, its salt and place, and its test's variations.
///
/// Imports write tens of thousands of rows: the writes are prepared once per connection and
/// reused, never rebuilt per row.
struct FeatureTable {
    let db: Transaction

    // MARK: Reads

    /// Every feature of the environment, current ones in file order then archived ones.
    func storedFeatures(in scope: EnvironmentScope) throws -> [StoredFeature] {
        // Archived rows all have a NULL position: they sort by name alone, whatever the
        // backend's place for NULLs.
        let records = try db.rows(
            """
            SELECT \(FeatureRecord.columns) FROM features WHERE tenant_id = ? AND environment_id = ?
            ORDER BY archived_at IS NOT NULL, position, name
            """, [scope.tenant.id, scope.id]
        ).map(FeatureRecord.init(row:))
        var variationsByFeature: [Int64: [VariationRecord]] = [:]
        let variations = try db.rows(
            """
            SELECT \(VariationRecord.columns) FROM variations
            WHERE tenant_id = ? AND feature_id IN (SELECT id FROM features WHERE tenant_id = ? AND environment_id = ?)
            ORDER BY feature_id, position
            """, [scope.tenant.id, scope.tenant.id, scope.id])
        for row in variations {
            let variation = VariationRecord(row: row)
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
        // statements, with fixed texts.
        let sql =
            "SELECT \(FeatureRecord.columns) FROM features WHERE tenant_id = ? AND environment_id = ? AND name_key = ?"
        let row = try db.row(
            includingArchived ? sql : sql + " AND archived_at IS NULL",
            [scope.tenant.id, scope.id, Feature.nameKey(name)], cached: true)
        guard let row else { throw DocumentError.featureNotFound(scope.path, name: name) }
        let record = FeatureRecord(row: row)
        let variations = try db.rows(
            "SELECT \(VariationRecord.columns) FROM variations WHERE tenant_id = ? AND feature_id = ? ORDER BY position",
            [scope.tenant.id, record.id!], cached: true
        ).map(VariationRecord.init(row:))
        return StoredFeature(
            id: record.id!, salt: record.salt, position: record.position,
            feature: try record.feature(variations: variations))
    }

    /// The id of the feature named `name` in the environment, current or archived (history
    /// outlives a feature's place in the document).
    ///
    /// - throws: `DocumentError.featureNotFound`.
    func id(named name: String, in scope: EnvironmentScope) throws -> Int64 {
        let id = try db.value(
            Int64.self, "SELECT id FROM features WHERE tenant_id = ? AND environment_id = ? AND name_key = ?",
            [scope.tenant.id, scope.id, Feature.nameKey(name)], cached: true)
        guard let id else { throw DocumentError.featureNotFound(scope.path, name: name) }
        return id
    }

    /// How many features the environment's current document has.
    func activeCount(in scope: EnvironmentScope) throws -> Int {
        try db.value(
            Int.self,
            "SELECT count(*) FROM features WHERE tenant_id = ? AND environment_id = ? AND archived_at IS NULL",
            [scope.tenant.id, scope.id]) ?? 0
    }

    // MARK: Writes of a new revision

    /// Inserts a new feature with its salt (see `makeSalts(count:)`). `time` is a date as the
    /// store writes it (`Date.sqlValue`), converted once for every row of a revision.
    func insert(
        _ feature: Feature, at position: Int, salt: String, in scope: EnvironmentScope, at time: SQLValue
    ) throws {
        // An import of a large file inserts every feature: bound by position, without boxed arguments.
        let statement = try db.statement(
            """
            INSERT INTO features (tenant_id, environment_id, name, name_key, position, salt, description, section,
                development, enabled, unlocked, type_json, variation_count, bias_count, label_count,
                unknown_json, created_at, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17)
            """, cached: true)
        statement.bind(scope.tenant.id, at: 1)
        statement.bind(scope.id, at: 2)
        statement.bind(feature.name, at: 3)
        statement.bind(Feature.nameKey(feature.name), at: 4)
        statement.bind(Int64(position), at: 5)
        statement.bind(salt, at: 6)
        Self.bindFields(of: feature, to: statement, from: 7)
        statement.bind(time, at: 17)
        let featureID = try statement.executeReturningID()
        try insertVariations(of: feature, featureID: featureID, in: scope)
    }

    /// Rewrites every field of a stored feature (and brings it back from the archive). The name
    /// is the same to the app but may be spelled in other bytes (NFC or NFD): the new spelling is
    /// kept, as the revision's document has it.
    func update(
        _ stored: StoredFeature, to feature: Feature, at position: Int, in scope: EnvironmentScope,
        at time: SQLValue
    ) throws {
        let statement = try db.statement(
            """
            UPDATE features SET name = ?1, position = ?2, description = ?3, section = ?4, development = ?5,
                enabled = ?6, unlocked = ?7, type_json = ?8, variation_count = ?9, bias_count = ?10,
                label_count = ?11, unknown_json = ?12, updated_at = ?13, archived_at = NULL
            WHERE id = ?14 AND tenant_id = ?15
            """, cached: true)
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
            try db.execute(
                "DELETE FROM variations WHERE feature_id = ? AND tenant_id = ?", [stored.id, scope.tenant.id],
                cached: true)
            try insertVariations(of: feature, featureID: stored.id, in: scope)
        }
    }

    /// Moves an unchanged feature to its new place in the file.
    func move(_ stored: StoredFeature, to position: Int, in scope: EnvironmentScope) throws {
        try db.execute(
            "UPDATE features SET position = ? WHERE id = ? AND tenant_id = ?", [position, stored.id, scope.tenant.id],
            cached: true)
    }

    /// Archives a feature absent from the new document; its row, and so its salt, stays.
    func archive(_ stored: StoredFeature, in scope: EnvironmentScope, at time: SQLValue) throws {
        try db.execute(
            "UPDATE features SET position = NULL, archived_at = ?, updated_at = ? WHERE id = ? AND tenant_id = ?",
            SQLArguments(values: [time, time, stored.id.sqlValue, scope.tenant.id.sqlValue]), cached: true)
    }

    private func insertVariations(of feature: Feature, featureID: Int64, in scope: EnvironmentScope) throws {
        let names = feature.testVariations ?? []
        let biases = feature.testBiases ?? []
        let labels = feature.labels ?? []
        let count = max(names.count, biases.count, labels.count)
        guard count > 0 else { return }
        // One statement per feature (per 1 000 variations), rather than one per row; bound by
        // position, without boxing.
        for chunk in stride(from: 0, to: count, by: 1_000) {
            let positions = chunk..<min(chunk + 1_000, count)
            let insert = try db.statement(
                "INSERT INTO variations (tenant_id, feature_id, position, name, bias, label) VALUES "
                    + repeatElement("(?, ?, ?, ?, ?, ?)", count: positions.count).joined(separator: ", "),
                cached: positions.count <= 16)
            for (row, position) in positions.enumerated() {
                let first = Int32(row * 6)
                insert.bind(scope.tenant.id, at: first + 1)
                insert.bind(featureID, at: first + 2)
                insert.bind(Int64(position), at: first + 3)
                insert.bind(names.indices.contains(position) ? names[position] : nil, at: first + 4)
                insert.bind(biases.indices.contains(position) ? biases[position] : nil, at: first + 5)
                insert.bind(labels.indices.contains(position) ? labels[position] : nil, at: first + 6)
            }
            try insert.execute()
        }
    }

    /// Binds the columns from `description` to `unknown_json`, in the order of the statements
    /// above, from parameter `first` on.
    private static func bindFields(of feature: Feature, to statement: any SQLStatement, from first: Int32) {
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

extension Transaction {
    /// Features and their variations.
    var features: FeatureTable { FeatureTable(db: self) }
}

/// A row of `features`: the keys of one feature as written, its salt and its place in the file.
struct FeatureRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case name
        case position
        case salt
        case description
        case section
        case development
        case enabled
        case unlocked
        case typeJSON = "type_json"
        case variationCount = "variation_count"
        case biasCount = "bias_count"
        case labelCount = "label_count"
        case unknownJSON = "unknown_json"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case archivedAt = "archived_at"
    }

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
}

extension FeatureRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        environmentID = row[.environmentID]
        name = row[.name]
        position = row[.position]
        salt = row[.salt]
        description = row[.description]
        section = row[.section]
        development = row[.development]
        enabled = row[.enabled]
        unlocked = row[.unlocked]
        typeJSON = row[.typeJSON]
        variationCount = row[.variationCount]
        biasCount = row[.biasCount]
        labelCount = row[.labelCount]
        unknownJSON = row[.unknownJSON]
        createdAt = row[.createdAt]
        updatedAt = row[.updatedAt]
        archivedAt = row[.archivedAt]
    }
}

/// A row of `variations`: element `position` of a feature's test-variations, test-biases
/// and labels (each `nil` past the end of its array).
struct VariationRecord: SQLRecord {
    /// The columns every SELECT of the record reads (`columns`), in order.
    enum Column: String, CaseIterable {
        case id
        case tenantID = "tenant_id"
        case featureID = "feature_id"
        case position
        case name
        case bias
        case label
    }

    var id: Int64?
    var tenantID: Int64
    var featureID: Int64
    var position: Int
    var name: String?
    var bias: Double?
    var label: String?
}

extension VariationRecord {
    init(row: SQLRecordRow<Column>) {
        id = row[.id]
        tenantID = row[.tenantID]
        featureID = row[.featureID]
        position = row[.position]
        name = row[.name]
        bias = row[.bias]
        label = row[.label]
    }
}
