import FlagpoleCore
import Foundation

/// Keeps an environment's figures of tests up to date, inside one write transaction: first with
/// what changed in the store since it last looked (new revisions start epochs; new assignment
/// events start stints), then with events as they are accepted. `save` writes it all.
///
/// Nothing on the write paths of revisions or assignments knows about results: the ledger
/// follows their history (revisions and `assignment_events`, both append-only) by position.
/// That position is only sound if ids are in commit order and no other ledger of the environment
/// runs at once: true of SQLite's single writer, and of PostgreSQL because every write
/// transaction takes the store's advisory lock before it reads.
struct ExperimentLedger {
    private let db: Transaction
    private let scope: EnvironmentScope
    /// Each test's epochs, oldest first, by feature id.
    private(set) var epochs: [Int64: [ExperimentEpoch]] = [:]
    private var states: [String: ExperimentUserState] = [:]
    private var changedUsers: Set<String> = []
    private var deltas = ExperimentDeltas()
    private var revision = 0
    private var assignmentEventID: Int64 = 0
    /// How far the figures had followed the store when the ledger began.
    private var saved: (revision: Int, assignmentEventID: Int64) = (0, 0)

    /// Assignment events read, and users' states held, at a time: a bias change that moved a
    /// million users is followed in slices.
    private static let slice = 20_000

    init(db: Transaction, scope: EnvironmentScope) throws {
        self.db = db
        self.scope = scope
        for epoch in try db.experiments.epochs(in: scope) {
            epochs[epoch.featureID, default: []].append(epoch)
        }
        (revision, assignmentEventID) = try db.experiments.progress(in: scope)
        saved = (revision, assignmentEventID)
        goalKinds = Dictionary(uniqueKeysWithValues: try db.experiments.goals(in: scope).map { ($0.id, $0.goal.kind) })
        try followRevisions()
        try followAssignments()
    }

    // MARK: Following the store

    /// Starts an epoch for every test whose variations, biases, rules or segments (or being on)
    /// changed in a revision the ledger hasn't seen.
    private mutating func followRevisions() throws {
        // One revision at a time: each holds a whole document, and a ledger that starts late
        // reads an environment's whole history.
        guard let latest = try db.environments.latestRevisionNumber(in: scope), latest > revision else { return }
        let featureIDs = Dictionary(
            try db.features.storedFeatures(in: scope).map { ($0.feature.name, $0.id) }, uniquingKeysWith: { a, _ in a })
        for number in (revision + 1)...latest {
            guard let record = try db.environments.revision(number, in: scope) else { continue }
            let features = DocumentDecoder.decode(Array(record.document)).document?.features ?? []
            let targeting = (try? TargetingDocument(stored: record.targeting.map(Array.init))) ?? TargetingDocument()
            for feature in features where feature.kind.isTest {
                guard let featureID = featureIDs[feature.name] else { continue }
                let signature = ExperimentEpoch.signature(of: feature, targeting: targeting)
                let known = epochs[featureID] ?? []
                guard known.last?.signature != signature else { continue }
                let ranges = VariationRanges(of: feature)
                let epoch = ExperimentEpoch(
                    featureID: featureID, number: Int64(known.count + 1), revision: record.number,
                    startedAt: record.createdAt.unixMilliseconds, variations: ranges.ranges.map(\.name),
                    shares: ranges.ranges.map(\.width), signature: signature)
                try db.experiments.insertEpoch(epoch, in: scope)
                epochs[featureID, default: []].append(epoch)
            }
            // A document that doesn't read (none is stored so) ends no test.
            if !features.isEmpty { try endTests(notIn: features, featureIDs: featureIDs, at: record) }
            revision = number
        }
    }

    /// Ends every test that the revision no longer has as a test (an on/off test rolled out into
    /// a plain flag, a test removed from the file) with an epoch in which nothing counts: the
    /// moves that end it, and whatever follows, leave its figures as they were when it ended.
    private mutating func endTests(
        notIn features: [Feature], featureIDs: [String: Int64], at record: RevisionRecord
    )
        throws
    {
        let tests = Set(features.filter(\.kind.isTest).compactMap { featureIDs[$0.name] })
        for (featureID, known) in epochs where !tests.contains(featureID) {
            guard let last = known.last, !last.hasEnded else { continue }
            let ended = ExperimentEpoch(
                featureID: featureID, number: Int64(known.count + 1), revision: record.number,
                startedAt: record.createdAt.unixMilliseconds, variations: [], shares: [],
                signature: ExperimentEpoch.endedSignature)
            try db.experiments.insertEpoch(ended, in: scope)
            epochs[featureID, default: []].append(ended)
        }
    }

