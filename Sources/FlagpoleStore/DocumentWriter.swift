import FlagpoleCore
import Foundation
import GRDB

/// Writes a document's features, extras, revision and audit rows inside one transaction.
///
/// Imports write tens of thousands of rows: every statement here is prepared once per
/// connection and reused, never rebuilt per row.
struct DocumentWriter {
    let db: Database
    let scope: EnvironmentScope
    let now: Date
    /// `now` as the database stores it, converted once rather than for every row.
    private let timestamp: DatabaseValue

    init(db: Database, scope: EnvironmentScope, now: Date) {
        self.db = db
        self.scope = scope
        self.now = now
        self.timestamp = now.databaseValue
    }

    /// Inserts a new feature with a new random salt.
    func insert(_ feature: Feature, at position: Int) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO features (tenant_id, environment_id, name, name_key, position, salt, description, section,
                    development, enabled, unlocked, type_json, variation_count, bias_count, label_count,
                    unknown_json, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(
            arguments: [
                scope.tenant.id, scope.id, feature.name, Feature.nameKey(feature.name), position, Self.makeSalt(),
            ]
                + Self.fieldArguments(of: feature) + [timestamp, timestamp])
        try insertVariations(of: feature, featureID: db.lastInsertedRowID)
    }

    /// Rewrites every field of a stored feature (and brings it back from the archive). The name
    /// is the same to the app but may be spelled in other bytes (NFC or NFD): the new spelling is
    /// kept, as the revision's document has it.
    func update(_ stored: StoredFeature, to feature: Feature, at position: Int) throws {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE features SET name = ?, position = ?, description = ?, section = ?, development = ?, enabled = ?,
                    unlocked = ?, type_json = ?, variation_count = ?, bias_count = ?, label_count = ?,
                    unknown_json = ?, updated_at = ?, archived_at = NULL
                WHERE id = ? AND tenant_id = ?
                """)
        try statement.execute(
            arguments: [feature.name, position] + Self.fieldArguments(of: feature) + [
                timestamp, stored.id, scope.tenant.id,
            ])
        // Compared as written, byte for byte: a variation respelled (NFC, NFD) is rewritten too.
        let before = stored.feature.jsonObject
        let after = feature.jsonObject
        if ["test-variations", "test-biases", "labels"].contains(where: {
            !(before[$0] ?? .null).isIdentical(to: after[$0] ?? .null)
        }) {
            try db.cachedStatement(sql: "DELETE FROM variations WHERE feature_id = ? AND tenant_id = ?")
                .execute(arguments: [stored.id, scope.tenant.id])
            try insertVariations(of: feature, featureID: stored.id)
        }
    }

    /// Moves an unchanged feature to its new place in the file.
    func move(_ stored: StoredFeature, to position: Int) throws {
        try db.cachedStatement(sql: "UPDATE features SET position = ? WHERE id = ? AND tenant_id = ?")
            .execute(arguments: [position, stored.id, scope.tenant.id])
    }

    /// Archives a feature absent from the new document; its row, and so its salt, stays.
    func archive(_ stored: StoredFeature) throws {
        try db.cachedStatement(
            sql: "UPDATE features SET position = NULL, archived_at = ?, updated_at = ? WHERE id = ? AND tenant_id = ?"
        )
        .execute(arguments: [timestamp, timestamp, stored.id, scope.tenant.id])
    }

    /// Replaces the document's other top-level keys and the place of `features` among them.
    func replaceExtras(of document: FeaturesDocument) throws {
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

    /// Records a new revision with its rendered document and one audit row per change.
    func insertRevision(
        number: Int, kind: RevisionKind, actor: String, message: String, document: [UInt8],
        changes: [DocumentDiff.Change]
    ) throws {
        let revision = try RevisionRecord(
            tenantID: scope.tenant.id, environmentID: scope.id, number: number, kind: kind.rawValue,
            actor: actor, message: message, createdAt: now, document: Data(document)
        ).inserted(db)
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO audit (tenant_id, revision_id, feature_name, field, change, before_json, after_json)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        for change in changes {
            try statement.execute(arguments: [
                scope.tenant.id, revision.id, change.feature, change.field, change.kind.rawValue,
                change.before?.storedText, change.after?.storedText,
            ])
        }
    }

    private func insertVariations(of feature: Feature, featureID: Int64) throws {
        let names = feature.testVariations ?? []
        let biases = feature.testBiases ?? []
        let labels = feature.labels ?? []
        let count = max(names.count, biases.count, labels.count)
        guard count > 0 else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO variations (tenant_id, feature_id, position, name, bias, label) VALUES (?, ?, ?, ?, ?, ?)
                """)
        for position in 0..<count {
            try statement.execute(arguments: [
                scope.tenant.id, featureID, position,
                names.indices.contains(position) ? names[position] : nil,
                biases.indices.contains(position) ? biases[position] : nil,
                labels.indices.contains(position) ? labels[position] : nil,
            ])
        }
    }

    /// The columns from `description` to `unknown_json`, in the order of the statements above.
    private static func fieldArguments(of feature: Feature) -> StatementArguments {
        [
            feature.description, feature.section, feature.development, feature.enabled, feature.unlocked,
            feature.type.map { JSONValue.object($0).storedText },
            feature.testVariations?.count, feature.testBiases?.count, feature.labels?.count,
            feature.unknownKeys.isEmpty ? nil : JSONValue.object(feature.unknownKeys).storedText,
        ]
    }

    /// 128 random bits, fixed for the feature's life: it seeds the bucketing of its users.
    static func makeSalt() -> String {
        randomHex(bytes: 16)
    }
}
