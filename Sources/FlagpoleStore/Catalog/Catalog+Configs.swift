import FlagpoleCore
import Foundation

/// An environment's configs and feature tags as of a revision.
public struct ConfigsSnapshot: Hashable, Sendable {
    /// The revision they are of; `nil` before the environment's first.
    public var revision: Int?
    public var document: ConfigsDocument
    /// The features of the same revision, which configs follow and tags label.
    public var features: [Feature]
    /// What the stored configs hold that no app can take, which an earlier version accepted: a
    /// JSON `null` (served without it) or a control character (see `ConfigValue.problemsForApps`).
    public var warnings: [ConfigIssue] = []
}

/// What a change of configs, tags, rules or segments did, or would do on a dry run.
public struct ConfigsOutcome: Hashable, Sendable {
    /// The new revision, or the current one when nothing changed.
    public var revision: Int
    public var isApplied: Bool
    public var isUnchanged: Bool
    /// The audit rows of the change.
    public var changes: [DocumentDiff.Change]
    /// What was written but deserves a look: rules that can never match.
    public var warnings: [ConfigIssue] = []
    /// For a change of rules or segments: who moves (or would), test by test.
    public var plans: [TargetingPlan] = []
}

extension Catalog {
    /// The environment's current configs.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func configs(in path: EnvironmentPath) async throws -> ConfigsSnapshot {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let latest = try db.environments.revision(nil, in: scope)
            let features = try db.features.storedFeatures(in: scope).filter { !$0.isArchived }.map(\.feature)
            let (document, warnings) = ConfigsDocument.decoding(stored: latest?.configs)
            return ConfigsSnapshot(revision: latest?.number, document: document, features: features, warnings: warnings)
        }
    }

    /// Every environment whose current configs hold what no app can take, with what: the
    /// warnings of `configs(in:)`, for `flagpole migrate` to report after an upgrade.
    ///
    /// - throws: `StorageError`.
    public func configWarnings() async throws -> [(path: EnvironmentPath, warnings: [ConfigIssue])] {
        var found: [(path: EnvironmentPath, warnings: [ConfigIssue])] = []
        for tenant in try await store.access.tenants() {
            for environment in try await store.access.environments(of: tenant.slug) {
                let warnings = try await configs(in: environment.path).warnings
                if !warnings.isEmpty { found.append((environment.path, warnings)) }
            }
        }
        return found
    }

    /// Adds `config`, or replaces the config of the same name (as apps compare names) in its place,
    /// with the stored config's declaration, whatever `config` says (only `importDeclarations`
    /// changes it).
    ///
    /// - throws: `ConfigError.refused`, `DocumentError.revisionConflict`.
    public func setConfig(
        _ config: Config, in path: EnvironmentPath, options: EditOptions
    ) async throws
        -> ConfigsOutcome
    {
        // Issues point into the one config, as its writer sent it.
        try await changeConfigs(
            in: path, options: options, message: "set config \(config.name)", pointer: { _ in .root },
            change: { document, _ in document.set(config.declared(as: document.config(named: config.name))) })
    }

    /// Removes the config named `name`.
    ///
    /// - throws: `ConfigError.configNotFound`, `DocumentError.revisionConflict`.
    public func deleteConfig(
        named name: String, in path: EnvironmentPath, options: EditOptions
    ) async throws
        -> ConfigsOutcome
    {
        try await changeConfigs(in: path, options: options, message: "delete config \(name)") { document in
            guard let index = document.index(of: name) else {
                throw ConfigError.configNotFound(path, name: name, existing: document.configs.map(\.name))
            }
            document.configs.remove(at: index)
        }
    }

    /// Replaces the environment's configs with `imported`'s, in its order; its feature tags
    /// replace the current ones only when it has some. Each config keeps the stored one's
    /// declaration, whatever the file says (another environment's, say).
    ///
    /// - throws: `ConfigError.refused`, `DocumentError.revisionConflict`.
    public func importConfigs(
        _ imported: ConfigsDocument, in path: EnvironmentPath, options: EditOptions,
        defaultMessage: String = "import configs"
    ) async throws -> ConfigsOutcome {
        try await changeConfigs(in: path, options: options, message: defaultMessage, replacesAll: true) { document in
            document.configs = imported.configs.map { $0.declared(as: document.config(named: $0.name)) }
            if !imported.featureTags.isEmpty { document.featureTags = imported.featureTags }
        }
    }

    /// Applies a merge of the app's declaration file (`DeclarationsMerge`, planned from the
    /// current configs, whose revision `options.expectedRevision` should name): the one write
    /// that sets declarations. Issues point into each config, which they name.
    ///
    /// - throws: `ConfigError.refused` (a type change unless forced), `DocumentError.revisionConflict`.
    public func importDeclarations(
        _ merge: DeclarationsMerge, in path: EnvironmentPath, options: EditOptions,
        defaultMessage: String = "import declarations"
    ) async throws -> ConfigsOutcome {
        try await changeConfigs(
            in: path, options: options, message: defaultMessage, pointer: { _ in .root },
            change: { document, _ in
                document.configs = merge.document.configs
                document.releases = merge.document.releases
            })
    }

    /// Sets the tags the store gives a feature (an empty list removes them); tags written in the
    /// feature's features.json stay as they are.
    ///
    /// - throws: `DocumentError.featureNotFound`, `ConfigError.refused`.
    public func setTags(
        _ tags: [String], ofFeature name: String, in path: EnvironmentPath, options: EditOptions
    )
        async throws -> ConfigsOutcome
    {
        if let bad = tags.first(where: { !ConfigsDecoder.isValidTag($0) }) {
            throw ConfigError.refused(
                path,
                issues: [
                    ConfigIssue(
                        .error, config: nil, pointer: .root, location: nil, message: "\"\(bad)\" is not a tag",
                        fix: "a tag is 1 to 64 characters, without commas or spaces at either end")
                ])
        }
        return try await changeConfigs(in: path, options: options, message: "tag \(name)") { document, features in
            guard let feature = features.first(where: { Feature.nameKey($0.name) == Feature.nameKey(name) }) else {
                throw DocumentError.featureNotFound(path, name: name)
            }
            var unique: [String] = []
            for tag in tags where !unique.contains(tag) { unique.append(tag) }
            document.featureTags[feature.name] = unique.isEmpty ? nil : unique
        }
    }

    // MARK: The one way to change configs

    private func changeConfigs(
        in path: EnvironmentPath, options: EditOptions, message: String, replacesAll: Bool = false,
        change: @escaping @Sendable (inout ConfigsDocument) throws -> Void
    ) async throws -> ConfigsOutcome {
        try await changeConfigs(
            in: path, options: options, message: message, pointer: Self.filePointer, replacesAll: replacesAll
        ) { document, _ in try change(&document) }
    }

    /// Where the config at `index` is in a configs file.
    private static let filePointer: @Sendable (Int) -> JSONPointer = {
        JSONPointer.root.appending("configs").appending($0)
    }

    /// Applies `change` to the current configs and writes the result as a new revision that
    /// keeps the current features.json, in one transaction; every config it writes is checked,
    /// itself and against the features, first.
    private func changeConfigs(
        in path: EnvironmentPath, options: EditOptions, message: String,
        pointer: @escaping @Sendable (Int) -> JSONPointer = filePointer, replacesAll: Bool = false,
        change: @escaping @Sendable (inout ConfigsDocument, [Feature]) throws -> Void
    ) async throws -> ConfigsOutcome {
        try await transaction(isReadOnly: options.isDryRun) { db in
            let scope = try db.environments.scope(of: path)
            let latest = try db.environments.revision(nil, in: scope)
            if let expected = options.expectedRevision, expected != (latest?.number ?? 0) {
                throw DocumentError.revisionConflict(path, expected: expected, current: latest?.number)
            }
            let features = try db.features.storedFeatures(in: scope).filter { !$0.isArchived }.map(\.feature)
            let (current, storedWarnings) = ConfigsDocument.decoding(stored: latest?.configs)
            // Configs that no longer decode are replaced whole (an import) or not at all: a
            // change to one config would silently drop the others.
            let undecodable = storedWarnings.filter { $0.severity == .error }
            if !undecodable.isEmpty && !replacesAll { throw ConfigError.refused(path, issues: undecodable) }
            var next = current
            try change(&next, features)
            let segments = Set(try TargetingDocument(stored: latest?.targeting).segments.keys)
            // Only what this change writes is checked: a config an import made stale (its feature
            // gone) gives its default, and must not block changes to the others.
            var issues = next.configs.enumerated().flatMap { index, config -> [ConfigIssue] in
                let stored = current.config(named: config.name)
                let declarationProblems =
                    options.isForced ? [] : config.declarationProblems(replacing: stored, at: pointer(index))
                guard let stored else {
                    return config.problems(at: pointer(index)) + config.problems(beside: features, at: pointer(index))
                        + declarationProblems + Self.ruleProblems(of: config, segments: segments, at: pointer(index))
                }
                if stored.isIdentical(to: config) { return [] }
                // A declaration import that only updates what is on record (a declared default, a
                // doc) checks nothing more; a newly declared type checks the values against it.
                var bookkeeping = stored
                bookkeeping.declaration = config.declaration
                if bookkeeping.isIdentical(to: config) {
                    return stored.declaration?.type == config.declaration?.type ? [] : declarationProblems
                }
                return config.problems(at: pointer(index)) + config.problems(beside: features, at: pointer(index))
                    + declarationProblems + Self.ruleProblems(of: config, segments: segments, at: pointer(index))
            }
            var names: Set<String> = []
            for (index, config) in next.configs.enumerated() where !names.insert(Feature.nameKey(config.name)).inserted
            {
                issues.append(
                    ConfigIssue(
                        .error, config: config.name, pointer: pointer(index).appending("name"), location: nil,
                        message: "two configs are named \"\(config.name)\" (apps compare names as Swift strings)",
                        fix: "rename one"))
            }
            if !issues.isEmpty { throw ConfigError.refused(path, issues: issues) }
            var changes = ConfigsDiff.changes(from: current, to: next)
            let number = (latest?.number ?? 0) + 1
            guard !changes.isEmpty else {
                return ConfigsOutcome(revision: latest?.number ?? 0, isApplied: false, isUnchanged: true, changes: [])
            }
            // The nulls an earlier version stored leave with this revision, which says so.
            changes += ConfigsDiff.removedNulls(storedWarnings)
            guard !options.isDryRun else {
                return ConfigsOutcome(revision: number, isApplied: false, isUnchanged: false, changes: changes)
            }
            try db.environments.insertRevision(
                number: number, kind: .edit, actor: options.actor,
                message: RevisionMessage(options.message, else: message),
                document: latest.map { Array($0.document) } ?? FeaturesDocument(features: []).rendered(),
                configs: next.isEmpty ? nil : next.rendered(), targeting: latest?.targeting, changes: changes,
                in: scope,
                at: Date())
            return ConfigsOutcome(revision: number, isApplied: true, isUnchanged: false, changes: changes)
        }
    }
}

