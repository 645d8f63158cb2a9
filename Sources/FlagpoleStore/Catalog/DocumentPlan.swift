import FlagpoleCore
import Foundation

/// The comparison of a valid document with an environment's current state, and how to apply
/// it as one new revision: imports, edits and rollbacks all go through here, so each is
/// reviewed, audited and re-evaluates its users the same way.
struct DocumentPlan {
    let scope: EnvironmentScope
    let document: FeaturesDocument
    let rendering: Rendering
    let options: ImportOptions
    let stored: [String: StoredFeature]
    let current: FeaturesDocument
    let latest: RevisionRecord?
    let diff: DocumentDiff
    /// The configs file the new revision keeps: the latest revision's, or on a rollback the
    /// one of the revision it goes back to.
    let configs: Data?
    /// What that changes in the configs: nothing but on a rollback.
    let configChanges: [DocumentDiff.Change]
    /// The rules and segments the new revision keeps, and what that changes in them, as configs.
    let targeting: Data?
    let targetingChanges: [DocumentDiff.Change]
    /// The rules and segments before and after, decoded.
    let previousTargeting: TargetingDocument
    let nextTargeting: TargetingDocument
    let warnings: [Diagnostic]
    /// Whether the file renders to the current revision's very bytes.
    let isUnchanged: Bool

    /// Compares `document` with the environment's state; `storedFeatures`, when the caller has
    /// just read them in the same transaction, saves reading them again. A rollback names the
    /// revision whose configs it restores in `restoringConfigsOf`.
    init(
        _ db: Transaction, path: EnvironmentPath, decoded: DecodedDocument, document: FeaturesDocument,
        rendering: Rendering,
        options: ImportOptions, storedFeatures preloaded: [StoredFeature]? = nil,
        restoringConfigsOf restored: RevisionRecord? = nil
    ) throws {
        scope = try db.environments.scope(of: path)
        self.document = document
        self.rendering = rendering
        self.options = options
        let storedFeatures = try preloaded ?? db.features.storedFeatures(in: scope)
        stored = Dictionary(uniqueKeysWithValues: storedFeatures.map { ($0.feature.name, $0) })
        current = try db.currentDocument(in: scope, features: storedFeatures)
        latest = try db.environments.revision(nil, in: scope)
        // Checked inside the write transaction, so no other write can slip in after it.
        if let expected = options.expectedRevision, expected != (latest?.number ?? 0) {
            throw DocumentError.revisionConflict(path, expected: expected, current: latest?.number)
        }
        var configs = restored.map(\.configs) ?? latest?.configs
        var removedNulls: [DocumentDiff.Change] = []
        if let restored, let restoredConfigs = restored.configs {
            // Configs restored as they are served: the nulls an earlier version stored in that
            // revision come back without them, and the audit names each one removed.
            let (document, warnings) = ConfigsDocument.decoding(stored: restoredConfigs)
            removedNulls = ConfigsDiff.removedNulls(warnings)
            if !removedNulls.isEmpty { configs = document.isEmpty ? nil : Data(document.rendered()) }
        }
        let configChanges =
            configs == latest?.configs
            ? []
            : ConfigsDiff.changes(
                from: ConfigsDocument(stored: latest?.configs), to: ConfigsDocument(stored: configs)) + removedNulls
        self.configs = configs
        self.configChanges = configChanges
        let targeting = restored.map(\.targeting) ?? latest?.targeting
        let targetingChanges =
            targeting == latest?.targeting
            ? []
            : TargetingDiff.changes(
                from: try TargetingDocument(stored: latest?.targeting), to: try TargetingDocument(stored: targeting))
        self.targeting = targeting
        self.targetingChanges = targetingChanges
        nextTargeting = try TargetingDocument(stored: targeting)
        previousTargeting = try TargetingDocument(stored: latest?.targeting)
        try Self.checkRules(nextTargeting, of: document, in: path)
        // Without a revision there is nothing to compare with: the rendering may still be under way.
        isUnchanged =
            latest.map { $0.document == Data(rendering.value) && configChanges.isEmpty && targetingChanges.isEmpty }
            ?? false
        diff = DocumentDiff(from: current, to: document)
        let archived = storedFeatures.filter(\.isArchived).map(\.feature)
        warnings = decoded.diagnostics + ImportReview.review(decoded, replacing: current, archived: archived)
        if options.isStrict && !warnings.isEmpty {
            throw DocumentError.importRefused(path, diagnostics: warnings, isStrict: true)
        }
    }