    /// Starts a stint for every change of group the ledger hasn't seen; a user seen in two
    /// variations of one epoch is excluded from it.
    private mutating func followAssignments() throws {
        while true {
            let rows = try db.assignments.events(in: scope, after: assignmentEventID, limit: Self.slice)
            for row in rows {
                try follow(row)
            }
            guard let last = rows.last else { return }
            assignmentEventID = last.id
            if rows.count < Self.slice { return }
            try saveStates()
        }
    }

    private mutating func follow(_ row: AssignmentEventRow) throws {
        guard let epoch = epochs[row.featureID]?.last(where: { $0.revision <= row.revision }) else { return }
        var state = try state(of: row.user)
        let index =
            state.membershipIndex(of: row.featureID)
            ?? {
                state.memberships.append(.init(featureID: row.featureID, stints: []))
                return state.memberships.count - 1
            }()
        let featureID = row.featureID
        if var last = state.memberships[index].stints.last, last.epoch == epoch.number {
            guard last.variation != row.variation, !last.isExcluded else { return }
            if counts(last, featureID) {
                deltas.arm(featureID, last) { arm in
                    arm.users -= 1
                    arm.splitUsers -= last.bySplit ? 1 : 0
                    arm.exposedUsers -= last.exposedAt == nil ? 0 : 1
                    arm.excludedUsers += 1
                }
                for total in last.totals {
                    deltas.total(featureID, last, goalID: total.goalID) { delta in
                        delta.itt.add(from: total.total, to: 0, events: -Int(total.events))
                        delta.exposed.add(from: total.exposedTotal, to: 0, events: -Int(total.exposedEvents))
                        if last.bySplit { delta.split.add(from: total.total, to: 0, events: -Int(total.events)) }
                    }
                }
            }
            last.isExcluded = true
            state.memberships[index].stints[state.memberships[index].stints.count - 1] = last
        } else {
            let stint = ExperimentUserState.Stint(
                epoch: epoch.number, variation: row.variation, joinedAt: row.createdAt,
                bySplit: row.reason == "first" && !row.byRule)
            if counts(stint, featureID) {
                deltas.arm(featureID, stint) { arm in
                    arm.users += 1
                    arm.splitUsers += stint.bySplit ? 1 : 0
                }
            }
            state.memberships[index].stints.append(stint)
        }
        keep(state, of: row.user)
    }

    /// Whether a stint's events count: it is in one of its epoch's variations (not `Disabled`)
    /// and not excluded.
    private func counts(_ stint: ExperimentUserState.Stint, _ featureID: Int64) -> Bool {
        !stint.isExcluded
            && epochs[featureID]?.first(where: { $0.number == stint.epoch })?.variations.contains(stint.variation)
                == true
    }

    // MARK: Events

    /// Counts an accepted exposure of `user` to a test.
    mutating func recordExposure(of user: String, to featureID: Int64, at time: Int64) throws {
        var state = try state(of: user)
        guard let index = state.membershipIndex(of: featureID) else { return }
        let stints = state.memberships[index].stints
        // An app shows only what it was given: an exposure timed before the user joined is the
        // app's clock, and counts for the first stint.
        guard let stintIndex = state.memberships[index].stintIndex(at: time) ?? stints.indices.first else { return }
        var stint = stints[stintIndex]
        guard stint.exposedAt == nil, counts(stint, featureID) else { return }
        let exposedAt = max(time, stint.joinedAt)
        stint.exposedAt = exposedAt
        deltas.arm(featureID, stint) { $0.exposedUsers += 1 }
        for event in state.pending
        where event.time >= exposedAt && state.memberships[index].stintIndex(at: event.time) == stintIndex {
            guard let goal = goalKinds[event.goalID] else { continue }
            var total = stint.total(of: event.goalID)
            let new = goal.total(after: total.exposedTotal, adding: event.value)
            deltas.total(featureID, stint, goalID: event.goalID) {
                $0.exposed.add(from: total.exposedTotal, to: new, events: 1)
            }
            total.exposedTotal = new
            total.exposedEvents += 1
            stint.setTotal(total)
        }
        state.memberships[index].stints[stintIndex] = stint
        if !awaitsExposure(state) { state.pending = [] }
        keep(state, of: user)
    }