extension ConfigsDocument {
    /// The configs a revision keeps (`nil`: none), as they are served (`decoding(stored:)`).
    init(stored: Data?) {
        self = Self.decoding(stored: stored).document
    }

    /// The configs a revision keeps, without what no app can take, and the warnings that say what
    /// was (`ConfigsDecoder.decodeStored`). Configs that no longer decode (only damage, or a
    /// value an earlier version let through, explains it) are served as none, and the warnings
    /// hold the error that says so: one environment's damage is its own reported error, never
    /// a failure of every read of it, nor of another environment's.
    static func decoding(stored: Data?) -> (document: ConfigsDocument, warnings: [ConfigIssue]) {
        guard let stored else { return (ConfigsDocument(), []) }
        do {
            return try ConfigsDecoder.decodeStored(Array(stored))
        } catch {
            let reason = error.issues.first.map { ": \($0.message)" } ?? ""
            return (
                ConfigsDocument(),
                [
                    ConfigIssue(
                        .error, config: nil, pointer: .root, location: nil,
                        message:
                            "the configs kept with the current revision do not decode\(reason); every client is served without them",
                        fix:
                            "roll back to a revision whose configs read (flagpole rollback), or import the environment's configs again (flagpole config import)"
                    )
                ]
            )
        }
    }
}

