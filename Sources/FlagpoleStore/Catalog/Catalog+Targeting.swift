import Crypto
import FlagpoleCore
import Foundation

/// An environment's rules and segments at its current revision, each segment with its users.
public struct TargetingSnapshot: Sendable {
    /// `nil` before the first revision.
    public var revision: Int?
    public var featureRules: [String: [TargetingRule]]
    public var segments: [Segment]
}

extension Catalog {
    /// The environment's current rules and segments.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func targeting(in path: EnvironmentPath) async throws -> TargetingSnapshot {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let latest = try db.environments.revision(nil, in: scope)
            let document = try TargetingDocument(stored: latest?.targeting)
            let segments = try document.segments.values.sorted { $0.name < $1.name }.map { definition in
                try Self.segment(definition, in: scope, db: db)
            }
            return TargetingSnapshot(revision: latest?.number, featureRules: document.featureRules, segments: segments)
        }
    }

    /// Replaces a feature's rules (none: removes them), as a new revision that keeps the
    /// features.json and configs as they are.
    ///
    /// - throws: `DocumentError.featureNotFound`, `TargetingError.refused`, `DocumentError.revisionConflict`.
    public func setRules(
        _ rules: [TargetingRule], ofFeature name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws -> ConfigsOutcome {
        try await changeTargeting(in: path, options: options, message: "rules of \(name)") { document, features, _ in
            guard let feature = features.first(where: { Feature.nameKey($0.name) == Feature.nameKey(name) }) else {
                throw DocumentError.featureNotFound(path, name: name)
            }
            var issues = rules.problems(
                variations: feature.effectiveVariations, segments: Set(document.segments.keys))
            issues += Self.unshowable(rules, of: feature)
            document.featureRules[feature.name] = rules.isEmpty ? nil : rules
            return issues
        }
    }

    /// Creates or replaces a segment, as a new revision.
    ///
    /// - throws: `TargetingError.refused`, `DocumentError.revisionConflict`.
    public func setSegment(
        _ segment: Segment, in path: EnvironmentPath, options: EditOptions
    ) async throws -> ConfigsOutcome {
        try await changeTargeting(in: path, options: options, message: "segment \(segment.name)") {
            document, _, lists in
            var users: SegmentUsers?
            if !segment.users.isEmpty {
                let bytes = SegmentUsers.listBytes(segment.users)
                let digest = Array(SHA256.hash(data: bytes))
                users = SegmentUsers(sha256: Hex.encode(digest), count: segment.users.count)
                lists.append((bytes, digest, segment.users.count))
            }
            document.segments[segment.name] = SegmentDefinition(segment, users: users)
            return []
        }
    }

    /// Deletes a segment no rule names, as a new revision.
    ///
    /// - throws: `TargetingError.segmentNotFound`, `TargetingError.segmentInUse`.
    public func deleteSegment(
        named name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws -> ConfigsOutcome {
        try await changeTargeting(in: path, options: options, message: "delete segment \(name)") { document, _, _ in
            guard document.segments[name] != nil else {
                throw TargetingError.segmentNotFound(path, name: name, existing: document.segments.keys.sorted())
            }
            let users = document.featureRules.sorted { $0.key < $1.key }.flatMap { feature, rules in
                rules.filter { rule in
                    rule.clauses.contains { $0.op.operand == .segment && $0.values.contains(.string(name)) }
                }.map { "\(feature)/\($0.id)" }
            }
            guard users.isEmpty else { throw TargetingError.segmentInUse(path, name: name, rules: users) }
            document.segments[name] = nil
            return []
        }
    }

    // MARK: The one way to change targeting

    /// Applies `change` to the current rules and segments and writes the result as a new
    /// revision that keeps the current features.json and configs, in one transaction, with the
    /// lists of users `change` adds. `change` returns the issues of what it wrote: any error
    /// refuses the whole change.
    private func changeTargeting(
        in path: EnvironmentPath, options: EditOptions, message: String,
        change:
            @escaping @Sendable (
                inout TargetingDocument, [Feature], inout [(bytes: [UInt8], sha256: [UInt8], count: Int)]
            ) throws -> [ConfigIssue]
    ) async throws -> ConfigsOutcome {
        try await transaction(isReadOnly: options.isDryRun) { db in
            let scope = try db.environments.scope(of: path)
            let latest = try db.environments.revision(nil, in: scope)
            if let expected = options.expectedRevision, expected != (latest?.number ?? 0) {
                throw DocumentError.revisionConflict(path, expected: expected, current: latest?.number)
            }
            let storedFeatures = try db.features.storedFeatures(in: scope).filter { !$0.isArchived }
            let current = try TargetingDocument(stored: latest?.targeting)
            var next = current
            var lists: [(bytes: [UInt8], sha256: [UInt8], count: Int)] = []
            let issues = try change(&next, storedFeatures.map(\.feature), &lists)
            // Configs' own rules name segments too: none may lose one.
            let configs = ConfigsDocument(stored: latest?.configs)
            let orphaned = configs.configs.filter { config in
                config.rules.problems(variations: nil, segments: Set(next.segments.keys)).contains {
                    $0.severity == .error
                }
            }
            if !orphaned.isEmpty, let removed = current.segments.keys.first(where: { next.segments[$0] == nil }) {
                throw TargetingError.segmentInUse(path, name: removed, rules: orphaned.map { "config \($0.name)" })
            }
            if issues.contains(where: { $0.severity == .error }) { throw TargetingError.refused(path, issues: issues) }
            let warnings = issues.filter { $0.severity == .warning }
            let changes = TargetingDiff.changes(from: current, to: next)
            let number = (latest?.number ?? 0) + 1
            guard !changes.isEmpty else {
                return ConfigsOutcome(
                    revision: latest?.number ?? 0, isApplied: false, isUnchanged: true, changes: [], warnings: warnings)
            }
            // The segments as the revision will have them: a new list is not stored yet on a dry run.
            let newLists = Dictionary(
                lists.map { (Hex.encode($0.sha256), $0.bytes) }, uniquingKeysWith: { first, _ in first })
            let segments = SegmentLookup(
                try next.segments.values.map { definition in
                    if let users = definition.users, let bytes = newLists[users.sha256] {
                        return definition.segment(users: SegmentUsers.users(inList: bytes))
                    }
                    return try Self.segment(definition, in: scope, db: db)
                })
            let writer =
                options.isDryRun ? nil : db.assignments.writer(in: scope, revision: number, now: Date())
            if !options.isDryRun {
                for list in lists {
                    try db.targeting.keepList(list.bytes, sha256: list.sha256, count: list.count, tenant: scope.tenant)
                }
                try db.environments.insertRevision(
                    number: number, kind: .edit, actor: options.actor,
                    message: RevisionMessage(options.message, else: message),
                    document: latest.map { Array($0.document) } ?? FeaturesDocument(features: []).rendered(),
                    configs: latest?.configs.map(Array.init), targeting: next.isEmpty ? nil : Data(next.rendered()),
                    changes: changes, in: scope, at: Date())
            }
            // Who moves: the recorded users of every test whose rules, or segments they name, changed.
            let segmentsBefore = SegmentLookup(
                try current.segments.values.map { try Self.segment($0, in: scope, db: db) })
            let plans = try storedFeatures.enumerated().compactMap { index, stored -> TargetingPlan? in
                let (before, after) = (current.rules(of: stored.feature.name), next.rules(of: stored.feature.name))
                guard before != nil || after != nil,
                    before != after || Self.namesChangedSegment(after ?? before!, from: current, to: next),
                    let test = PinningPlan.Test(
                        featureID: stored.id, index: index, feature: stored.feature, salt: stored.salt,
                        rules: after ?? [])
                else { return nil }
                let testBefore = PinningPlan.Test(
                    featureID: stored.id, index: index, feature: stored.feature, salt: stored.salt, rules: before ?? [])
                return try TargetingReevaluation(
                    db: db, test: test, segments: segments, previous: testBefore.map { ($0, segmentsBefore) }
                ).run(writer: writer)
            }
            if !options.isDryRun {
                try db.environments.recordMovedUsers(
                    plans.reduce(0) { $0 + $1.movingUsers }, ofRevision: number, in: scope)
            }
            return ConfigsOutcome(
                revision: number, isApplied: !options.isDryRun, isUnchanged: false, changes: changes,
                warnings: warnings, plans: plans)
        }
    }

    /// Whether `rules` name a segment whose definition differs between `old` and `new`.
    static func namesChangedSegment(
        _ rules: [TargetingRule], from old: TargetingDocument, to new: TargetingDocument
    )
        -> Bool
    {
        rules.contains { rule in
            rule.clauses.contains { clause in
                clause.op.operand == .segment
                    && clause.values.contains {
                        guard case .string(let name) = $0 else { return false }
                        return old.segments[name] != new.segments[name]
                    }
            }
        }
    }

    /// A variation a rule serves that owns no points under the feature's biases: the pinned
    /// features.json can't put a FeatureFlags app there (as with an override into it).
    static func unshowable(_ rules: [TargetingRule], of feature: Feature) -> [ConfigIssue] {
        let ranges = VariationRanges(of: feature)
        return rules.enumerated().flatMap { index, rule -> [ConfigIssue] in
            let served: [String] =
                switch rule.serve {
                case .variation(let name): [name]
                case .split(let shares): shares.filter { $0.weight > 0 }.map(\.variation)
                case .value: []
                }
            return served.filter {
                ranges.point(in: $0, preferring: 0) == nil && feature.effectiveVariations.contains($0)
            }
            .map { variation in
                ConfigIssue(
                    .error, config: rule.id,
                    pointer: JSONPointer.root.appending("rules").appending(index).appending("serve"), location: nil,
                    message:
                        "\"\(variation)\" owns no points under the biases, so a FeatureFlags app can't be put in it",
                    fix: "give it a bias above 0 first, or serve another variation")
            }
        }
    }

    /// A segment with the users its list holds.
    static func segment(
        _ definition: SegmentDefinition, in scope: EnvironmentScope, db: Transaction
    ) throws -> Segment {
        guard let users = definition.users else { return definition.segment(users: []) }
        guard let digest = Hex.decode(users.sha256),
            let bytes = try db.targeting.list(sha256: digest, tenant: scope.tenant)
        else {
            throw StorageError.storage(reason: "the users of segment \(definition.name) are missing from segment_lists")
        }
        return definition.segment(users: SegmentUsers.users(inList: bytes))
    }
}

extension TargetingDocument {
    /// The rules and segments a revision keeps (`nil`: none).
    ///
    /// - throws: `StorageError.storage` when they no longer decode, which only a damaged file explains.
    init(stored: Data?) throws {
        do {
            try self.init(stored: stored.map(Array.init))
        } catch {
            throw StorageError.storage(
                reason: "the rules kept with a revision do not decode: \(error.issues.first?.description ?? "")")
        }
    }
}

extension Catalog {
    /// How many users' attributes `attributeNames(in:)` reads.
    static let attributeSample = 200

    /// The attribute names an environment knows: those its rules and segments name, and those
    /// a sample of its users' kept attributes have; sorted.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func attributeNames(in path: EnvironmentPath) async throws -> [String] {
        let targeting = try await targeting(in: path)
        let clauses =
            targeting.featureRules.values.flatMap { $0.flatMap(\.clauses) } + targeting.segments.flatMap(\.clauses)
        let sampled = try await read { db in
            try db.userAttributes.sample(in: try db.environments.scope(of: path), limit: Self.attributeSample)
        }
        var names = Set(clauses.compactMap(\.attribute))
        for attributes in sampled { names.formUnion(attributes.values.keys) }
        names.remove(EvaluationContext.userAttribute)
        return names.sorted()
    }

    /// `user`'s last attributes kept in the environment at `path`; `nil` when none are.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func keptAttributes(of user: UserID, in path: EnvironmentPath) async throws -> UserAttributes? {
        try await read { db in
            try db.userAttributes.attributes(of: user, in: try db.environments.scope(of: path))?.decoded
        }
    }
}
