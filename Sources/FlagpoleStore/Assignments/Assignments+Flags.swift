import FlagpoleCore
import Foundation

/// Who a flag is evaluated for.
public struct FlagContext: Hashable, Sendable {
    /// OpenFeature's `targetingKey`; `nil` evaluates only what needs no user.
    public var user: UserID?
    /// `"development": true` in the context: development flags are on, as in a debug build.
    public var isDevelopment: Bool
    /// The context's other members, which rules read; `nil` when it has none (rules then read
    /// the user's last attributes on record).
    public var attributes: UserAttributes?

    public init(user: UserID?, isDevelopment: Bool = false, attributes: UserAttributes? = nil) {
        self.user = user
        self.isDevelopment = isDevelopment
        self.attributes = attributes
    }
}

extension Assignments {
    /// One flag, a feature or a config named `key` (a config first when both have the name),
    /// for `context`. A user's first assignment to the test the flag is (or follows) is recorded
    /// first, exactly as their pinned document records it.
    ///
    /// - parameter admittingNewUser: as for `pinnedDocument(for:in:style:admittingNewUser:)`; a
    ///   refused new user throws `FlagRefusal.newUserLimited` (nothing is recorded).
    /// - throws: `FlagProblem`, `DocumentError.noRevision`, `TenancyError.environmentNotFound`.
    public func evaluateFlag(
        _ key: String, for context: FlagContext, in path: EnvironmentPath,
        admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> FlagEvaluation {
        let keyForm = Feature.nameKey(key)
        let read = try await flagRead(for: context, in: path, admittingNewUser: admittingNewUser) { plan in
            guard let index = plan.flagIndex(of: keyForm) else { return [] }
            return plan.tests(of: index)
        }
        return try read.flag(key, for: context)!.get()
    }

    /// Every flag (those tagged `tag`, when one is given) for `context`; a user's first
    /// assignments to every test are recorded first, as by their pinned document.
    ///
    /// - throws: `FlagRefusal.newUserLimited`, `DocumentError.noRevision`, `TenancyError.environmentNotFound`.
    public func evaluateFlags(
        for context: FlagContext, tag: String? = nil, in path: EnvironmentPath,
        admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> FlagEvaluations {
        let read = try await flagRead(for: context, in: path, admittingNewUser: admittingNewUser) { $0.tests }
        return read.flags(for: context, tagged: tag)!
    }

    /// The user's read under the current revision with a group in each test `needed` names,
    /// those not yet on record recorded first; without a user, the plan alone.
    private func flagRead(
        for context: FlagContext, in path: EnvironmentPath, admittingNewUser: @escaping @Sendable () -> Bool,
        needed: @escaping @Sendable (PinningPlan) -> [PinningPlan.Test]
    ) async throws -> UserDocumentRead {
        guard let user = context.user else {
            // Nobody's state: `flag(at:for:)` evaluates only what needs no user for such a context.
            return UserDocumentRead(
                user: UserID(rawValue: ""), plan: try await currentPlan(of: path), state: UserState())
        }
        for _ in 0..<Self.readAttempts {
            let read = try await readUserDocument(for: user, in: path, attributes: context.attributes)
            let write = read.pendingWrite(for: .follower, tests: needed(read.plan))
            guard !write.isEmpty else { return read }
            if read.state.assignments.isEmpty && !admittingNewUser() {
                // Attributes alone are not worth refusing an answer for: they are not kept.
                guard !write.firsts.isEmpty else { return read }
                throw FlagRefusal.newUserLimited
            }
            let finished = try await withCheckedThrowingContinuation { continuation in
                finish(read, write: write, admittingNewUser: { true }) { continuation.resume(with: $0) }
            }
            if let finished { return finished }
        }
        throw StorageError.busy
    }

    /// The plan of the environment's current revision.
    ///
    /// - throws: `DocumentError.noRevision`, `TenancyError.environmentNotFound`.
    func currentPlan(of path: EnvironmentPath) async throws -> PinningPlan {
        try await read { db in
            let head = try db.environments.head(of: path)
            guard head.revision != nil else { throw DocumentError.noRevision(path) }
            return try currentPlan(in: db, head: head)
        }
    }
}

/// Why a flag evaluation was refused before anything was evaluated.
public enum FlagRefusal: Error, Hashable, Sendable {
    /// The user is new to the store and their client is over its limit of new users.
    case newUserLimited
}

extension PinningPlan {
    /// Flags are the document's features, then the configs; a config shadows a feature of its name.
    func flagIndex(of key: String) -> FlagIndex? {
        if let config = configs.firstIndex(where: { Feature.nameKey($0.config.name) == key }) { return .config(config) }
        return features.firstIndex { Feature.nameKey($0.feature.name) == key }.map(FlagIndex.feature)
    }

    /// Every flag, in order, those tagged `tag` only when one is given.
    func flagIndexes(tagged tag: String?) -> [FlagIndex] {
        let configKeys = Set(configs.map { Feature.nameKey($0.config.name) })
        let features = features.indices.filter { index in
            !configKeys.contains(Feature.nameKey(self.features[index].feature.name))
                && (tag.map { configsDocument.tags(of: self.features[index].feature).contains($0) } ?? true)
        }
        let configIndexes = configs.indices.filter { tag.map(configs[$0].config.tags.contains) ?? true }
        return features.map(FlagIndex.feature) + configIndexes.map(FlagIndex.config)
    }

    /// The tests a flag needs a group in: the feature itself, or the one a config follows.
    func tests(of index: FlagIndex) -> [Test] {
        let featureIndex: Int? =
            switch index {
            case .feature(let feature): feature
            case .config(let config): configs[config].featureIndex
            }
        guard let featureIndex else { return [] }
        let id = features[featureIndex].id
        return tests.filter { $0.featureID == id }
    }
}

/// Where a flag is in a plan.
enum FlagIndex: Hashable {
    case feature(Int)
    case config(Int)
}

extension UserDocumentRead {
    /// The flag named `key` for `context`, which names this read's user (or none); `nil` when
    /// the user has no group on record in the test it needs (a write is due first).
    public func flag(_ key: String, for context: FlagContext) -> Result<FlagEvaluation, FlagProblem>? {
        guard let index = plan.flagIndex(of: Feature.nameKey(key)) else { return .failure(.notFound(key: key)) }
        if context.user != nil && !pendingWrite(for: .follower, tests: plan.tests(of: index)).isEmpty { return nil }
        return flag(at: index, for: context)
    }

    /// Every flag (those tagged `tag`, when one is given) for `context`; `nil` when the user
    /// lacks a group on record in some test (a write is due first). A read of a new user not
    /// admitted (`isRecorded` false) evaluates the groups the store would record.
    public func flags(for context: FlagContext, tagged tag: String?) -> FlagEvaluations? {
        guard context.user == nil || !isRecorded || isComplete(for: .follower) else { return nil }
        return FlagEvaluations(
            revision: plan.revision, flags: plan.flagIndexes(tagged: tag).map { flag(at: $0, for: context) })
    }

    /// The flag at `index` for `context`, which names this read's user (or none).
    func flag(at index: FlagIndex, for context: FlagContext) -> Result<FlagEvaluation, FlagProblem> {
        switch index {
        case .feature(let featureIndex):
            let stored = plan.features[featureIndex]
            guard let evaluation = featureEvaluation(featureIndex, for: context) else {
                return .failure(.targetingKeyMissing(key: stored.feature.name))
            }
            return .success(Self.flag(stored.feature, evaluation, context: context, revision: plan.revision))
        case .config(let configIndex):
            let planned = plan.configs[configIndex]
            if context.user != nil, let decided = planned.config.ruleValue(for: self.context, segments: plan.segments) {
                return .success(
                    FlagEvaluation(
                        key: planned.config.name, value: decided.value, variant: decided.rule, reason: .targetingMatch,
                        revision: plan.revision, kind: "config", label: nil, rule: decided.rule))
            }
            var evaluation: Evaluation?
            if let featureIndex = planned.featureIndex {
                evaluation = featureEvaluation(featureIndex, for: context)
                if evaluation == nil { return .failure(.targetingKeyMissing(key: planned.config.name)) }
            }
            let (value, variant) = planned.config.value(for: evaluation?.variation)
            return .success(
                FlagEvaluation(
                    key: planned.config.name, value: value, variant: variant ?? "default",
                    reason: variant != nil && evaluation != nil ? Self.reason(of: evaluation!) : .static,
                    revision: plan.revision, kind: "config", label: nil, rule: variant != nil ? evaluation?.rule : nil))
        }
    }

    /// What the feature shows this read's user; `nil` for a test that splits users when the
    /// context names none.
    private func featureEvaluation(_ index: Int, for context: FlagContext) -> Evaluation? {
        let stored = plan.features[index]
        guard context.user != nil || stored.feature.sharedVariation != nil else { return nil }
        return evaluation(of: stored)
    }

    private static func flag(
        _ feature: Feature, _ evaluation: Evaluation, context: FlagContext, revision: Int
    )
        -> FlagEvaluation
    {
        var variant = evaluation.variation
        var reason = reason(of: evaluation)
        let value: ConfigValue
        switch evaluation.kind {
        case .unlockFlag:
            value = .bool(variant == "Unlocked")
            reason = evaluation.isRecorded ? .targetingMatch : .static
        case .developmentFlag:
            let isOn = feature.isEnabled && context.isDevelopment
            value = .bool(isOn)
            variant = isOn ? "Enabled" : "Disabled"
            reason = isOn ? .static : .disabled
        case .flag, .onOffABTest:
            value = .bool(variant == "Enabled")
        case .abTest, .mvtTest:
            value = .string(variant)
        }
        let labelIndex = feature.effectiveVariations.firstIndex(of: variant)
        let label = labelIndex.flatMap { feature.labels?.indices.contains($0) == true ? feature.labels?[$0] : nil }
        return FlagEvaluation(
            key: feature.name, value: value, variant: variant, reason: reason, revision: revision,
            kind: evaluation.kind.rawValue, label: feature.isBucketed ? label : nil, rule: evaluation.rule,
            firstRule: evaluation.firstRule)
    }

    private static func reason(of evaluation: Evaluation) -> FlagEvaluation.Reason {
        switch evaluation.reason {
        case .disabled: .disabled
        case .flag: .static
        case .bucket: .split
        case .override, .unlock, .rule: .targetingMatch
        }
    }
}
