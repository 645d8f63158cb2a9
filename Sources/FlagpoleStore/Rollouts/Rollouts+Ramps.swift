import FlagpoleCore
import Foundation

/// Ramps: a test's variation grown step by step, each step one revision, applied when its hold
/// is over by `runDueRamps` (which `flagpole serve` and `flagpole tick` call), exactly once
/// (docs/RAMPS.md).
extension Rollouts {
    /// Starts a ramp of `request.feature` and, when its start is now, applies its first step in
    /// the same transaction. With `isDryRun`, only plans: every step's movement plan either way.
    ///
    /// - throws: `RampError`, `CoreError.notATest`, `CoreError.unknownVariation`,
    ///   `CoreError.winnerRequired`, `DocumentError.featureNotFound`.
    public func createRamp(
        _ request: RampRequest, in path: EnvironmentPath, actor: String, now: Date, isDryRun: Bool = false
    ) async throws -> RampReport {
        try request.hold.check()
        return try await transaction(isReadOnly: isDryRun) { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: request.feature, in: scope)
            guard let variation = request.variation ?? (stored.kind == .onOffABTest ? "Enabled" : nil) else {
                throw CoreError.winnerRequired(
                    feature: stored.feature.name, variations: stored.feature.effectiveVariations)
            }
            let course = try RampCourse(feature: stored.feature, variation: variation)
            guard stored.feature.isEnabled else { throw RampError.testDisabled(path, feature: stored.feature.name) }
            try Self.check(steps: request.steps, above: course.baseShare, of: course.variation)
            if let active = try db.ramps.active(featureID: stored.id) {
                throw RampError.alreadyRamping(path, feature: stored.feature.name, id: active.id)
            }
            let guards = try Self.guards(
                asked: request.guards, steps: request.steps.count, goals: try db.experiments.goals(in: scope),
                publishes: try db.publishes.hasPublished(scope), in: path)
            let start = max(request.start ?? now, now)
            let known = try db.environments.lastChange(of: stored.feature.name, in: scope)?.revision ?? 0
            var ramp = RampRow(
                id: 0, environmentID: scope.id, featureID: stored.id, path: path, feature: stored.feature.name,
                variation: course.variation, base: course.base, steps: request.steps, hold: request.hold,
                guards: guards, onFailure: request.onFailure, state: .running, nextStep: 0, dueAt: start,
                knownRevision: known, createdBy: actor, createdAt: now)
            guard !isDryRun else {
                return try Self.report(
                    db, ramp, isDryRun: true, summary: Self.startSummary(ramp, start: start, now: now, isDryRun: true))
            }
            ramp.id = try db.ramps.insert(ramp, scope: scope)
            try db.ramps.insertEvent(RampEvent(kind: .created, actor: actor, detail: nil, at: now), of: ramp.id)
            var applied: [(RampStepRecord, RolloutPlan?)] = []
            if start <= now {
                applied.append(
                    try Self.apply(db, &ramp, through: 0, appliedBy: "schedule", actor: ramp.actor, now: now))
            }
            return try Self.report(
                db, ramp, applied: applied, summary: Self.startSummary(ramp, start: start, now: now, isDryRun: false))
        }
    }

    /// The test's ramp: the running or paused one, else the latest; with every step's plan still to come.
    ///
    /// - throws: `RampError.rampNotFound`, `DocumentError.featureNotFound`.
    public func ramp(of feature: String, in path: EnvironmentPath) async throws -> RampReport {
        try await read { db in
            let ramp = try Self.latestRamp(db, of: feature, in: path)
            return try Self.report(db, ramp, summary: Self.stateSummary(ramp))
        }
    }

    /// The test's running or paused ramp, if it has one, without plans.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func activeRamp(of feature: String, in path: EnvironmentPath) async throws -> Ramp? {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: feature, in: scope)
            return try db.ramps.active(featureID: stored.id).map { try Self.ramp(db, $0) }
        }
    }

    /// The environment's ramps, oldest first, without plans.
    public func ramps(in path: EnvironmentPath) async throws -> [Ramp] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            return try db.ramps.ramps(in: scope).map { try Self.ramp(db, $0) }
        }
    }

    /// Pauses the test's running ramp: no step is applied until a person resumes or advances it.
    ///
    /// - throws: `RampError.rampNotFound`, `RampError.wrongState`.
    public func pauseRamp(
        of feature: String, in path: EnvironmentPath, actor: String, now: Date, isDryRun: Bool = false
    ) async throws -> RampReport {
        try await transaction(isReadOnly: isDryRun) { db in
            var ramp = try Self.latestRamp(db, of: feature, in: path)
            guard ramp.state == .running else {
                throw RampError.wrongState(feature: feature, state: ramp.state, action: "paused")
            }
            let step = ramp.nextStep + 1
            try Self.pause(db, &ramp, actor: actor, reason: "by \(actor)", now: now, isDryRun: isDryRun)
            let summary =
                isDryRun
                ? "Dry run: pausing stops ramp \(ramp.id) before step \(step) of \(ramp.steps.count); nothing was written."
                : Self.stateSummary(ramp)
            return try Self.report(db, ramp, isDryRun: isDryRun, summary: summary)
        }
    }

    /// Resumes the test's paused ramp from the test as it is now (a person's edit meanwhile
    /// included): the next step is the first above the growing variation's current share, due
    /// after a full hold from now.
    ///
    /// - throws: `RampError.rampNotFound`, `RampError.wrongState`, and what the test's changes
    ///   make impossible (`RampError.testDisabled`, `CoreError.unknownVariation`…).
    public func resumeRamp(
        of feature: String, in path: EnvironmentPath, actor: String, now: Date, isDryRun: Bool = false
    ) async throws -> RampReport {
        try await transaction(isReadOnly: isDryRun) { db in
            var ramp = try Self.latestRamp(db, of: feature, in: path)
            guard ramp.state == .paused else {
                throw RampError.wrongState(feature: feature, state: ramp.state, action: "resumed")
            }
            try Self.rebase(db, &ramp)
            if ramp.nextStep < ramp.steps.count {
                ramp.state = .running
                ramp.reason = nil
                ramp.dueAt = ramp.hold.end(after: now)
            } else {
                ramp.state = .finished
                ramp.reason = "the test already had the last step's share when resumed"
            }
            if !isDryRun {
                try db.ramps.update(ramp)
                try db.ramps.insertEvent(
                    RampEvent(
                        kind: ramp.state == .finished ? .finished : .resumed, actor: actor, detail: ramp.reason, at: now
                    ),
                    of: ramp.id)
            }
            return try Self.report(db, ramp, isDryRun: isDryRun, summary: Self.stateSummary(ramp))
        }
    }

    /// Applies the test's next step now, whatever its hold, and holds it from now; a paused ramp
    /// runs again (from the test as it is now, as on resume).
    ///
    /// - throws: `RampError.rampNotFound`, `RampError.wrongState`, as `resumeRamp`.
    public func advanceRamp(
        of feature: String, in path: EnvironmentPath, actor: String, now: Date, isDryRun: Bool = false
    ) async throws -> RampReport {
        try await transaction(isReadOnly: isDryRun) { db in
            var ramp = try Self.latestRamp(db, of: feature, in: path)
            guard ramp.state.isActive else {
                throw RampError.wrongState(feature: feature, state: ramp.state, action: "advanced")
            }
            // From the test as it is: a paused ramp's, or a running one's that a revision changed
            // since its last step (noticed only at its next due step).
            try Self.rebase(db, &ramp)
            guard ramp.nextStep < ramp.steps.count else {
                throw RampError.wrongState(feature: feature, state: .finished, action: "advanced")
            }
            guard !isDryRun else {
                return try Self.report(
                    db, ramp, isDryRun: true,
                    summary:
                        "Dry run: step \(ramp.nextStep + 1) of \(ramp.steps.count) would be applied now. Nothing was written."
                )
            }
            if ramp.state == .paused {
                try db.ramps.insertEvent(
                    RampEvent(kind: .resumed, actor: actor, detail: "to advance it", at: now), of: ramp.id)
            }
            ramp.state = .running
            ramp.reason = nil
            let step = try Self.apply(db, &ramp, through: ramp.nextStep, appliedBy: actor, actor: actor, now: now)
            return try Self.report(db, ramp, applied: [step], summary: Self.stateSummary(ramp))
        }
    }

    /// Stops the test's ramp for good; with `rollingBack`, also gives the growing variation's
    /// share back to its neighbour (0 %), as one more revision.
    ///
    /// - throws: `RampError.rampNotFound`, `RampError.wrongState`.
    public func abortRamp(
        of feature: String, in path: EnvironmentPath, rollingBack: Bool, actor: String, now: Date,
        isDryRun: Bool = false
    ) async throws -> RampReport {
        try await transaction(isReadOnly: isDryRun) { db in
            var ramp = try Self.latestRamp(db, of: feature, in: path)
            guard ramp.state.isActive else {
                throw RampError.wrongState(feature: feature, state: ramp.state, action: "aborted")
            }
            let plans = try Self.abort(db, &ramp, rollingBack: rollingBack, actor: actor, now: now, isDryRun: isDryRun)
            var report = try Self.report(db, ramp, isDryRun: isDryRun, summary: Self.stateSummary(ramp))
            report.plans = plans
            return report
        }
    }

    /// Does `action` to the test's ramp: `pauseRamp`, `resumeRamp`, `advanceRamp` or `abortRamp`
    /// (`rollingBack` is the abort's).
    public func changeRamp(
        _ action: RampAction, of feature: String, in path: EnvironmentPath, rollingBack: Bool = false, actor: String,
        now: Date, isDryRun: Bool = false
    ) async throws -> RampReport {
        switch action {
        case .pause: try await pauseRamp(of: feature, in: path, actor: actor, now: now, isDryRun: isDryRun)
        case .resume: try await resumeRamp(of: feature, in: path, actor: actor, now: now, isDryRun: isDryRun)
        case .advance: try await advanceRamp(of: feature, in: path, actor: actor, now: now, isDryRun: isDryRun)
        case .abort:
            try await abortRamp(
                of: feature, in: path, rollingBack: rollingBack, actor: actor, now: now, isDryRun: isDryRun)
        }
    }

    /// Applies every ramp step due at `now`, in every tenant, each in a transaction of its own:
    /// what `flagpole serve` does every tick, and `flagpole tick` once. A guarded ramp's step is
    /// applied only when its guards pass, and its guards look at a holding step every
    /// `guardLookInterval`, pausing or rolling it back when one fails. A ramp whose test another
    /// revision changed is paused instead, naming the revision; one whose step fails is paused
    /// with the reason. Returns what happened to each ramp that changed or waits (with
    /// `isDryRun`, what would).
    public func runDueRamps(now: Date, isDryRun: Bool = false) async throws -> [RampReport] {
        let ids = try await read { db in
            let due = try db.ramps.due(at: now)
            let holding = try db.ramps.unlooked(before: now.addingTimeInterval(-Self.guardLookInterval))
            return due + holding.filter { !due.contains($0) }
        }
        var reports: [RampReport] = []
        for id in ids {
            do {
                let report = try await transaction(isReadOnly: isDryRun) { db in
                    try Self.runDue(db, id: id, now: now, isDryRun: isDryRun)
                }
                if let report { reports.append(report) }
            } catch let error as StorageError {
                // A busy or unreachable database: the next tick tries again, the ramp unpaused.
                throw error
            } catch {
                guard !isDryRun else { throw error }
                // The step was refused (the test no longer allows it): its transaction rolled back,
                // and the pause is a transaction of its own, unless another instance got there
                // first (the step's row exists: nothing to pause).
                let reason = "step failed: \(error)"
                let report = try await write { db -> RampReport? in
                    guard var ramp = try db.ramps.ramp(id: id), ramp.state == .running, let due = ramp.dueAt, due <= now
                    else { return nil }
                    try Self.pause(db, &ramp, actor: "schedule", reason: reason, now: now, isDryRun: false)
                    return try Self.report(db, ramp, summary: Self.stateSummary(ramp), withUpcoming: false)
                }
                if let report { reports.append(report) }
            }
        }
        return reports
    }

    // MARK: Inside a transaction

    /// The running ramp `id`, if it is still due or its guards are due a look: its test changed
    /// by another revision → paused; a guard failed → paused or rolled back; a guard waits → it
    /// holds; else its next step applied, and for a ramp without guards every overdue step
    /// folded into the latest one due (docs/RAMPS.md, "After downtime").
    private static func runDue(_ db: Transaction, id: Int64, now: Date, isDryRun: Bool) throws -> RampReport? {
        // Read again inside the transaction: another instance may have applied it meanwhile.
        guard var ramp = try db.ramps.ramp(id: id), ramp.state == .running, let due = ramp.dueAt else { return nil }
        // A guarded ramp's guards judge the hold of its last step applied (none before the first).
        let judges = !ramp.guards.isEmpty && ramp.nextStep > 0
        let lookedRecently = ramp.lookedAt.map { $0 > now.addingTimeInterval(-guardLookInterval) } ?? false
        guard due <= now || (judges && !lookedRecently) else { return nil }
        let scope = try db.environments.scope(of: ramp.path)
        if let change = try db.environments.lastChange(of: ramp.feature, in: scope),
            change.revision > ramp.knownRevision
        {
            let reason =
                "revision \(change.revision) (\(change.kind.rawValue), by \(change.actor): \(change.message)) changed \(ramp.feature)"
            try pause(db, &ramp, actor: "schedule", reason: reason, now: now, isDryRun: isDryRun)
            return try report(db, ramp, isDryRun: isDryRun, summary: stateSummary(ramp), withUpcoming: false)
        }
        var target = ramp.nextStep
        if judges {
            // A step waiting at the end of its hold is looked at again every look interval.
            if due <= now, lookedRecently, let looked = ramp.lookedAt, looked >= due { return nil }
            guard !isDryRun else {
                return try report(
                    db, ramp, isDryRun: true,
                    summary:
                        "Dry run: the guards would look at step \(ramp.nextStep) and, if they pass, step \(target + 1) of \(ramp.steps.count) would be applied. Nothing was written."
                )
            }
            let judgement = try judgeGuards(db, &ramp, atHoldEnd: due <= now, now: now)
            if !judgement.failed.isEmpty {
                let reason =
                    "guard failed at step \(judgement.step + 1): "
                    + judgement.failed.map(\.reason).joined(separator: "; ")
                if judgement.rollsBack(ramp) {
                    let plans = try abort(
                        db, &ramp, rollingBack: true, actor: "guard", because: reason, now: now, isDryRun: false)
                    var report = try report(db, ramp, summary: stateSummary(ramp), withUpcoming: false)
                    report.plans = plans
                    return report
                }
                try pause(db, &ramp, actor: "guard", reason: reason, now: now, isDryRun: false)
                return try report(db, ramp, summary: stateSummary(ramp), withUpcoming: false)
            }
            guard due <= now, judgement.waiting.isEmpty else {
                try db.ramps.update(ramp)
                guard due <= now else { return nil }
                return try report(
                    db, ramp,
                    summary: "Waiting: step \(target + 1) of \(ramp.steps.count) holds, "
                        + judgement.waiting.map(\.reason).joined(separator: "; ") + ".",
                    withUpcoming: false)
            }
        }
        if ramp.guards.isEmpty {
            // The latest step due: each later one was due a hold after the one before. A guarded
            // ramp never folds: that would skip the guards of the steps in between.
            var nominal = due
            while target < ramp.steps.count - 1 {
                nominal = ramp.hold.end(after: nominal)
                guard nominal <= now else { break }
                target += 1
            }
        }
        guard !isDryRun else {
            let folded = RampStepRecord.folding(Array(ramp.nextStep..<target)).map { ", " + $0 } ?? ""
            return try report(
                db, ramp, isDryRun: true,
                summary:
                    "Dry run: step \(target + 1) of \(ramp.steps.count) would be applied\(folded). Nothing was written."
            )
        }
        let step = try apply(db, &ramp, through: target, appliedBy: "schedule", actor: ramp.actor, now: now)
        // The plans of the steps to come count every recorded user again: a tick leaves them to
        // `ramp show`, and reports the step it applied.
        return try report(db, ramp, applied: [step], summary: stateSummary(ramp), withUpcoming: false)
    }

    /// Applies step `target` as one revision by `actor`, folding the steps from the next one up
    /// to it, and records it: its row (whose key refuses a second one), the ramp's next step and
    /// due time, and `finished` after the last.
    private static func apply(
        _ db: Transaction, _ ramp: inout RampRow, through target: Int, appliedBy: String, actor: String, now: Date
    ) throws -> (RampStepRecord, RolloutPlan?) {
        let scope = try db.environments.scope(of: ramp.path)
        let course = try ramp.course(of: try db.features.stored(named: ramp.feature, in: scope).feature)
        let share = ramp.steps[target]
        let folded = Array(ramp.nextStep..<target)
        let foldedText = RampStepRecord.folding(folded).map { ", " + $0 } ?? ""
        // The ramp's own words are its reason: the plan it was made with says who moves at each step.
        let message =
            "ramp \(ramp.id): step \(target + 1) of \(ramp.steps.count), \(course.variation) \(Percent.format(share))\(foldedText)"
        let outcome = try Catalog.edit(
            db, ramp.feature, in: ramp.path, kind: share >= 100 ? .rollout : .bias,
            options: EditOptions(message: message, actor: actor, time: now), message: message
        ) { feature in
            feature = try course.feature(feature, at: share)
        }
        let record = RampStepRecord(
            step: target, revision: outcome.revision, appliedBy: appliedBy, appliedAt: now, folded: folded,
            movedUsers: outcome.plans.reduce(0) { $0 + $1.movingUsers })
        try db.ramps.insertStep(record, of: ramp.id)
        db.record(
            StoreEvent(
                .rampStepApplied, of: ramp, at: now,
                ": step \(target + 1) of \(ramp.steps.count) applied by \(appliedBy), \(course.variation) \(Percent.format(share))\(foldedText), as revision \(outcome.revision); \(record.movedUsers) recorded users moved",
                details: [
                    "step": .number(Double(target)), "share": .number(share),
                    "revision": .number(Double(outcome.revision)), "appliedBy": .string(appliedBy),
                    "folded": .array(folded.map { .number(Double($0)) }),
                    "movedUsers": .number(Double(record.movedUsers)),
                ]))
        if outcome.isApplied { ramp.knownRevision = outcome.revision }
        ramp.nextStep = target + 1
        if ramp.nextStep == ramp.steps.count {
            ramp.state = .finished
            ramp.dueAt = nil
            try db.ramps.insertEvent(RampEvent(kind: .finished, actor: appliedBy, detail: nil, at: now), of: ramp.id)
            db.record(
                StoreEvent(
                    .rampFinished, of: ramp, at: now,
                    " finished: \(course.variation) is at \(Percent.format(share))"
                ))
        } else {
            ramp.dueAt = ramp.hold.end(after: now)
        }
        try db.ramps.update(ramp)
        return (record, outcome.plans.first)
    }

    /// Stops an active ramp for good; with `rollingBack`, gives the growing variation's share
    /// back to its neighbour as one more revision by `actor`, whose plan it returns. `because`
    /// says why, after who.
    static func abort(
        _ db: Transaction, _ ramp: inout RampRow, rollingBack: Bool, actor: String, because: String? = nil,
        now: Date, isDryRun: Bool
    ) throws -> [RampStepPlan] {
        var plans: [RampStepPlan] = []
        if rollingBack {
            // The share the variation has now goes back, whoever gave it: the ramp or a person since.
            let scope = try db.environments.scope(of: ramp.path)
            let current = try db.features.stored(named: ramp.feature, in: scope).feature
            let course = try RampCourse(feature: current, variation: ramp.variation)
            let message = "abort ramp \(ramp.id): \(course.variation) back to 0 %"
            let outcome = try Catalog.edit(
                db, ramp.feature, in: ramp.path, kind: .bias,
                options: EditOptions(isDryRun: isDryRun, message: message, actor: actor, time: now), message: message
            ) { feature in
                feature = try course.feature(feature, at: 0)
            }
            plans = outcome.plans.map { RampStepPlan(step: -1, share: 0, dueAt: nil, plan: $0) }
            if outcome.isApplied { ramp.knownRevision = outcome.revision }
        }
        ramp.state = .aborted
        ramp.dueAt = nil
        ramp.reason =
            "aborted by \(actor)" + (rollingBack ? ", rolled back to 0 %" : "") + (because.map { ": " + $0 } ?? "")
        if !isDryRun {
            try db.ramps.update(ramp)
            try db.ramps.insertEvent(RampEvent(kind: .aborted, actor: actor, detail: ramp.reason, at: now), of: ramp.id)
            db.record(
                StoreEvent(
                    rollingBack ? .rampRolledBack : .rampAborted, of: ramp, at: now, " \(ramp.reason ?? "aborted")",
                    details: [
                        "actor": .string(actor), "reason": because.map(JSONValue.string) ?? .null,
                        "movedUsers": .number(Double(plans.reduce(0) { $0 + $1.plan.movingUsers })),
                    ]))
        }
        return plans
    }

    static func pause(
        _ db: Transaction, _ ramp: inout RampRow, actor: String, reason: String, now: Date, isDryRun: Bool
    ) throws {
        ramp.state = .paused
        ramp.dueAt = nil
        ramp.reason = reason
        guard !isDryRun else { return }
        try db.ramps.update(ramp)
        try db.ramps.insertEvent(RampEvent(kind: .paused, actor: actor, detail: reason, at: now), of: ramp.id)
        db.record(
            StoreEvent(
                .rampPaused, of: ramp, at: now, " paused by \(actor): \(reason)",
                details: ["actor": .string(actor), "reason": .string(reason)]))
    }

    /// Takes the test as it is now as the ramp's base: its biases, its last change, and the next
    /// step the first above the growing variation's share (never one applied already).
    private static func rebase(_ db: Transaction, _ ramp: inout RampRow) throws {
        let scope = try db.environments.scope(of: ramp.path)
        let stored = try db.features.stored(named: ramp.feature, in: scope)
        let course = try RampCourse(feature: stored.feature, variation: ramp.variation)
        guard stored.feature.isEnabled else { throw RampError.testDisabled(ramp.path, feature: ramp.feature) }
        ramp.base = course.base
        ramp.knownRevision = try db.environments.lastChange(of: ramp.feature, in: scope)?.revision ?? ramp.knownRevision
        let above = ramp.steps.firstIndex { $0 > course.baseShare } ?? ramp.steps.count
        ramp.nextStep = max(ramp.nextStep, above)
    }

    private static func latestRamp(
        _ db: Transaction, of feature: String, in path: EnvironmentPath
    ) throws -> RampRow {
        let scope = try db.environments.scope(of: path)
        let stored = try db.features.stored(named: feature, in: scope, includingArchived: true)
        let ramps = try db.ramps.ramps(featureID: stored.id)
        guard let ramp = ramps.last(where: { $0.state.isActive }) ?? ramps.last else {
            throw RampError.rampNotFound(path, feature: feature)
        }
        return ramp
    }

    // MARK: Reports

    private static func ramp(_ db: Transaction, _ row: RampRow) throws -> Ramp {
        Ramp(
            id: row.id, path: row.path, feature: row.feature, variation: row.variation, steps: row.steps,
            hold: row.hold, guards: row.guards, onFailure: row.onFailure, state: row.state, reason: row.reason,
            nextStep: row.nextStep, dueAt: row.dueAt, createdBy: row.createdBy, createdAt: row.createdAt,
            applied: row.id == 0 ? [] : try stepsWithFetches(db, row),
            events: row.id == 0 ? [] : try db.ramps.events(of: row.id),
            looks: row.id == 0 ? [] : try db.ramps.looks(of: row.id))
    }

    /// The ramp's steps applied, each with the fetches of its revisions: from its own up to the next step's.
    private static func stepsWithFetches(_ db: Transaction, _ row: RampRow) throws -> [RampStepRecord] {
        var steps = try db.ramps.steps(of: row.id)
        for index in steps.indices {
            let end = index + 1 < steps.count ? steps[index + 1].revision : Int.max
            steps[index].fetches = try db.fetchCounts.counts(
                environmentID: row.environmentID, revisions: steps[index].revision..<max(end, steps[index].revision))
        }
        return steps
    }

    /// The report of `row`: with the plans of the steps it applied now, then (`withUpcoming`)
    /// of every step still to come.
    private static func report(
        _ db: Transaction, _ row: RampRow, isDryRun: Bool = false, applied: [(RampStepRecord, RolloutPlan?)] = [],
        summary: String, withUpcoming: Bool = true
    ) throws -> RampReport {
        let done = applied.compactMap { step, plan in
            plan.map { RampStepPlan(step: step.step, share: row.steps[step.step], dueAt: nil, plan: $0) }
        }
        return RampReport(
            ramp: try ramp(db, row), isDryRun: isDryRun, applied: applied.map(\.0),
            plans: done + (withUpcoming ? try upcomingPlans(db, row) : []), summary: summary)
    }

    /// The plan of every step still to come, each from the one before: who would move if it
    /// were applied now (recorded users keep their groups until then).
    private static func upcomingPlans(_ db: Transaction, _ ramp: RampRow) throws -> [RampStepPlan] {
        guard ramp.state.isActive, ramp.nextStep < ramp.steps.count else { return [] }
        let scope = try db.environments.scope(of: ramp.path)
        // A test removed from the document, or changed so that the ramp can't grow it, has no plans.
        let stored = try db.features.stored(named: ramp.feature, in: scope, includingArchived: true)
        guard stored.position != nil, let course = try? ramp.course(of: stored.feature) else { return [] }
        let revision = try db.environments.latestRevisionNumber(in: scope)
        let targeting = try TargetingDocument(
            stored: try revision.flatMap { try db.environments.targeting(ofRevision: $0, in: scope) })
        let followsRules = targeting.rules(of: ramp.feature) != nil
        var previous = stored.feature
        var due = ramp.dueAt
        var plans: [RampStepPlan] = []
        for index in ramp.nextStep..<ramp.steps.count {
            let next = try course.feature(previous, at: ramp.steps[index])
            let (old, new) = (previous.assignmentRanges, next.assignmentRanges)
            var plan = try db.rolloutPlan(
                of: StoredFeature(id: stored.id, salt: stored.salt, position: stored.position, feature: previous),
                to: next,
                recorded: try db.assignments.pendingMoves(
                    featureID: stored.id, from: old, to: new, followsRules: followsRules))
            plan.movingPlacedByRules = try db.assignments.pendingMovesPlacedByRules(
                featureID: stored.id, from: old, to: new, followsRules: followsRules)
            plans.append(RampStepPlan(step: index, share: ramp.steps[index], dueAt: due, plan: plan))
            previous = next
            due = due.map(ramp.hold.end(after:))
        }
        return plans
    }

    private static func startSummary(_ ramp: RampRow, start: Date, now: Date, isDryRun: Bool) -> String {
        let first = "\(ramp.variation) \(Percent.format(ramp.steps[0]))"
        if isDryRun {
            return start <= now
                ? "Dry run: the ramp's first step (\(first)) would be applied now. Nothing was written."
                : "Dry run: the ramp's first step (\(first)) would be applied at \(start.readableUTC). Nothing was written."
        }
        return start <= now
            ? "Ramp \(ramp.id) started: step 1 (\(first)) applied. " + stateSummary(ramp)
            : "Ramp \(ramp.id) created: step 1 (\(first)) at \(start.readableUTC)."
    }

    /// Where the ramp is, in one sentence.
    static func stateSummary(_ ramp: RampRow) -> String {
        switch ramp.state {
        case .running:
            "Running: step \(ramp.nextStep + 1) of \(ramp.steps.count) (\(ramp.variation) \(Percent.format(ramp.steps[ramp.nextStep]))) at \(ramp.dueAt!.readableUTC)."
        case .paused:
            // "Paused by ada." or "Paused: revision 7 (…) changed checkout."
            "Paused\(ramp.reason.map { $0.hasPrefix("by ") ? " \($0)" : ": \($0)" } ?? ""). Nothing is applied until someone resumes or advances it."
        case .finished: "Finished: \(ramp.variation) has \(Percent.format(ramp.steps.last!))."
        case .aborted: "Aborted: \(ramp.reason ?? "")."
        }
    }

    // MARK: Checks

    /// Steps grow, each in (0, 100], the first above the variation's `current` share.
    static func check(steps: [Double], above current: Double, of variation: String) throws {
        guard !steps.isEmpty else { throw RampError.noSteps }
        guard steps.count <= RampError.maximumSteps else {
            throw RampError.tooManySteps(maximum: RampError.maximumSteps)
        }
        for (index, share) in steps.enumerated() {
            guard share.isFinite, share > 0, share <= 100 else {
                throw RampError.stepOutOfOrder(index: index, share: share, previous: nil)
            }
            if index > 0, share <= steps[index - 1] {
                throw RampError.stepOutOfOrder(index: index, share: share, previous: steps[index - 1])
            }
        }
        guard steps[0] > current else {
            throw RampError.stepsBelowCurrent(variation: variation, current: current, first: steps[0])
        }
    }
}