    /// Whether a stint of the user that counts has no exposure yet: their pending events may
    /// still count for it.
    private func awaitsExposure(_ state: ExperimentUserState) -> Bool {
        state.memberships.contains { membership in
            membership.stints.contains { $0.exposedAt == nil && counts($0, membership.featureID) }
        }
    }

    /// The kinds of the environment's goals, by id: what a pending event adds.
    private var goalKinds: [Int64: Goal.Kind] = [:]

    /// Counts an accepted event of a goal for every test `user` was in when it happened.
    mutating func recordEvent(of user: String, goalID: Int64, kind: Goal.Kind, value: Double?, at time: Int64) throws {
        var state = try state(of: user)
        guard !state.memberships.isEmpty else { return }
        var isPending = false
        for index in state.memberships.indices {
            let featureID = state.memberships[index].featureID
            guard let stintIndex = state.memberships[index].stintIndex(at: time) else { continue }
            var stint = state.memberships[index].stints[stintIndex]
            guard counts(stint, featureID) else { continue }
            var total = stint.total(of: goalID)
            let new = kind.total(after: total.total, adding: value)
            var exposedNew: Double?
            if let exposedAt = stint.exposedAt {
                if time >= exposedAt { exposedNew = kind.total(after: total.exposedTotal, adding: value) }
            } else {
                isPending = true
            }
            deltas.total(featureID, stint, goalID: goalID) { delta in
                delta.itt.add(from: total.total, to: new, events: 1)
                if stint.bySplit { delta.split.add(from: total.total, to: new, events: 1) }
                if let exposedNew { delta.exposed.add(from: total.exposedTotal, to: exposedNew, events: 1) }
            }
            total.total = new
            total.events += 1
            if let exposedNew {
                total.exposedTotal = exposedNew
                total.exposedEvents += 1
            }
            stint.setTotal(total)
            state.memberships[index].stints[stintIndex] = stint
        }
        if isPending {
            if state.pending.count >= ExperimentUserState.pendingLimit { state.pending.removeFirst() }
            state.pending.append(.init(goalID: goalID, time: time, value: value))
        }
        keep(state, of: user)
    }

    // MARK: State

    private mutating func state(of user: String) throws -> ExperimentUserState {
        if let state = states[user] { return state }
        let state = try db.experiments.state(of: user, in: scope) ?? ExperimentUserState()
        states[user] = state
        return state
    }

    private mutating func keep(_ state: ExperimentUserState, of user: String) {
        states[user] = state
        changedUsers.insert(user)
    }

    private mutating func saveStates() throws {
        for user in changedUsers {
            if let state = states[user] { try db.experiments.setState(state, of: user, in: scope) }
        }
        changedUsers = []
        states = [:]
    }

    /// Writes users' states, the figures' changes and how far the ledger has followed the store.
    mutating func save(at time: Date) throws {
        try saveStates()
        if !deltas.isEmpty {
            try db.experiments.apply(deltas, in: scope, day: time.unixMilliseconds / 86_400_000)
            deltas = ExperimentDeltas()
        }
        if saved != (revision, assignmentEventID) {
            try db.experiments.setProgress(revision: revision, assignmentEventID: assignmentEventID, in: scope)
            saved = (revision, assignmentEventID)
        }
    }
}

extension ExperimentEpoch {
    /// The signature of the epoch that ends a test: no variation, so nothing in it counts.
    static let endedSignature = "ended"

    /// Whether this epoch marks the end of its test rather than a readout.
    var hasEnded: Bool { signature == Self.endedSignature }

    /// What starts a new epoch when it changes: the test's variations, biases and being on, its
    /// rules, and the segments they name.
    static func signature(of feature: Feature, targeting: TargetingDocument) -> String {
        let rules = targeting.rules(of: feature.name) ?? []
        var segmentNames = Set<String>()
        for rule in rules {
            for clause in rule.clauses where clause.op == .inSegment || clause.op == .notInSegment {
                for case .string(let name) in clause.values { segmentNames.insert(name) }
            }
        }
        let segments = segmentNames.sorted().compactMap { targeting.segments[$0]?.jsonValue }
        let signature: JSONValue = .object([
            "variations": .array(feature.effectiveVariations.map(JSONValue.string)),
            "biases": .array(feature.effectiveBiases.map(JSONValue.number)),
            "enabled": .bool(feature.enabled ?? true),
            "rules": .array(rules.map(\.jsonValue)),
            "segments": .array(segments),
        ])
        return String(decoding: JSONWriter(style: .compact).bytes(of: signature), as: UTF8.self)
    }
}
