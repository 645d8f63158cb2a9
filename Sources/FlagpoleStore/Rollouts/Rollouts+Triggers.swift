import FlagpoleCore
import Foundation

/// Trigger URLs: an alert in another system calls one (`POST /triggers?token=…`) to pause a
/// feature's ramp, abort it rolling back, or switch the feature off (docs/RAMPS.md).
extension Rollouts {
    /// How many calls a trigger listing shows, newest first.
    static let listedTriggerCalls = 5

    /// Makes a trigger of `feature`; its token is in the result only.
    ///
    /// - throws: `TriggerError.invalidName`, `DocumentError.featureNotFound`.
    public func createTrigger(
        for feature: String, action: Trigger.Action, name: String, in path: EnvironmentPath, actor: String, now: Date
    ) async throws -> CreatedTrigger {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(name.count) else {
            throw TriggerError.invalidName(name.isEmpty ? "is empty" : "is longer than 100 characters")
        }
        guard !name.contains(where: \.isNewline) else { throw TriggerError.invalidName("spans lines") }
        let token = TriggerToken.generate()
        return try await write { db in
            let scope = try db.environments.scope(of: path)
            let stored = try db.features.stored(named: feature, in: scope)
            try db.triggers.insert(
                scope: scope, featureID: stored.id, action: action, name: name, token: token, createdBy: actor, now: now
            )
            let row = try db.triggers.trigger(sha256: token.digest)!
            return CreatedTrigger(trigger: row.trigger(calls: []), token: token.value)
        }
    }

    /// The environment's triggers (of one feature, when named), oldest first, each with its latest calls.
    ///
    /// - throws: `DocumentError.featureNotFound`.
    public func triggers(in path: EnvironmentPath, feature: String? = nil) async throws -> [Trigger] {
        try await read { db in
            let scope = try db.environments.scope(of: path)
            let featureID = try feature.map { try db.features.stored(named: $0, in: scope, includingArchived: true).id }
            return try db.triggers.triggers(in: scope, featureID: featureID).map { row in
                row.trigger(calls: try db.triggers.calls(of: row.id, limit: Self.listedTriggerCalls))
            }
        }
    }

    /// Revokes the environment's trigger `prefix`: its URL does nothing from now on.
    ///
    /// - throws: `TriggerError.triggerNotFound` (also when it is revoked already).
    public func revokeTrigger(_ prefix: String, in path: EnvironmentPath, now: Date) async throws {
        try await write { db in
            let scope = try db.environments.scope(of: path)
            guard try db.triggers.revoke(prefix: prefix, in: scope, now: now) else {
                throw TriggerError.triggerNotFound(path, prefix: prefix)
            }
        }
    }

    /// A call of the trigger whose token is `token`, from `address`: it acts (in one
    /// transaction with the record of the call), unless it acted less than a minute ago, when
    /// the call is only recorded (`acted` false, `retryAfter` set).
    ///
    /// - throws: `TriggerError.unknownToken`, `TriggerError.revoked`.
    public func callTrigger(
        _ token: String, address: String, userAgent: String?, now: Date
    ) async throws
        -> TriggerOutcome
    {
        guard let token = TriggerToken(token) else { throw TriggerError.unknownToken }
        return try await write { db in
            guard let row = try db.triggers.trigger(sha256: token.digest) else { throw TriggerError.unknownToken }
            if let revoked = row.revokedAt { throw TriggerError.revoked(at: revoked) }
            var call = TriggerCall(
                at: now, address: address, userAgent: userAgent.map { String($0.prefix(200)) }, acted: false,
                outcome: "")
            var revision: Int?
            var retryAfter: Int?
            if let last = try db.triggers.lastActed(triggerID: row.id),
                now.timeIntervalSince(last) < Double(TriggerError.quietPeriod)
            {
                retryAfter = TriggerError.quietPeriod - Int(now.timeIntervalSince(last))
                call.outcome = "nothing: it acted less than a minute ago"
            } else {
                call.acted = true
                (call.outcome, revision) = try Self.act(row, db: db, caller: address, now: now)
                db.record(
                    StoreEvent(
                        kind: .triggerFired, path: row.path, at: now,
                        text:
                            "trigger \(row.name) (\(row.action.rawValue)) of \(row.feature) called from \(address): \(call.outcome)",
                        fields: [
                            "feature": .string(row.feature), "ramp": .null, "trigger": .string(row.name),
                            "action": .string(row.action.rawValue), "caller": .string(address),
                            "outcome": .string(call.outcome),
                        ]))
            }
            try db.triggers.insertCall(call, of: row.id)
            return TriggerOutcome(
                trigger: row.trigger(calls: [call]), acted: call.acted, outcome: call.outcome, revision: revision,
                retryAfter: retryAfter)
        }
    }

    /// What the trigger does, in words, and the revision it wrote.
    private static func act(
        _ trigger: TriggerRow, db: Transaction, caller: String, now: Date
    ) throws -> (String, Int?) {
        let actor = "trigger:\(trigger.name)"
        let reason = "trigger \(trigger.name) called from \(caller)"
        var ramp = try db.ramps.active(featureID: trigger.featureID)
        switch trigger.action {
        case .pause:
            guard var running = ramp, running.state == .running else {
                return (ramp.map { "nothing: ramp \($0.id) is paused already" } ?? "nothing: no ramp is running", nil)
            }
            try pause(db, &running, actor: actor, reason: reason, now: now, isDryRun: false)
            return ("paused ramp \(running.id)", nil)
        case .rollback:
            guard var active = ramp else { return ("nothing: no ramp is running or paused", nil) }
            let plans = try abort(db, &active, rollingBack: true, actor: actor, now: now, isDryRun: false)
            let moved = plans.reduce(0) { $0 + $1.plan.movingUsers }
            return (
                "aborted ramp \(active.id) and rolled \(active.variation) back to 0 % (\(moved) recorded users moved)",
                active.knownRevision
            )
        case .disable:
            var paused = ""
            if var running = ramp, running.state == .running {
                try pause(db, &running, actor: actor, reason: reason, now: now, isDryRun: false)
                ramp = running
                paused = ", and paused ramp \(running.id)"
            }
            let outcome = try Catalog.setEnabled(
                db, false, feature: trigger.feature, in: trigger.path,
                options: EditOptions(message: "disable \(trigger.feature): \(reason)", actor: actor, time: now))
            guard outcome.isApplied else { return ("nothing: \(trigger.feature) is disabled already" + paused, nil) }
            return ("disabled \(trigger.feature) as revision \(outcome.revision)" + paused, outcome.revision)
        }
    }
}
