import FlagpoleCore
import Foundation
import GRDB

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

extension FeatureStore {
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
    public func pinnedDocument(
        for user: UserID, in path: EnvironmentPath, style: JSONWriter.Style = .pretty,
        admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> PinnedDocument {
        try await userGroups(of: user, in: path, admittingNewUser: admittingNewUser).document(style: style)
    }

    /// One user's configs dictionary (see `UserDocumentRead.configs(tag:)`), recording the user's
    /// first assignments exactly as their pinned document does: the two always agree.
    ///
    /// - throws: as `pinnedDocument(for:in:style:admittingNewUser:)`.
    public func userConfigs(
        for user: UserID, in path: EnvironmentPath, tag: String? = nil,
        admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> UserConfigs {
        try await userGroups(of: user, in: path, admittingNewUser: admittingNewUser).configs(tag: tag)
    }

    /// The user's group in every test of the current revision, the missing ones recorded first
    /// (see `pinnedDocument(for:in:style:admittingNewUser:)`).
    public func userGroups(
        of user: UserID, in path: EnvironmentPath, admittingNewUser: @escaping @Sendable () -> Bool = { true }
    ) async throws -> UserDocumentRead {
        for _ in 0..<Self.readAttempts {
            let read = try await readUserDocument(for: user, in: path)
            if let complete = try await withCheckedThrowingContinuation({ continuation in
                finish(read, admittingNewUser: admittingNewUser) { continuation.resume(with: $0) }
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
    func readUserDocument(for user: UserID, in path: EnvironmentPath) async throws -> UserDocumentRead {
        try await read { db in
            if let plan = pinningPlans.plan(for: path) {
                let (isCurrent, state) = try db.assignments.userSnapshot(of: user, under: plan)
                if isCurrent { return UserDocumentRead(user: user, plan: plan, state: state) }
            }
            let head = try db.environments.head(of: path)
            guard head.revision != nil else { throw DocumentError.noRevision(path) }
            let plan = try currentPlan(in: db, head: head)
            // The same snapshot as the plan's: one read transaction.
            return UserDocumentRead(
                user: user, plan: plan, state: try db.assignments.userSnapshot(of: user, under: plan).state)
        }
    }

    /// The plan of the revision `head` names, built and kept unless it was already.
    func currentPlan(in db: Database, head: EnvironmentHead) throws -> PinningPlan {
        if let plan = pinningPlans.plan(for: head.scope.path), plan.head == head { return plan }
        let features = try db.features.storedFeatures(in: head.scope).filter { !$0.isArchived }
        let configs = try head.revision.flatMap { try db.environments.configs(ofRevision: $0, in: head.scope) }
        let plan = PinningPlan(
            head: head, document: try db.currentDocument(in: head.scope, features: features), features: features,
            configs: try ConfigsDocument(stored: configs))
        pinningPlans.keep(plan)
        return plan
    }

    /// The same read, on the caller's thread, for an event loop that answers without handing the
    /// request on: one statement on a reader, which never waits for a writer (WAL) and needs no
    /// transaction around it to read one snapshot. `nil` when the revision's plan is not built
    /// yet (or the environment has no revision): take the asynchronous way, which builds it.
    ///
    /// - throws: `TenancyError.environmentNotFound`, `StorageError.storage`.
    public func readUserDocumentNow(for user: UserID, in path: EnvironmentPath) throws -> UserDocumentRead? {
        try Self.translatingErrors {
            try writer.unsafeRead { db in
                guard let plan = pinningPlans.plan(for: path) else { return nil }
                let (isCurrent, state) = try db.assignments.userSnapshot(of: user, under: plan)
                return isCurrent ? UserDocumentRead(user: user, plan: plan, state: state) : nil
            }
        }
    }

    /// `read` with a group in every test, recording the first assignments it lacks first (see
    /// `pinnedDocument(for:in:style:admittingNewUser:)`), handed to `completion` on the writer's
    /// queue once they are committed, or at once when nothing needs writing. `nil` when a new
    /// revision or a restore overtook the read: read again.
    public func finish(
        _ read: UserDocumentRead, admittingNewUser: @Sendable () -> Bool,
        completion: @escaping @Sendable (Result<UserDocumentRead?, any Error>) -> Void
    ) {
        let unrecorded = read.unrecorded
        guard !unrecorded.isEmpty else { return completion(.success(read)) }
        // A user with no group on record in the environment is new to it: the caller may refuse them.
        if read.state.assignments.isEmpty && !admittingNewUser() {
            var unadmitted = read.adding(
                unrecorded.reduce(into: [:]) { assignments, test in
                    assignments[test.featureID] = test.firstAssignment(of: read.user, revision: read.plan.revision)
                })
            unadmitted.isRecorded = false
            return completion(.success(unadmitted))
        }
        recordFirstAssignments(of: read.user, in: unrecorded, under: read.plan.head) { result in
            completion(
                Result {
                    try result.get().map { read.adding($0) }
                }.mapError { ($0 as? DatabaseError).map(StorageError.init) ?? $0 })
        }
    }

    /// Records `user`'s first assignment to each of `tests` under the environment state `head`
    /// in the next group commit, and hands `completion` what is recorded once it is committed:
    /// the group just computed, or the one another request or process recorded first. `nil`
    /// when the environment moved on from `head` (a new revision, a restore) before the write.
    func recordFirstAssignments(
        of user: UserID, in tests: [PinningPlan.Test], under head: EnvironmentHead,
        completion: @escaping @Sendable (Result<[Int64: RecordedAssignment]?, any Error>) -> Void
    ) {
        let proposed = tests.map {
            (featureID: $0.featureID, assignment: $0.firstAssignment(of: user, revision: head.revision!))
        }
        groupCommit.write(
            { db in
                guard try db.environments.isCurrent(head) else { return nil }
                let writer = db.assignments.writer(in: head.scope, revision: head.revision!, now: Date())
                var recorded: [Int64: RecordedAssignment] = [:]
                for (featureID, assignment) in proposed {
                    recorded[featureID] = try writer.recordFirst(assignment, of: user, featureID: featureID).assignment
                }
                return recorded
            }, completion: completion)
    }
}

/// A user's groups and unlock states read under one revision, and that revision's plan: all a
/// pinned document, a configs dictionary or an evaluation needs, but the first assignments it may
/// still lack.
public struct UserDocumentRead: Sendable {
    let user: UserID
    let plan: PinningPlan
    var state: UserState
    /// `false` when the groups of a user new to the environment are those the store would record,
    /// but did not (see `pinnedDocument(for:in:style:admittingNewUser:)`).
    public internal(set) var isRecorded = true

    init(user: UserID, plan: PinningPlan, state: UserState) {
        self.user = user
        self.plan = plan
        self.state = state
    }

    /// The revision read.
    public var revision: Int { plan.revision }

    /// The tests the user has no group in yet.
    var unrecorded: [PinningPlan.Test] {
        plan.tests.filter { state.assignments[$0.featureID] == nil }
    }

    /// Whether the user has a group in every test, so every answer can be given.
    public var isComplete: Bool { unrecorded.isEmpty }

    /// The read with `added` groups beside the recorded ones.
    func adding(_ added: [Int64: RecordedAssignment]) -> UserDocumentRead {
        var read = self
        read.state.assignments.merge(added) { _, new in new }
        return read
    }

    /// The document, which needs a group in every test (`isComplete`).
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

    /// The user's configs dictionary, those tagged `tag` only when one is given; needs a group in
    /// every test the configs follow (`isComplete` is enough).
    public func configs(tag: String? = nil) -> UserConfigs {
        UserConfigs(
            revision: plan.revision,
            entries: plan.configs(tagged: tag).map { planned in
                (
                    planned.config.name,
                    planned.value(for: planned.featureIndex.map { evaluation(of: plan.features[$0]) })
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
}
