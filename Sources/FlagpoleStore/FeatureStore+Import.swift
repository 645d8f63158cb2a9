import FlagpoleCore
import Foundation
import GRDB

extension FeatureStore {
    /// Replaces an environment's document with a file, as one transaction.
    ///
    /// The file is read as the client reads it; any error refuses it and nothing is written.
    /// Features are matched by name: an existing feature keeps its salt, a feature absent from
    /// the file is archived (and gets its salt back if it returns), and a file that renders to
    /// the current revision's bytes creates no revision. Otherwise the import creates exactly
    /// one revision with its audit rows.
    ///
    /// - throws: `StoreError.importRefused` (errors, or warnings with `isStrict`),
    ///   `StoreError.tenantNotFound`, `StoreError.environmentNotFound`.
    public func importDocument(_ bytes: [UInt8], into path: EnvironmentPath, options: ImportOptions) async throws -> ImportOutcome {
        // Parsing and rendering need no database: keep them out of the write lock.
        let decoded = DocumentDecoder.decode(bytes)
        guard let document = decoded.document else {
            throw StoreError.importRefused(path, diagnostics: decoded.diagnostics, isStrict: false)
        }
        let rendered = document.rendered()
        if options.isDryRun {
            return try await read { db in
                try ImportPlan(db, path: path, decoded: decoded, document: document, rendered: rendered, options: options).outcome
            }
        }
        return try await write { db in
            try ImportPlan(db, path: path, decoded: decoded, document: document, rendered: rendered, options: options).apply(db)
        }
    }
}

/// The comparison of a valid file with an environment's current state, and how to apply it.
private struct ImportPlan {
    let scope: EnvironmentScope
    let document: FeaturesDocument
    let rendered: [UInt8]
    let options: ImportOptions
    let stored: [String: StoredFeature]
    let current: FeaturesDocument
    let latest: RevisionRecord?
    let diff: DocumentDiff
    let warnings: [Diagnostic]
    /// Whether the file renders to the current revision's very bytes.
    let isUnchanged: Bool

    init(
        _ db: Database, path: EnvironmentPath, decoded: DecodedDocument, document: FeaturesDocument, rendered: [UInt8],
        options: ImportOptions
    ) throws {
        scope = try db.scope(of: path)
        self.document = document
        self.rendered = rendered
        self.options = options
        let storedFeatures = try db.storedFeatures(in: scope)
        stored = Dictionary(uniqueKeysWithValues: storedFeatures.map { ($0.feature.name, $0) })
        current = try db.currentDocument(in: scope, features: storedFeatures)
        latest = try db.revisionRecord(nil, in: scope)
        isUnchanged = latest?.document == Data(rendered)
        diff = DocumentDiff(from: current, to: document)
        let archived = storedFeatures.filter(\.isArchived).map(\.feature)
        warnings = decoded.diagnostics + ImportReview.review(decoded, replacing: current, archived: archived)
        if options.isStrict && !warnings.isEmpty {
            throw StoreError.importRefused(path, diagnostics: warnings, isStrict: true)
        }
    }

    var outcome: ImportOutcome {
        let next = (latest?.number ?? 0) + 1
        if let latest, isUnchanged {
            return ImportOutcome(
                path: scope.path, status: .unchanged(revision: latest.number), added: [], returned: [], changed: [],
                archived: [], unchangedCount: document.features.count, warnings: warnings)
        }
        let added = diff.addedFeatures
        let changed = diff.changedFeatures
        return ImportOutcome(
            path: scope.path, status: options.isDryRun ? .planned(revision: next) : .applied(revision: next),
            added: added, returned: added.filter { stored[$0] != nil }, changed: changed, archived: diff.removedFeatures,
            unchangedCount: document.features.count - added.count - changed.count, warnings: warnings)
    }

    func apply(_ db: Database) throws -> ImportOutcome {
        guard !isUnchanged else { return outcome }
        let writer = DocumentWriter(db: db, scope: scope, now: Date())
        try writer.insertRevision(
            number: (latest?.number ?? 0) + 1, kind: .import, actor: options.actor, message: options.message,
            document: rendered, changes: diff.changes)
        for (position, feature) in document.features.enumerated() {
            guard let existing = stored[feature.name] else {
                try writer.insert(feature, at: position)
                continue
            }
            if existing.isArchived || existing.feature != feature {
                try writer.update(existing, to: feature, at: position)
            } else if existing.position != position {
                try writer.move(existing, to: position)
            }
        }
        let names = Set(document.features.map(\.name))
        for existing in stored.values where !existing.isArchived && !names.contains(existing.feature.name) {
            try writer.archive(existing)
        }
        if current.extras != document.extras || current.featuresPosition != document.featuresPosition {
            try writer.replaceExtras(of: document)
        }
        return outcome
    }
}