    /// Refuses a document that leaves a rule serving a variation its feature no longer has, or
    /// one that owns no points (no FeatureFlags app could be put there): the rules change first.
    static func checkRules(
        _ targeting: TargetingDocument, of document: FeaturesDocument, in path: EnvironmentPath
    )
        throws
    {
        let segments = Set(targeting.segments.keys)
        var issues: [ConfigIssue] = []
        for feature in document.features where feature.isBucketed {
            guard let rules = targeting.rules(of: feature.name) else { continue }
            let problems =
                rules.problems(variations: feature.effectiveVariations, segments: segments)
                + Catalog.unshowable(rules, of: feature)
            issues += problems.filter { $0.severity == .error }.map { issue in
                var issue = issue
                issue.message = "\(feature.name): \(issue.message)"
                issue.fix = "change the rules of \(feature.name) first (`flagpole rule set`), then this"
                return issue
            }
        }
        if !issues.isEmpty { throw TargetingError.refused(path, issues: issues) }
    }

    var outcome: ImportOutcome {
        let next = (latest?.number ?? 0) + 1
        if let latest, isUnchanged {
            return ImportOutcome(
                path: scope.path, status: .unchanged(revision: latest.number), added: [], returned: [], changed: [],
                archived: [], unchangedCount: document.features.count, warnings: warnings, reassigned: 0)
        }
        let added = diff.addedFeatures
        let changed = diff.changedFeatures
        return ImportOutcome(
            path: scope.path, status: options.isDryRun ? .planned(revision: next) : .applied(revision: next),
            added: added, returned: added.filter { stored[$0] != nil }, changed: changed,
            archived: diff.removedFeatures,
            unchangedCount: document.features.count - added.count - changed.count, warnings: warnings, reassigned: 0)
    }

    /// Writes the revision; the users of every test whose ranges change are re-evaluated.
    /// Returns the outcome and the recorded users who moved, by feature, pair by pair.
    func apply(
        _ db: Transaction, kind: RevisionKind
    ) throws -> (outcome: ImportOutcome, moves: [String: [RecordedMove]]) {
        guard !isUnchanged else { return (outcome, [:]) }
        let now = options.time ?? Date()
        let number = (latest?.number ?? 0) + 1
        // `now` as the database stores it, converted once rather than for every row.
        let time = now.sqlValue
        var salts = FeatureTable.makeSalts(count: document.features.count { stored[$0.name] == nil })[...]
        for (position, feature) in document.features.enumerated() {
            guard let existing = stored[feature.name] else {
                try db.features.insert(feature, at: position, salt: salts.removeFirst(), in: scope, at: time)
                continue
            }
            if existing.isArchived || !existing.feature.isIdentical(to: feature) {
                try db.features.update(existing, to: feature, at: position, in: scope, at: time)
            } else if existing.position != position {
                try db.features.move(existing, to: position, in: scope)
            }
        }
        let names = Set(document.features.map(\.name))
        for existing in stored.values where !existing.isArchived && !names.contains(existing.feature.name) {
            try db.features.archive(existing, in: scope, at: time)
        }
        if current.extras != document.extras || current.featuresPosition != document.featuresPosition {
            try db.environments.replaceExtras(of: document, in: scope)
        }
        // Last, as the only write that needs the rendered bytes.
        try db.environments.insertRevision(
            number: number, kind: kind, actor: options.actor,
            message: RevisionMessage(options.message, else: options.defaultMessage),
            document: rendering.value, configs: configs.map(Array.init), targeting: targeting,
            changes: diff.changes + configChanges + targetingChanges, in: scope, at: now)
        var result = outcome
        let moves = try reevaluate(db, writer: db.assignments.writer(in: scope, revision: number, now: now), kind: kind)
        result.reassigned = moves.reassigned
        // The change planned who moves where a test's groups or rules change.
        if rangeChanges.contains(where: { $0.stored.feature.isBucketed || $0.next.isBucketed })
            || !ruledFeatures.isEmpty
        {
            try db.environments.recordMovedUsers(moves.reassigned, ofRevision: number, in: scope)
        }
        return (result, moves.moves)
    }

