import FlagpoleCore
import Foundation

/// One user's features.json.
public struct PinnedDocument: Hashable, Sendable {
    /// The revision it renders.
    public var revision: Int
    public var bytes: [UInt8]
    /// The user's group in every test of the document.
    public var assignments: [Assignment]
    /// Whether every group is on record; `false` when a user new to the environment was not
    /// admitted (see `pinnedDocument(for:in:style:admittingNewUser:)`), whose document pins the
    /// groups the store will record for them.
    public var isRecorded: Bool
}

extension Assignments {
    /// The document one user's app should fetch (see `FeaturesDocument.pinned`): every test
    /// pinned to the user's recorded group, every unlock flag in the user's unlock state.
    ///
    /// Apps ask for it far more often than anything else, so it is a read: the user's groups
    /// come from one indexed query on a reader, and the document is filled in outside any
    /// transaction. Only tests that have no group on record for the user go to the writer, which
    /// records them (with their `first` events) in the next group commit and answers once they
    /// are committed. When a revision lands in between, the user is read again under it.
    ///
    /// - parameter admittingNewUser: asked, only for a user with no group on record in the
    ///   environment, whether to record them now. When it says no, nothing is written and the
    ///   document pins the groups their points give, which is what the store records whenever
    ///   it does record them: the app and the store agree either way.
    /// - throws: `DocumentError.noRevision`, `TenancyError.environmentNotFound`, `StorageError.busy`
    ///   when revisions keep landing faster than the user can be read.
    /// - parameter attributes: what the app sent beside the user id (`attr.KEY=VALUE`); `nil`
    ///   when it sent none, and rules read the user's last attributes on record.
    public func pinnedDocument(
        for user: UserID, in path: EnvironmentPath, style: JSONWriter.Style = .pretty,
        attributes: UserAttributes? = nil, admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> PinnedDocument {
        try await userGroups(
            of: user, in: path, for: .app, attributes: attributes, admittingNewUser: admittingNewUser
        ).document(style: style)
    }

    /// One user's configs dictionary (see `UserDocumentRead.configs(tag:)`), recording the user's
    /// first assignments exactly as their pinned document does: the two always agree.
    ///
    /// - throws: as `pinnedDocument(for:in:style:admittingNewUser:)`.
    public func userConfigs(
        for user: UserID, in path: EnvironmentPath, tag: String? = nil, release: String? = nil,
        attributes: UserAttributes? = nil, admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> UserConfigs {
        // An unknown release is refused before the user is recorded.
        let names = try await currentPlan(of: path).releaseNames(release)
        return try await userGroups(
            of: user, in: path, for: .follower, attributes: attributes, admittingNewUser: admittingNewUser
        ).configs(tag: tag, only: names)
    }

    /// The user's group in every test of the current revision as `client` must be answered, what
    /// that needs recorded first (see `pinnedDocument(for:in:style:attributes:admittingNewUser:)`).
    public func userGroups(
        of user: UserID, in path: EnvironmentPath, for client: UserClient, attributes: UserAttributes? = nil,
        admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> UserDocumentRead {
        for _ in 0..<Self.readAttempts {
            let read = try await readUserDocument(for: user, in: path, attributes: attributes)
            if let complete = try await withCheckedThrowingContinuation({ continuation in
                finish(read, for: client, admittingNewUser: admittingNewUser) { continuation.resume(with: $0) }
            }) {
                return complete
            }
        }
        throw StorageError.busy
    }

    /// Reads of a user that a new revision overtook are retried this many times in all.
    static let readAttempts = 5

    /// What is recorded of `user` under the environment's current revision, in one read
    /// transaction; the revision's plan is built first when it is not yet.
    ///
    /// - throws: `DocumentError.noRevision`, `TenancyError.environmentNotFound`.
    func readUserDocument(
        for user: UserID, in path: EnvironmentPath, attributes: UserAttributes? = nil
    ) async throws -> UserDocumentRead {
        // With the plan kept, one statement: the user's snapshot.
        try await read(expectingOneStatement: true) { db in
            if let plan = store.pinningPlans.plan(for: path) {
                let (isCurrent, state) = try db.assignments.userSnapshot(of: user, under: plan)
                if isCurrent { return UserDocumentRead(user: user, plan: plan, state: state, attributes: attributes) }
            }
            let head = try db.environments.head(of: path)
            guard head.revision != nil else { throw DocumentError.noRevision(path) }
            let plan = try currentPlan(in: db, head: head)
            // The same snapshot as the plan's: one read transaction.
            return UserDocumentRead(
                user: user, plan: plan, state: try db.assignments.userSnapshot(of: user, under: plan).state,
                attributes: attributes)
        }
    }

    /// The plan of the revision `head` names, built and kept unless it was already.
    func currentPlan(in db: Transaction, head: EnvironmentHead) throws -> PinningPlan {
        if let plan = store.pinningPlans.plan(for: head.scope.path), plan.head == head { return plan }
        let features = try db.features.storedFeatures(in: head.scope).filter { !$0.isArchived }
        let configs = try head.revision.flatMap { try db.environments.configs(ofRevision: $0, in: head.scope) }
        let targeting = try TargetingDocument(
            stored: try head.revision.flatMap { try db.environments.targeting(ofRevision: $0, in: head.scope) })
        let plan = PinningPlan(
            head: head, document: try db.currentDocument(in: head.scope, features: features), features: features,
            configs: ConfigsDocument(stored: configs), targeting: targeting,
            segments: try targeting.segments.values.map { try Catalog.segment($0, in: head.scope, db: db) })
        store.pinningPlans.keep(plan)
        return plan
    }

    /// The same read, on the caller's thread, for an event loop that answers without handing the
    /// request on: one statement on a reader, which never waits for a writer (WAL) and needs no
    /// transaction around it to read one snapshot. `nil` when the revision's plan is not built
    /// yet (or the environment has no revision), and always on PostgreSQL, whose reads wait for
    /// the network: take the asynchronous way, which builds it.
    ///
    /// - throws: `TenancyError.environmentNotFound`, `StorageError.storage`.
    public func readUserDocumentNow(
        for user: UserID, in path: EnvironmentPath, attributes: UserAttributes? = nil
    ) throws -> UserDocumentRead? {
        guard let plan = store.pinningPlans.plan(for: path) else { return nil }
        return try FeatureStore.translatingErrors {
            try store.backend.readNow { connection -> UserDocumentRead? in
                let (isCurrent, state) = try Transaction(connection).assignments.userSnapshot(of: user, under: plan)
                return isCurrent ? UserDocumentRead(user: user, plan: plan, state: state, attributes: attributes) : nil
            } ?? nil
        }
    }

    /// `read` as `client` must be answered, with what that needs written first (see
    /// `UserDocumentRead.pendingWrite(for:)`), handed to `completion` on the writer's queue once
    /// it is committed, or at once when nothing needs writing. `nil` when a new revision or a
    /// restore overtook the read: read again.
    public func finish(
        _ read: UserDocumentRead, for client: UserClient, admittingNewUser: @Sendable () -> Bool,
        completion: @escaping @Sendable (Result<UserDocumentRead?, any Error>) -> Void
    ) {
        finish(read, write: read.pendingWrite(for: client), admittingNewUser: admittingNewUser, completion: completion)
    }

    /// `read` with `write` done first; see `finish(_:for:admittingNewUser:completion:)`.
    func finish(
        _ read: UserDocumentRead, write: UserWrite, admittingNewUser: @Sendable () -> Bool,
        completion: @escaping @Sendable (Result<UserDocumentRead?, any Error>) -> Void
    ) {
        guard !write.isEmpty else { return completion(.success(read)) }
        // A user with no group on record in the environment is new to it: the caller may refuse them.
        if read.state.assignments.isEmpty && !admittingNewUser() {
            var unadmitted = read.adding(
                write.firsts.reduce(into: [:]) { assignments, test in
                    assignments[test.featureID] = test.firstAssignment(
                        of: read.context, segments: read.plan.segments, revision: read.plan.revision,
                        isPinned: write.client == .app)
                })
            unadmitted.isRecorded = false
            return completion(.success(unadmitted))
        }
        record(write, of: read) { result in
            completion(
                Result {
                    try result.get().map { read.adding($0, keeping: write.keepsAttributes ? read.attributes : nil) }
                }.mapError { StorageError(translating: $0) ?? $0 })
        }
    }

    /// Does `write` for the user of `read` in the next group commit, and hands `completion` the
    /// groups it recorded or changed once that is committed (a first assignment another request
    /// or process recorded first comes back as theirs). `nil` when the environment moved on
    /// from the read's revision (a new revision, a restore) before the write.
    func record(
        _ write: UserWrite, of read: UserDocumentRead,
        completion: @escaping @Sendable (Result<[Int64: RecordedAssignment]?, any Error>) -> Void
    ) {
        let (user, plan, context, attributes) = (read.user, read.plan, read.context, read.attributes)
        let firsts = write.firsts.map { test in
            PendingFirst(
                head: plan.head, featureID: test.featureID, user: user,
                assignment: test.firstAssignment(
                    of: context, segments: plan.segments, revision: plan.revision, isPinned: write.client == .app))
        }
        store.groupCommit.write(
            prerecording: firsts,
            { db in
                guard try db.environments.isCurrent(plan.head) else { return nil }
                let now = Date()
                let writer = db.assignments.writer(in: plan.head.scope, revision: plan.revision, now: now)
                var recorded: [Int64: RecordedAssignment] = [:]
                for first in firsts {
                    recorded[first.featureID] = try writer.recordFirst(
                        first.assignment, of: user, featureID: first.featureID
                    ).assignment
                }
                // Read again here: another request may have moved or pinned the user meanwhile.
                for test in write.redecided {
                    let point = test.points.point(for: user.rawValue)
                    guard var current = try writer.recorded(user, featureID: test.featureID, point: point),
                        !current.isOverride, !current.isPinned
                    else { continue }
                    let decision = test.decision(for: context, segments: plan.segments)
                    try writer.redecide(current, of: user, featureID: test.featureID, to: decision, reason: .attributes)
                    (current.variation, current.rule, current.revision) = (
                        decision.variation, decision.rule, plan.revision
                    )
                    recorded[test.featureID] = current
                }
                // A first group another request recorded first may not be pinned yet either.
                for test in write.pins + (write.client == .app ? write.firsts : []) {
                    let point = test.points.point(for: user.rawValue)
                    guard
                        var current = try recorded[test.featureID]
                            ?? writer.recorded(user, featureID: test.featureID, point: point),
                        !current.isPinned
                    else { continue }
                    let appPoint = test.displacedPoint(of: current)
                    try writer.pin(current, of: user, featureID: test.featureID, appPoint: appPoint)
                    current.pin(appPoint: appPoint)
                    recorded[test.featureID] = current
                }
                if write.keepsAttributes, let attributes {
                    try db.userAttributes.keep(
                        attributes, of: user, in: plan.head.scope, hour: KeptAttributes.hour(of: now))
                }
                return recorded
            }, completion: completion)
    }
}

/// Which client a user's read answers, which decides what is written before the answer.
public enum UserClient: Sendable {
    /// A FeatureFlags app fetching its pinned features.json: it keeps the points it is given
    /// for good, so its groups are marked as kept (pinned) by an app.
    case app
    /// A client that asks every time and so follows rules: configs.json, OFREP.
    case follower
}

/// What must be written before a user's read can answer a client.
struct UserWrite: Sendable {
    var client: UserClient
    /// Tests the user has no group in yet.
    var firsts: [PinningPlan.Test] = []
    /// Tests whose rules decide otherwise under the attributes just sent.
    var redecided: [PinningPlan.Test] = []
    /// Tests whose group goes to a FeatureFlags app for the first time.
    var pins: [PinningPlan.Test] = []
    /// Whether the attributes sent are to be kept as the user's last.
    var keepsAttributes = false

    var isEmpty: Bool { firsts.isEmpty && redecided.isEmpty && pins.isEmpty && !keepsAttributes }
}

/// A user's groups and unlock states read under one revision, and that revision's plan: all a
/// pinned document, a configs dictionary or an evaluation needs, but the first assignments it may
/// still lack.
public struct UserDocumentRead: Sendable {
    let user: UserID
    let plan: PinningPlan
    var state: UserState
    /// The attributes the request sent; `nil` when it sent none.
    let attributes: UserAttributes?
    /// What rules read: the attributes sent, else the user's last on record.
    let context: EvaluationContext
    /// `false` when the groups of a user new to the environment are those the store would record,
    /// but did not (see `pinnedDocument(for:in:style:attributes:admittingNewUser:)`).
    public internal(set) var isRecorded = true

    init(user: UserID, plan: PinningPlan, state: UserState, attributes: UserAttributes? = nil) {
        self.user = user
        self.plan = plan
        self.state = state
        self.attributes = attributes
        let effective = attributes ?? (plan.isTargeted ? state.attributes?.decoded : nil)
        context = EvaluationContext(user: user, attributes: effective?.values ?? [:])
    }

    /// The revision read.
    public var revision: Int { plan.revision }

    /// What must be written before `client` can be answered: first groups in `tests` (every
    /// test, by default), the groups rules decide otherwise under the attributes just sent, the
    /// groups going to a FeatureFlags app for the first time, and the attributes when they are
    /// new or were last noted on an earlier day. Nothing, for a recorded user whose app sends
    /// what it sent before: reads stay reads.
    func pendingWrite(for client: UserClient, tests: [PinningPlan.Test]? = nil) -> UserWrite {
        var write = UserWrite(client: client)
        write.firsts = (tests ?? plan.tests).filter { state.assignments[$0.featureID] == nil }
        if let attributes, attributes.isKept {
            let isNew = attributes.fingerprint != state.attributes?.fingerprint
            write.keepsAttributes = isNew || state.attributes!.isStale(now: KeptAttributes.hour(of: Date()))
            if isNew {
                write.redecided = plan.tests.filter { test in
                    guard !test.rules.isEmpty, let recorded = state.assignments[test.featureID], !recorded.isOverride,
                        !recorded.isPinned
                    else { return false }
                    return test.decision(for: context, segments: plan.segments)
                        != PinningPlan.Decision(variation: recorded.variation, rule: recorded.rule)
                }
            }
        }
        if client == .app {
            write.pins = plan.tests.filter { state.assignments[$0.featureID].map { !$0.isPinned } ?? false }
        }
        return write
    }

    /// Whether `client` can be answered without writing anything first.
    public func isComplete(for client: UserClient) -> Bool { pendingWrite(for: client).isEmpty }

    /// The read with `added` groups beside (or over) the recorded ones, and `attributes` kept.
    func adding(_ added: [Int64: RecordedAssignment], keeping attributes: UserAttributes? = nil) -> UserDocumentRead {
        var read = self
        read.state.assignments.merge(added) { _, new in new }
        if let attributes {
            read.state.attributes = KeptAttributes(
                fingerprint: attributes.fingerprint, hour: KeptAttributes.hour(of: Date()),
                json: String(decoding: attributes.canonicalBytes, as: UTF8.self))
        }
        return read
    }

    /// The document, which needs a group in every test.
    public func document(style: JSONWriter.Style = .pretty) -> PinnedDocument {
        let assignments = state.assignments
        return PinnedDocument(
            revision: plan.revision, bytes: plan.render(assignments: assignments, unlocks: state.unlocks, style: style),
            assignments: plan.tests.map { test in
                let assignment = assignments[test.featureID]!
                return Assignment(
                    user: user, feature: test.name, variation: assignment.variation, point: assignment.point,
                    revision: assignment.revision, isOverride: assignment.isOverride)
            }, isRecorded: isRecorded)
    }

    /// The user's configs dictionary, those tagged `tag` only when one is given, and those named
    /// in `names` (a release's: `PinningPlan.releaseNames`) only when given; needs a group in
    /// every test the configs follow.
    public func configs(tag: String? = nil, only names: Set<String>? = nil) -> UserConfigs {
        UserConfigs(
            revision: plan.revision,
            entries: plan.configs(tagged: tag, only: names).map { planned in
                (
                    planned.config.name,
                    planned.value(
                        for: planned.featureIndex.map { evaluation(of: plan.features[$0]) }, context: context,
                        segments: plan.segments)
                )
            }, isRecorded: isRecorded)
    }
}

/// One user's configs dictionary (or a client's that names no user): what SwiftFeatureConfigs'
/// `loadInMemoryFeatures` takes.
public struct UserConfigs: Sendable {
    public var revision: Int
    /// Each config's value, in the configs' order.
    public var entries: [(key: String, value: ConfigValue)]
    /// See `PinnedDocument.isRecorded`; `true` when no user is named.
    public var isRecorded: Bool

    /// The dictionary as JSON, the body of configs.json.
    public var bytes: [UInt8] { ConfigsDictionary.rendered(entries) }
}

/// What the store has recorded of one user in one environment.
struct UserState: Sendable {
    /// The user's groups, by feature id.
    var assignments: [Int64: RecordedAssignment] = [:]
    /// The user's unlock states, by feature id.
    var unlocks: [Int64: Bool] = [:]
    /// The user's last attributes, when kept.
    var attributes: KeptAttributes?
}