extension Catalog {
    /// The errors of a config's own rules, located in the config at `pointer`.
    fileprivate static func ruleProblems(
        of config: Config, segments: Set<String>, at pointer: JSONPointer
    ) -> [ConfigIssue] {
        config.rules.problems(variations: nil, segments: segments).filter { $0.severity == .error }.map { issue in
            var issue = issue
            issue.config = config.name
            issue.pointer = pointer.appending(issue.pointer)
            return issue
        }
    }
}

extension Config {
    /// The config with `stored`'s declaration, whatever its own: only a declaration import sets one.
    func declared(as stored: Config?) -> Config {
        var config = self
        config.declaration = stored?.declaration
        return config
    }
}

extension Catalog {
    /// The configs dictionary of the current revision for a client that names no user, those
    /// tagged `tag` only when one is given, those `release` declares only when one is named:
    /// flags give the value of their state, tests their default.
    ///
    /// - throws: `DocumentError.noRevision`, `TenancyError.environmentNotFound`,
    ///   `ConfigError.unknownRelease`.
    public func sharedConfigs(
        in path: EnvironmentPath, tag: String? = nil, release: String? = nil
    ) async throws -> UserConfigs {
        let plan = try await store.assignments.currentPlan(of: path)
        return plan.sharedConfigs(tagged: tag, only: try plan.releaseNames(release))
    }
}

