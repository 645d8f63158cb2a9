import FlagpoleCore
import Foundation

extension Catalog {
    /// Sets a test's biases as one new revision, re-evaluating its recorded users; with
    /// `isDryRun`, only plans.
    ///
    /// - throws: `DocumentError.biasesIgnored` when the app would not apply the split they state
    ///   (unless `isForced`), `DocumentError.featureNotFound`, `DocumentError.importRefused` (a value that is
    ///   not a JSON number).
    public func setBiases(
        _ biases: [Double], of name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws -> EditOutcome {
        try await edit(name, in: path, kind: .bias, options: options, message: "set biases of \(name)") { feature in
            guard feature.isBucketed else { throw CoreError.notATest(feature: name, kind: feature.kind) }
            feature.testBiases = biases
        } check: { warnings in
            let ignored = warnings.filter { Self.ignoredBiasCodes.contains($0.code) }
            if !options.isForced && !ignored.isEmpty {
                throw DocumentError.biasesIgnored(feature: name, diagnostics: ignored)
            }
        }
    }

    /// Biases that don't describe the split the app would apply: a count that differs from the
    /// variations', a sum short of 100 (the app ignores them), a sum over 100 beyond rounding (the
    /// app clamps the running sum, so the last groups get less than stated, or nothing), a value
    /// outside 0…100 (the app clamps it: `[150, -50]` is not the split it gives). An edit
    /// is a person stating a split; an imported file is read as the app reads it, with warnings.
    /// (Features without groups are refused before their biases are read.)
    static let ignoredBiasCodes: Set<DiagnosticCode> = [.biasCountMismatch, .biasSumShort, .biasSumOver, .biasClamped]

    /// The longest description kept: the app shows it in its debug screen, a line or two.
    public static let maximumDescriptionLength = 1_000

    /// Sets the feature's `description` (blank: removes it) as one new revision; nobody moves.
    ///
    /// - throws: `DocumentError.featureNotFound`, `DocumentError.descriptionTooLong`.
    public func setDescription(
        _ text: String, of name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws -> EditOutcome {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count <= Self.maximumDescriptionLength else {
            throw DocumentError.descriptionTooLong(feature: name, length: text.count)
        }
        return try await edit(name, in: path, kind: .edit, options: options, message: "describe \(name)") { feature in
            feature.description = text.isEmpty ? nil : text
        }
    }

    /// Enables or disables a feature as one new revision (nothing when it already is).
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func setEnabled(
        _ isEnabled: Bool, feature name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws -> EditOutcome {
        try await transaction(isReadOnly: options.isDryRun) { db in
            try Self.setEnabled(db, isEnabled, feature: name, in: path, options: options)
        }
    }

    /// `setEnabled` inside a transaction the caller holds (a trigger's call).
    static func setEnabled(
        _ db: Transaction, _ isEnabled: Bool, feature name: String, in path: EnvironmentPath,
        options: EditOptions
    ) throws -> EditOutcome {
        try edit(
            db, name, in: path, kind: .edit, options: options, message: "\(isEnabled ? "enable" : "disable") \(name)"
        ) {
            feature in
            // `enabled` absent already means enabled for a test: writing it would change nothing the app sees.
            if feature.isEnabled != isEnabled { feature.enabled = isEnabled }
        }
    }

    /// Rolls a finished test out to its winner (see `Feature.rolledOut(to:)`) as one new revision.
    ///
    /// - throws: `CoreError.notATest`, `CoreError.winnerRequired`, `CoreError.unknownVariation`,
    ///   `DocumentError.featureNotFound`.
    public func rollOut(
        _ name: String, to winner: String?, in path: EnvironmentPath, options: EditOptions
    ) async throws -> EditOutcome {
        try await edit(name, in: path, kind: .rollout, options: options, message: "roll out \(name)") { feature in
            feature = try feature.rolledOut(to: winner)
        }
    }

    /// Makes revision `number`'s content current again, as a new revision; users are
    /// re-evaluated as after a bias change, and features it lacks are archived as by an import.
    ///
    /// - throws: `DocumentError.revisionNotFound`.
    public func rollBack(_ path: EnvironmentPath, to number: Int, options: EditOptions) async throws -> EditOutcome {
        try await transaction(isReadOnly: options.isDryRun) { db in
            let scope = try db.environments.scope(of: path)
            guard let record = try db.environments.revision(number, in: scope) else {
                throw DocumentError.revisionNotFound(
                    path, number: number, latest: try db.environments.latestRevisionNumber(in: scope))
            }
            return try Self.revise(
                db, path: path, rendered: Array(record.document), kind: .rollback, options: options,
                message: "roll back to revision \(number)", focus: nil, restoringConfigsOf: record)
        }
    }

    /// What changed from revision `old` to revision `new`, field by field.
    ///
    /// - throws: `DocumentError.revisionNotFound`.
    public func diff(_ path: EnvironmentPath, from old: Int, to new: Int) async throws -> DocumentDiff {
        let revisions = try await read { db in
            let scope = try db.environments.scope(of: path)
            return try [old, new].map { number in
                guard let record = try db.environments.revision(number, in: scope) else {
                    throw DocumentError.revisionNotFound(
                        path, number: number, latest: try db.environments.latestRevisionNumber(in: scope))
                }
                return record
            }
        }
        let documents = try revisions.map { revision in
            guard let document = DocumentDecoder.decode(Array(revision.document)).document else {
                throw StorageError.storage(
                    reason:
                        "revision \(revision.number) of \(path) is not a valid features.json (inspect it with `flagpole export --revision \(revision.number)`)"
                )
            }
            return document
        }
        var diff = DocumentDiff(from: documents[0], to: documents[1])
        diff.append(
            contentsOf: ConfigsDiff.changes(
                from: ConfigsDocument(stored: revisions[0].configs),
                to: ConfigsDocument(stored: revisions[1].configs)))
        diff.append(
            contentsOf: TargetingDiff.changes(
                from: try TargetingDocument(stored: revisions[0].targeting),
                to: try TargetingDocument(stored: revisions[1].targeting)))
        return diff
    }

    /// One feature of the current document with what the store keeps beside it.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func feature(_ name: String, in path: EnvironmentPath) async throws -> FeatureDetail {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: name, in: scope)
            return FeatureDetail(
                feature: stored.feature, salt: stored.salt,
                revision: try db.environments.latestRevisionNumber(in: scope) ?? 0,
                recordedUsers: try db.assignments.recordedUserCount(featureID: stored.id))
        }
    }

    // MARK: The one way to change a document

    /// Changes one feature of the current document and applies the result as a revision, in
    /// one transaction, so two editors never overwrite each other's change.
    private func edit(
        _ name: String, in path: EnvironmentPath, kind: RevisionKind, options: EditOptions, message: String,
        change: @escaping @Sendable (inout Feature) throws -> Void,
        check: @escaping @Sendable ([Diagnostic]) throws -> Void = { _ in }
    ) async throws -> EditOutcome {
        try await transaction(isReadOnly: options.isDryRun) { db in
            try Self.edit(
                db, name, in: path, kind: kind, options: options, message: message, change: change, check: check)
        }
    }

    /// `edit` inside a transaction the caller holds: a ramp writes its step's rows in the
    /// transaction of the step's revision.
    static func edit(
        _ db: Transaction, _ name: String, in path: EnvironmentPath, kind: RevisionKind, options: EditOptions,
        message: String, change: (inout Feature) throws -> Void, check: ([Diagnostic]) throws -> Void = { _ in }
    ) throws -> EditOutcome {
        let scope = try db.environments.scope(of: path)
        let features = try db.features.storedFeatures(in: scope)
        var document = try db.currentDocument(in: scope, features: features)
        guard let index = document.features.firstIndex(where: { $0.name == name }) else {
            throw DocumentError.featureNotFound(path, name: name)
        }
        try change(&document.features[index])
        return try revise(
            db, path: path, rendered: document.rendered(), kind: kind, options: options, message: message,
            focus: name, storedFeatures: features, check: check)
    }

    /// Reviews a rendered document against the current one and writes it as a revision of
    /// `kind` (unless a dry run): the path imports take, so edits are validated, audited and
    /// re-evaluate users exactly as imports do. Warnings are those of `focus` when named.
    private static func revise(
        _ db: Transaction, path: EnvironmentPath, rendered: [UInt8], kind: RevisionKind, options: EditOptions,
        message: String,
        focus: String?, storedFeatures: [StoredFeature]? = nil, restoringConfigsOf restored: RevisionRecord? = nil,
        check: ([Diagnostic]) throws -> Void = { _ in }
    ) throws -> EditOutcome {
        let decoded = DocumentDecoder.decode(rendered)
        guard let document = decoded.document else {
            throw DocumentError.importRefused(path, diagnostics: decoded.diagnostics, isStrict: false)
        }
        var importOptions = ImportOptions(
            isDryRun: options.isDryRun, message: options.message, actor: options.actor,
            expectedRevision: options.expectedRevision, time: options.time)
        importOptions.defaultMessage = message
        let plan = try DocumentPlan(
            db, path: path, decoded: decoded, document: document, rendering: Rendering(rendered),
            options: importOptions,
            storedFeatures: storedFeatures, restoringConfigsOf: restored)
        let warnings = focus.map { name in plan.warnings.filter { $0.feature == name } } ?? plan.warnings
        try check(warnings)
        // A dry run counts who would move; applying counts who did, with the same selection.
        let placedByRules = try plan.movesPlacedByRules(db)
        let (outcome, moves) =
            options.isDryRun
            ? (plan.outcome, try plan.reevaluate(db, writer: nil, kind: kind).moves)
            : try plan.apply(db, kind: kind)
        let plans = try plan.rangeChanges.map { change in
            var plan = try db.rolloutPlan(of: change.stored, to: change.next, recorded: moves[change.next.name] ?? [])
            plan.movingPlacedByRules = placedByRules[change.next.name] ?? 0
            return plan
        }
        return switch outcome.status {
        case .applied(let number):
            EditOutcome(revision: number, isApplied: true, isUnchanged: false, plans: plans, warnings: warnings)
        case .planned(let number):
            EditOutcome(revision: number, isApplied: false, isUnchanged: false, plans: plans, warnings: warnings)
        case .unchanged(let number):
            EditOutcome(revision: number, isApplied: false, isUnchanged: true, plans: plans, warnings: warnings)
        }
    }
}

extension Transaction {
    /// What moving a feature's users to `next`'s ranges does: the shares from the geometry, the
    /// `recorded` users who move (or would) from the records.
    func rolloutPlan(of stored: StoredFeature, to next: Feature, recorded: [RecordedMove]) throws -> RolloutPlan {
        let before = stored.feature.assignmentRanges
        let after = next.assignmentRanges
        var moves = before.transitions(to: after).map {
            RolloutPlan.Move(from: $0.from, to: $0.to, share: $0.share, recordedUsers: 0)
        }
        // By pair, through a dictionary: a test with many variations has many pairs.
        let positions = Dictionary(
            moves.indices.map { (MovePair(from: moves[$0].from, to: moves[$0].to), $0) },
            uniquingKeysWith: { first, _ in first })
        for pending in recorded {
            if let index = positions[MovePair(from: pending.from, to: pending.to)] {
                moves[index].recordedUsers += pending.users
            } else {
                moves.append(
                    RolloutPlan.Move(from: pending.from, to: pending.to, share: 0, recordedUsers: pending.users))
            }
        }
        return RolloutPlan(
            feature: next.name, before: before, after: after, moves: moves,
            recordedUsers: try assignments.recordedUserCount(featureID: stored.id))
    }
}
