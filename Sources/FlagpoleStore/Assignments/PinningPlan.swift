import FlagpoleCore
import Synchronization

/// An environment's current revision, ready to pin for any user: its tests with what puts a user
/// in a group, its unlock flags, and the document rendered with holes for a user's values.
///
/// Built once per revision and shared by every request for it, so a user's own document costs
/// one indexed read and the filling of the template.
struct PinningPlan: Sendable {
    /// One bucketed test of the document.
    struct Test: Sendable {
        let featureID: Int64
        /// Its index in the document's features.
        let index: Int
        let name: String
        let points: UserPoints
        /// The groups users are recorded in when no rule decides.
        let ranges: VariationRanges
        /// The ranges the app uses: an override's or a rule's point is moved inside its variation's.
        let clientRanges: VariationRanges
        /// The feature's rules while it is enabled (a disabled test shows everyone `Disabled`).
        let rules: [TargetingRule]

        /// The group of a user not under an override, as the store records it for a client that
        /// follows rules: the first rule that matches `context` decides, else the user's point.
        func decision(for context: EvaluationContext, segments: SegmentLookup) -> Decision {
            decision(for: context, point: points.point(for: context.user.rawValue), segments: segments)
        }

        /// The same, for a user whose point is known (read with their group).
        func decision(for context: EvaluationContext, point: Double, segments: SegmentLookup) -> Decision {
            if !rules.isEmpty, let match = rules.firstMatch(context, point: point, segments: segments),
                let variation = match.variation
            {
                return Decision(variation: variation, rule: match.rule.id)
            }
            return Decision(variation: ranges.variation(at: point)!, rule: nil)
        }

        /// The group of a user the store has not recorded yet, under `revision`; `isPinned` when
        /// it goes to a FeatureFlags app, which keeps the point it is given.
        func firstAssignment(
            of context: EvaluationContext, segments: SegmentLookup, revision: Int, isPinned: Bool
        ) -> RecordedAssignment {
            let decision = decision(for: context, segments: segments)
            var assignment = RecordedAssignment(
                point: points.point(for: context.user.rawValue), variation: decision.variation, isOverride: false,
                revision: revision, rule: decision.rule, isPinned: false)
            if isPinned { assignment.pin(appPoint: displacedPoint(of: assignment)) }
            return assignment
        }

        /// The point to pin for a user in `assignment`.
        func pinnedPoint(of assignment: RecordedAssignment) -> Double {
            if let appPoint = assignment.appPoint { return appPoint }
            guard assignment.isOverride || assignment.rule != nil else { return assignment.point }
            return clientRanges.point(in: assignment.variation, preferring: assignment.point) ?? assignment.point
        }

        /// The point an app must keep to show a rule's group when the user's own point lies
        /// outside it; `nil` when the user's own point shows it.
        func displacedPoint(of assignment: RecordedAssignment) -> Double? {
            guard !assignment.isOverride, assignment.rule != nil else { return nil }
            let point = pinnedPoint(of: assignment)
            return point == assignment.point ? nil : point
        }
    }

    /// What decides a user's group: a variation, and the rule that chose it (`nil`: the point did).
    struct Decision: Hashable, Sendable {
        var variation: String
        var rule: String?
    }

    let head: EnvironmentHead
    let document: FeaturesDocument
    /// The document's features as stored, in order, archived ones left out.
    let features: [StoredFeature]
    let tests: [Test]
    /// `nil` in the theoretical case of a document the template can't hold (see
    /// `PinnedDocumentTemplate.init`): such a document is rendered whole.
    let template: PinnedDocumentTemplate?
    /// The index in the document of each unlock flag, by feature id.
    let unlockFlagIndexes: [Int64: Int]
    /// The revision's configs, each with the feature it follows.
    let configs: [PlannedConfig]
    /// The revision's configs and feature tags.
    let configsDocument: ConfigsDocument
    /// The revision's segments, which rules name.
    let segments: SegmentLookup
    /// The index in `tests` of each test, by feature id.
    let testIndexes: [Int64: Int]

    /// Whether any test has rules: only then do users' attributes decide anything.
    var isTargeted: Bool { tests.contains { !$0.rules.isEmpty } }

    var revision: Int { head.revision ?? 0 }

    var hasUnlockFlags: Bool { !unlockFlagIndexes.isEmpty }

    init(
        head: EnvironmentHead, document: FeaturesDocument, features: [StoredFeature], configs: ConfigsDocument,
        targeting: TargetingDocument = TargetingDocument(), segments: [Segment] = []
    ) {
        self.head = head
        self.document = document
        self.features = features
        tests = features.enumerated().compactMap { index, stored in
            Test(
                featureID: stored.id, index: index, feature: stored.feature, salt: stored.salt,
                rules: targeting.rules(of: stored.feature.name) ?? [])
        }
        testIndexes = Dictionary(uniqueKeysWithValues: tests.enumerated().map { ($0.element.featureID, $0.offset) })
        self.segments = SegmentLookup(segments)
        template = PinnedDocumentTemplate(document)
        unlockFlagIndexes = Dictionary(
            uniqueKeysWithValues: features.enumerated().filter { $0.element.feature.kind == .unlockFlag }.map {
                ($0.element.id, $0.offset)
            })
        let indexByKey = Dictionary(
            features.enumerated().map { (Feature.nameKey($0.element.feature.name), $0.offset) },
            uniquingKeysWith: { first, _ in first })
        configsDocument = configs
        self.configs = configs.configs.map { config in
            let index = config.follows.flatMap { indexByKey[Feature.nameKey($0)] }
            return PlannedConfig(config: config, featureIndex: index)
        }
    }

    /// The test of a feature, when it is one.
    func test(featureID: Int64) -> Test? {
        testIndexes[featureID].map { tests[$0] }
    }