/// A revision as a change stream announces it.
public struct RevisionChange: Hashable, Sendable {
    public var revision: Int
    public var createdAt: Date
    /// The revision's features.json, as delivered.
    public var features: [UInt8]
    /// Its configs.json for a client that names no user, as delivered.
    public var configs: [UInt8]
}

extension Catalog {
    /// The environment's revisions after `revision` (all of them when `nil`), oldest first, at
    /// most `limit` of the latest.
    ///
    /// - throws: `TenancyError.environmentNotFound`.
    public func revisionChanges(
        in path: EnvironmentPath, after revision: Int?, limit: Int = 1000
    ) async throws
        -> [RevisionChange]
    {
        let records = try await read { db in
            try db.environments.revisions(after: revision ?? 0, limit: limit, in: try db.environments.scope(of: path))
        }
        return try records.map { record in
            RevisionChange(
                revision: record.number, createdAt: record.createdAt, features: Array(record.document),
                configs: try sharedConfigs(of: record, in: path))
        }
    }

    /// The configs.json a revision delivers to a client that names no user.
    func sharedConfigs(of record: RevisionRecord, in path: EnvironmentPath) throws -> [UInt8] {
        let configs = ConfigsDocument(stored: record.configs)
        // The features decide only the values of configs that follow one; the current
        // revision's are already decoded in its plan, and a large features.json takes a while.
        let plan = store.pinningPlans.plan(for: path)
        let features =
            !configs.configs.contains { $0.follows != nil }
            ? []
            : plan?.revision == record.number && plan?.head.scope.path == path
                ? plan!.document.features : DocumentDecoder.decode(Array(record.document)).document?.features ?? []
        return ConfigsDictionary.rendered(configs.sharedEntries(beside: features))
    }
}
