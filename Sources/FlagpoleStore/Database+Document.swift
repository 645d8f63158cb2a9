import FlagpoleCore
import Foundation
import GRDB

/// A feature as the store holds it: the model beside its row id, salt and place.
struct StoredFeature: Sendable {
    let id: Int64
    let salt: String
    /// The place in the file; `nil` when archived.
    let position: Int?
    let feature: Feature

    var isArchived: Bool { position == nil }
}

extension FeatureRecord {
    /// The features of the environment's current document, in file order.
    static func active(in scope: EnvironmentScope) -> QueryInterfaceRequest<FeatureRecord> {
        owned(by: scope.tenant)
            .filter(Columns.environmentID == scope.id)
            .filter(Columns.archivedAt == nil)
            .order(Columns.position)
    }
}

extension Database {
    /// The number of the environment's latest revision, `nil` before the first import.
    func latestRevisionNumber(in scope: EnvironmentScope) throws -> Int? {
        try Int.fetchOne(
            cachedStatement(sql: "SELECT max(number) FROM revisions WHERE tenant_id = ? AND environment_id = ?"),
            arguments: [scope.tenant.id, scope.id])
    }

    /// Revision `number` of the environment, or the latest when `number` is `nil`.
    func revisionRecord(_ number: Int?, in scope: EnvironmentScope) throws -> RevisionRecord? {
        let revisions = RevisionRecord.owned(by: scope.tenant).filter(RevisionRecord.Columns.environmentID == scope.id)
        if let number {
            return try revisions.filter(RevisionRecord.Columns.number == number).fetchOne(self)
        }
        return try revisions.order(RevisionRecord.Columns.number.desc).limit(1).fetchOne(self)
    }

    /// Every feature of the environment, current ones in file order then archived ones.
    func storedFeatures(in scope: EnvironmentScope) throws -> [StoredFeature] {
        let records = try FeatureRecord.owned(by: scope.tenant)
            .filter(FeatureRecord.Columns.environmentID == scope.id)
            .order(FeatureRecord.Columns.archivedAt != nil, FeatureRecord.Columns.position, FeatureRecord.Columns.name)
            .fetchAll(self)
        var variationsByFeature: [Int64: [VariationRecord]] = [:]
        let variations = try VariationRecord.owned(by: scope.tenant)
            .filter(
                sql: "feature_id IN (SELECT id FROM features WHERE tenant_id = ? AND environment_id = ?)",
                arguments: [scope.tenant.id, scope.id]
            )
            .order(VariationRecord.Columns.featureID, VariationRecord.Columns.position)
            .fetchCursor(self)
        while let variation = try variations.next() {
            variationsByFeature[variation.featureID, default: []].append(variation)
        }
        return try records.map { record in
            StoredFeature(
                id: record.id!, salt: record.salt, position: record.position,
                feature: try record.feature(variations: variationsByFeature[record.id!] ?? []))
        }
    }

    /// The environment's current document, read from its tables.
    func currentDocument(in scope: EnvironmentScope) throws -> FeaturesDocument {
        try currentDocument(in: scope, features: storedFeatures(in: scope))
    }

    func currentDocument(in scope: EnvironmentScope, features: [StoredFeature]) throws -> FeaturesDocument {
        let extras = try DocumentExtraRecord.owned(by: scope.tenant)
            .filter(DocumentExtraRecord.Columns.environmentID == scope.id)
            .order(DocumentExtraRecord.Columns.position)
            .fetchAll(self)
        return FeaturesDocument(
            features: features.filter { !$0.isArchived }.map(\.feature),
            extras: JSONObject(
                try extras.map { JSONObject.Member(key: $0.key, value: try JSONValue(storedText: $0.valueJSON)) }),
            featuresPosition: scope.featuresPosition)
    }
}

extension FeatureRecord {
    /// The model of this row, given its variation rows in order.
    func feature(variations: [VariationRecord]) throws -> Feature {
        func elements<T>(_ count: Int?, _ value: (VariationRecord) -> T?) -> [T]? {
            count.map { count in variations.prefix(count).compactMap(value) }
        }
        return Feature(
            name: name,
            description: description,
            section: section,
            development: development,
            enabled: enabled,
            unlocked: unlocked,
            type: try typeJSON.map { try JSONObject(storedText: $0) },
            testVariations: elements(variationCount) { $0.name },
            testBiases: elements(biasCount) { $0.bias },
            labels: labelCount.map { count in variations.prefix(count).map(\.label) },
            unknownKeys: try unknownJSON.map { try JSONObject(storedText: $0) } ?? JSONObject())
    }
}

extension JSONValue {
    /// Reads JSON the store wrote itself.
    ///
    /// - throws: `StoreError.storage` when the text is not JSON: the file was edited by hand.
    init(storedText text: String) throws {
        do {
            self = try JSONParser.parse(Array(text.utf8)).value
        } catch {
            throw StoreError.storage(reason: "stored JSON is damaged (\(error.message)): \(text.prefix(60))")
        }
    }

    /// The compact text the store keeps.
    var storedText: String {
        JSONWriter(style: .compact).string(of: self)
    }
}

extension JSONObject {
    init(storedText text: String) throws {
        guard case .object(let object) = try JSONValue(storedText: text) else {
            throw StoreError.storage(reason: "a stored JSON object is not an object: \(text.prefix(60))")
        }
        self = object
    }
}