    /// Moves the recorded users of every test whose ranges or rules change, with their events
    /// (without a writer, only counts them, with the same selections). Returns the moves by
    /// feature, pair by pair, and how many users moved, released overrides included.
    ///
    /// Users whose app keeps its point move with the ranges of that point; users whose client
    /// follows rules, in a test with rules before or after, are decided by rule and point at once
    /// (`TargetingReevaluation`), so none moves twice.
    /// For each test whose ranges change, how many of the users who move (or would) a rule had
    /// placed: read before anything moves, so a dry run and the change count alike.
    func movesPlacedByRules(_ db: Transaction) throws -> [String: Int] {
        let ruled = ruledFeatures
        var placed: [String: Int] = [:]
        for (stored, next) in rangeChanges {
            placed[next.name] = try db.assignments.pendingMovesPlacedByRules(
                featureID: stored.id, from: stored.feature.assignmentRanges, to: next.assignmentRanges,
                followsRules: ruled.contains(Feature.nameKey(next.name)))
        }
        return placed
    }

    func reevaluate(
        _ db: Transaction, writer: AssignmentWriter?, kind: RevisionKind
    ) throws -> (moves: [String: [RecordedMove]], reassigned: Int) {
        var reassigned = 0
        var moves: [String: [RecordedMove]] = [:]
        let ruled = ruledFeatures
        for (stored, next) in rangeChanges {
            let followsRules = ruled.contains(Feature.nameKey(next.name))
            let (old, new) = (stored.feature.assignmentRanges, next.assignmentRanges)
            if let writer {
                reassigned += try writer.releaseOverrides(featureID: stored.id, under: next)
                moves[next.name] = try writer.reevaluate(
                    featureID: stored.id, from: old, to: new,
                    reason: AssignmentReason.reevaluation(from: stored.feature, to: next, in: kind),
                    followsRules: followsRules)
            } else {
                moves[next.name] = try db.assignments.pendingMoves(
                    featureID: stored.id, from: old, to: new, followsRules: followsRules)
            }
            reassigned += moves[next.name]!.reduce(0) { $0 + $1.users }
        }
        let changed = Set(rangeChanges.map { Feature.nameKey($0.next.name) })
        let segments = SegmentLookup(
            try nextTargeting.segments.values.map { try Catalog.segment($0, in: scope, db: db) })
        for (index, feature) in document.features.enumerated() {
            let key = Feature.nameKey(feature.name)
            guard ruled.contains(key), changed.contains(key) || !targetingChanges.isEmpty,
                let existing = stored[feature.name],
                let test = PinningPlan.Test(
                    featureID: existing.id, index: index, feature: feature, salt: existing.salt,
                    rules: nextTargeting.rules(of: feature.name) ?? [])
            else { continue }
            let reason =
                changed.contains(key)
                ? AssignmentReason.reevaluation(from: existing.feature, to: feature, in: kind) : .rules
            let plan = try TargetingReevaluation(db: db, test: test, segments: segments).run(
                writer: writer, reason: reason)
            var tally = MoveTally()
            for move in moves[feature.name] ?? [] { tally.add(move) }
            for move in plan.moves { tally.add(RecordedMove(from: move.from, to: move.to, users: move.users)) }
            moves[feature.name] = tally.moves
            reassigned += plan.movingUsers
        }
        return (moves, reassigned)
    }

    /// The features (by name key) with rules before or after: their users who follow rules are
    /// decided by `TargetingReevaluation`, not by their point alone.
    var ruledFeatures: Set<String> {
        Set([previousTargeting, nextTargeting].flatMap { $0.featureRules.keys.map(Feature.nameKey) })
    }

    /// The features whose recorded users may change group: those kept or returning whose
    /// ranges differ. Features leaving the document keep their users as devices keep them.
    var rangeChanges: [(stored: StoredFeature, next: Feature)] {
        document.features.compactMap { feature in
            guard let existing = stored[feature.name], existing.feature.assignmentRanges != feature.assignmentRanges
            else { return nil }
            return (existing, feature)
        }
    }
}