    /// The configs tagged `tag`, or all of them; of those, only the ones named in `names` (as
    /// apps compare names: `releaseNames(_:)`) when given.
    func configs(tagged tag: String?, only names: Set<String>? = nil) -> [PlannedConfig] {
        configs.filter { planned in
            (tag.map(planned.config.tags.contains) ?? true)
                && (names?.contains(Feature.nameKey(planned.config.name)) ?? true)
        }
    }

    /// The configs dictionary of a client that names no user: tests give their default.
    func sharedConfigs(tagged tag: String?, only names: Set<String>? = nil) -> UserConfigs {
        UserConfigs(
            revision: revision,
            entries: configsDocument.sharedEntries(beside: document.features, tagged: tag).filter {
                names?.contains(Feature.nameKey($0.key)) ?? true
            }, isRecorded: true)
    }

    /// The names (as apps compare them) of the configs `release` declares; `nil` for no release.
    ///
    /// - throws: `ConfigError.unknownRelease`.
    func releaseNames(_ release: String?) throws -> Set<String>? {
        guard let release else { return nil }
        guard let names = configsDocument.releases[release] else {
            throw ConfigError.unknownRelease(
                head.scope.path, release: release, known: configsDocument.releases.keys.sorted())
        }
        return Set(names.map(Feature.nameKey))
    }

    /// The user's document: every test pinned to `assignments` (by feature id, one for every
    /// test), every unlock flag in the user's state from `unlocks` or else its default.
    func render(assignments: [Int64: RecordedAssignment], unlocks: [Int64: Bool], style: JSONWriter.Style) -> [UInt8] {
        var points: [Int: Double] = [:]
        for test in tests {
            points[test.index] = assignments[test.featureID].map(test.pinnedPoint(of:))
        }
        var unlockedByIndex: [Int: Bool] = [:]
        for (featureID, isUnlocked) in unlocks {
            if let index = unlockFlagIndexes[featureID] { unlockedByIndex[index] = isUnlocked }
        }
        if case .pretty(indent: 4) = style, let template {
            return template.rendered(point: { points[$0]! }, unlocked: { unlockedByIndex[$0] })
        }
        return document.pinned(
            points: Dictionary(uniqueKeysWithValues: points.map { (document.features[$0.key].name, $0.value) }),
            unlocks: Dictionary(
                uniqueKeysWithValues: unlockedByIndex.map { (document.features[$0.key].name, $0.value) })
        ).rendered(style)
    }
}

extension PinningPlan.Test {
    /// The test of `feature` at `index` in its document; `nil` for a feature that is no test.
    init?(featureID: Int64, index: Int, feature: Feature, salt: String, rules: [TargetingRule]) {
        guard feature.isBucketed else { return nil }
        self.init(
            featureID: featureID, index: index, name: feature.name, points: UserPoints(salt: salt),
            ranges: feature.assignmentRanges, clientRanges: VariationRanges(of: feature),
            rules: feature.isEnabled ? rules : [])
    }
}

/// A config of a plan with the feature it follows.
struct PlannedConfig: Sendable {
    let config: Config
    /// The index of the followed feature in the plan's features; `nil` when it follows none, or
    /// one the document no longer has (it then gives its default).
    let featureIndex: Int?

    /// The value for a user whose app shows `evaluation` of the followed feature: the config's
    /// own rules decide first (for a named user), then the followed feature, then the default.
    func value(for evaluation: Evaluation?, context: EvaluationContext?, segments: SegmentLookup) -> ConfigValue {
        if let context, let decided = config.ruleValue(for: context, segments: segments) { return decided.value }
        return config.value(for: evaluation?.variation).value
    }

}

/// A user's group in one test, as recorded (or about to be).
struct RecordedAssignment: Hashable, Sendable {
    var point: Double
    var variation: String
    var isOverride: Bool
    /// The revision the group was computed under.
    var revision: Int
    /// The rule that decided the group; `nil` when the point (or an override) did.
    var rule: String? = nil
    /// Whether a FeatureFlags app was given the group: it keeps its point, so rules no longer
    /// move it (see migration 0010).
    var isPinned: Bool = true
    /// The point the app was given when it is not `point`.
    var appPoint: Double? = nil

    /// The group as a FeatureFlags app now keeps it.
    mutating func pin(appPoint: Double?) {
        isPinned = true
        self.appPoint = appPoint
    }
}

/// What identifies an environment's current state, read in one statement: where it is, its
/// latest revision, and the store generation (which a restore changes).
struct EnvironmentHead: Equatable, Sendable {
    let scope: EnvironmentScope
    let revision: Int?
    let generation: Int64

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scope.id == rhs.scope.id && lhs.scope.tenant.id == rhs.scope.tenant.id
            && lhs.scope.featuresPosition == rhs.scope.featuresPosition && lhs.revision == rhs.revision
            && lhs.generation == rhs.generation
    }
}

/// The plan of each environment's current revision, built on first use. A new revision or a
/// restore (another generation) replaces it.
final class PinningPlans: Sendable {
    private let plans = Mutex<[EnvironmentPath: PinningPlan]>([:])

    /// The last plan built for the environment at `path`: check its head before using it.
    func plan(for path: EnvironmentPath) -> PinningPlan? {
        plans.withLock { $0[path] }
    }

    func keep(_ plan: PinningPlan) {
        plans.withLock { plans in
            let path = plan.head.scope.path
            // Reads finish out of order: never put back a plan older than the one kept.
            if let kept = plans[path], kept.head.generation == plan.head.generation,
                kept.head.scope.id == plan.head.scope.id,
                (kept.head.revision ?? 0) > (plan.head.revision ?? 0)
            {
                return
            }
            plans[path] = plan
        }
    }
}
